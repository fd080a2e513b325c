#ifndef TEMPEST_STUDY_STUDY_RESULTS_H_
#define TEMPEST_STUDY_STUDY_RESULTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spout/kafka/offsets/offset_journal.h"

namespace tempest::study {

// What a study measured, as plain values. The runner fills these; the report
// (study/report.h) turns them into results.json, report.md and charts.

// One point of a run's time series, sampled every ~200 ms while it runs.
struct Sample {
  double t_s = 0;              // seconds since the run's production started
  int64_t sink_received = 0;   // lines the (plain) sink has made durable so far
  int64_t committed = -1;      // sum over partitions of the committed offsets (-1: unreadable)
  int64_t log_end = 0;         // sum over partitions of the log-end offsets (records produced)
  // Distinct records the sink holds; -1: unknown. Used by the analysis, not
  // written to results.json.
  int64_t sink_distinct = -1;
};

// The effectively-once (deduplicating) sink that at-least-once runs carry
// next to the plain sink.
struct DedupSinkResult {
  int64_t lost = 0;
  int64_t duplicated = 0;    // extra copies it applied (must be 0)
  int64_t deduplicated = 0;  // replays it recognised and dropped
  int64_t expected_loss = 0;  // what retention deleted before this sink received it
};

// The spout's offset commits as its workers' own metrics showed them (the
// tempest_kafka_spout_* and tempest_zk_* series of their heartbeat files,
// read about once a second while the run lasted; counters summed over the
// workers, the rest their largest value).
struct CommitPathFigures {
  int64_t multis = 0;            // commit multis sent (tempest_kafka_spout_zk_multis)
  int64_t failures = 0;          // commits not applied (tempest_kafka_spout_commit_failures)
  int64_t denied = 0;            // refused with NOAUTH (tempest_kafka_spout_commit_denied)
  int64_t coalesced = 0;         // requests replaced by a newer one before being sent
  int64_t pending_max = 0;       // most partitions waiting for the next multi at once
  int64_t in_flight_max = 0;     // most commit multis in flight at once
  int64_t latency_p99_ms = 0;    // commit multi latency, 99th percentile
  int64_t latency_max_ms = 0;    // the slowest commit multi
  int64_t ambiguous_writes = 0;  // writes of the workers' ZooKeeper sessions resolved by read-back
  int64_t readings = 0;          // heartbeat readings these come from (0: none found)
};

// One run of offsets of a partition the sink lost or received more than once,
// and what the spout's offset journal says about it (study/range_explanation.h).
enum class RangeKind { kLost, kDuplicated };
struct RangeExplanation {
  int partition = 0;
  int64_t first = 0;  // offsets, both included
  int64_t last = 0;
  // Lost: the records never received. Duplicated: the extra copies received
  // (so a run's ranges add up to its lost and duplicated figures).
  int64_t count = 0;
  RangeKind kind = RangeKind::kLost;
  // Why, in words: the journal entry's facts, or "not explained by the journal".
  std::string cause;
  std::optional<spout::JournalEntry> entry;  // the entry the cause rests on
};

// One figure of a partition scenario's run against its bound (report.md's
// "Bounds" table, results.json's "bounds").
struct BoundCheck {
  std::string figure;  // "lost", "duplicated", "zombie commits", "time to fence (s)", ...
  std::string value;   // as measured; "n/a" where the figure does not apply
  std::string bound;   // "= 0", "<= 4.5", "none"
  bool pass = true;
};

// rebalance-under-load: what the two rebalances of the pipeline did to its
// workers and its output (study/rebalance_figures.h).
struct RebalanceFigures {
  int64_t workers_before = 0;    // the pipeline's workers before the first rebalance
  int64_t restarted = 0;         // of those, the ones whose process was gone at the end
  int64_t kept = 0;              // ... still the same process at the end
  int64_t applied = 0;           // rebalances whose assignment every worker came to run (of 2)
  std::vector<double> settle_s;  // per rebalance: from the command until every worker ran it
  std::vector<double> moved_at_s;  // per rebalance: when its command ran (s since production began)
  // Per rebalance: the longest output gap from its command until the next
  // one's (the last: until the end).
  std::vector<double> gaps_s;
  // The longest time the sink received nothing while produced records
  // waited for it, from the first rebalance on; absent without samples or
  // without a rebalance.
  std::optional<double> output_gap_s;
};

// upgrade-under-load: what `tempest upgrade` to the pipeline's copy did.
struct UpgradeFigures {
  int64_t applied = 0;  // 1 once the command finished and the copy was activated
  double at_s = 0;      // when the command ran (s since production began)
  double took_s = 0;    // how long the command ran
  // The command's own figures from its last line: the output gap it
  // reports (from the old topology's kill to the copy's activation) and the
  // drain within it; absent when it did not finish.
  std::optional<double> command_gap_s;
  std::optional<double> drain_s;
  // The longest time the sink received nothing while produced records
  // waited for it, from the upgrade on; absent without samples.
  std::optional<double> output_gap_s;
};

// One scenario under one delivery guarantee.
struct RunResult {
  std::string scenario;
  std::string guarantee;  // at-least-once | at-most-once | no-guarantee
  std::string fault;      // the scenario's fault kind, for the report
  int64_t records = 0;    // produced

  // The sorted input diffed against what the plain sink received.
  int64_t lost = 0;        // records never received
  int64_t duplicated = 0;  // extra copies received (received - unique)
  int64_t max_copies = 0;  // most copies of one record
  int64_t replayed = 0;    // distinct records received more than once

  // The committed offsets diffed against what the sink saw, and watched.
  int64_t offset_regressions = 0;       // a partition's committed offset seen going down
  int64_t committed_not_processed = 0;  // below the final commit, never received
  int64_t processed_not_committed = 0;  // received, at or above the final commit
  double commit_blocked_s = 0;          // longest time commits stood still with lag > 0
  // Commits the offset journal shows made by a session after another
  // session had acquired the partition (a fenced owner still writing).
  int64_t zombie_commits = 0;

  // Timing, in seconds since production started. Absent for no fault.
  std::optional<double> fault_planned_s;  // from the seed
  std::optional<double> fault_start_s;    // when it was injected
  bool fault_held_for_flow = false;       // injected late: the sinks had received nothing yet
  std::optional<double> fault_end_s;      // when it was healed
  std::optional<double> recovery_s;       // fault start -> sink progressing again
  double throughput_before = 0;           // sink records/s before the fault
  double throughput_during = 0;           // ... from the fault until recovery
  double throughput_after = 0;            // ... from recovery until the last record

  // Partition scenarios (multi-host). fence_expected: this run's spout ran
  // on a host cut from ZooKeeper (partition-spout-zk, -supervisor-host), or
  // its nimbus led (partition-nimbus-leader), so it had to fence itself;
  // fence_s: seconds from the cut until it did (the spout logged that it
  // stopped emitting; the nimbus that it is not the leader); absent if it
  // never did while the fault lasted.
  bool fence_expected = false;
  std::optional<double> fence_s;
  // Seconds from the heal until the sink progressed again (0: it was not
  // stalled then) or, if it never did, until production was over and the
  // spout had committed as far as it ever would (nothing outstanding);
  // absent if neither happened.
  std::optional<double> recover_s;
  // partition-nimbus-leader: state changes (assigned, removed, rebalanced)
  // the old leader logged after it had lost leadership.
  std::optional<int64_t> leader_writes_after_loss;
  // partition scenarios, rebalance-under-load and upgrade-under-load only
  std::vector<BoundCheck> bounds;

  int64_t expected_loss = 0;  // retention-past-offset: the deleted, unprocessed range
  bool quiesced = true;       // everything settled before the run's deadline
  std::optional<DedupSinkResult> dedup_sink;  // at-least-once runs only
  std::optional<CommitPathFigures> commit_path;  // absent when no worker metrics were read
  std::optional<RebalanceFigures> rebalance;     // rebalance-under-load only
  std::optional<UpgradeFigures> upgrade;         // upgrade-under-load only
  // A run that is no evidence either way: the fault fired before any record
  // had reached the sink, or nothing was measured (no samples, nothing
  // produced or delivered). Its figures hold vacuously, so the study's
  // verdict fails (see NotTestedReason in study/run_analysis.h).
  bool not_tested = false;
  std::string not_tested_reason;  // why, in words; empty when tested
  // Each expectation of the guarantee that this run broke, in words
  // ("at-least-once lost 3 records"). Empty: as expected.
  std::vector<std::string> violations;
  // The lost and duplicated offset ranges, each explained from the journal;
  // at most kMaxExplainedRanges, the largest, and how many more there were.
  std::vector<RangeExplanation> ranges;
  int64_t ranges_omitted = 0;
  std::vector<Sample> samples;
};

struct StudyResults {
  uint64_t seed = 0;
  int64_t records = 0;  // per run
  double rate = 0;      // records/s produced
  std::string started_at;  // ISO 8601 UTC
  double duration_s = 0;   // the whole study
  std::vector<RunResult> runs;
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_STUDY_RESULTS_H_
