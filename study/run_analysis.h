#ifndef TEMPEST_STUDY_RUN_ANALYSIS_H_
#define TEMPEST_STUDY_RUN_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "study/study_results.h"

namespace tempest::study {

// How the study lays out its input: record `seq` (0..records-1) is sent to
// partition seq % partitions of a fresh topic by one idempotent producer, so
// its offset there is seq / partitions. Pure arithmetic; any thread.
struct RecordLayout {
  int64_t records = 0;
  int partitions = 1;
  int PartitionOf(int64_t seq) const { return static_cast<int>(seq % partitions); }
  int64_t OffsetOf(int64_t seq) const { return seq / partitions; }
  int64_t SeqAt(int partition, int64_t offset) const { return offset * partitions + partition; }
  // How many records partition p holds.
  int64_t CountIn(int partition) const {
    return records / partitions + (partition < records % partitions ? 1 : 0);
  }
};

// Copies of each record a sink received, read from its verifier log(s).
struct DeliveryCounts {
  std::vector<uint32_t> copies;  // indexed by seq
  int64_t unexpected = 0;        // values outside 0..records-1
  int64_t malformed = 0;         // lines that are not a value
};

// Reads verifier logs (plain or deduplicating, bolts/verification_report.h);
// NotFound when a log is missing.
absl::StatusOr<DeliveryCounts> CountDeliveries(const std::vector<std::string>& logs,
                                               int64_t records);

// lost, duplicated, max_copies and replayed from the counts.
void FillDeliveryFigures(const DeliveryCounts& counts, RunResult& run);

// Diffs the final committed offsets (one per partition; -1: unknown) against
// what the sink received: committed_not_processed and processed_not_committed.
void FillOffsetDiff(const DeliveryCounts& counts, const RecordLayout& layout,
                    const std::vector<int64_t>& committed, RunResult& run);

// Records in [from[p], to[p]) of each partition that `counts` does not hold:
// what retention deleted before anyone processed it.
int64_t UnreceivedInRanges(const DeliveryCounts& counts, const RecordLayout& layout,
                           const std::vector<int64_t>& from, const std::vector<int64_t>& to);

// commit_blocked_s, recovery_s and the three throughputs from run.samples and
// the fault times. `production_s` is when the last record was produced.
//
// Recovery: if the sink stops (no new record for `stall_s` while it lacks
// produced records and either commits lag or records were produced since
// its last new one) within the fault window or up to 5 s after the fault
// starts, recovery_s is the time from the fault to the sink's first new
// record after that stall; if it never stops, 0; if it never resumes,
// absent. A sink that receives nothing from the fault on, even one that had
// received nothing before it, has stalled: the throughput chart shows it at
// 0, and recovery_s says how long.
void FillTimeline(RunResult& run, double stall_s = 1.0);

// Why `run` is no evidence about its guarantee, in words ("the fault fired
// at 0.0 s, before any record had reached the sink"), or "" when it did test
// it. Not tested: no samples; nothing produced; nothing delivered; or a fault
// that fired before the sink had received a record or while the sink's
// throughput before it was 0. Reads samples, records, fault_start_s and
// throughput_before, so call it after FillTimeline.
std::string NotTestedReason(const RunResult& run);

// Sets run.not_tested and run.not_tested_reason from NotTestedReason.
void MarkNotTested(RunResult& run);

// An upper bound on the records a spout can have read above the offset it
// later replayed from: the largest commit lag (log end now minus the commit
// seen one sample earlier, an unreadable commit counting as the last one
// read) from the fault on (the whole run without a fault). A replay re-reads
// from a commit at least that recent and cannot have read past the log end,
// so one replay duplicates at most this many records. -1 without samples.
int64_t ReplayBound(const RunResult& run);

// The delivery bounds a graceful change (a rebalance, an upgrade) is held
// to under every guarantee: lost as expected (0), duplicated 0 for
// at-most-once and at most ReplayBound otherwise, the effectively-once
// sink's lost as expected and duplicated 0, and no zombie commits.
std::vector<BoundCheck> DeliveryBounds(const RunResult& run);

// The failed `checks` as violation lines ("lost 4, bound = 0"), leaving out
// those CheckExpectations already reports (zombie commits, the
// effectively-once sink's figures, loss under at-least-once, duplicates
// under at-most-once).
std::vector<std::string> ViolationsNotReportedElsewhere(const RunResult& run,
                                                        const std::vector<BoundCheck>& checks);

// Why a run lost or duplicated what it did, in one sentence naming the
// mechanism and its measured bound ("the spout's session expired, so it
// re-read from its last committed offset; duplicates are bounded by the
// records read since that commit (at most 5000)"), derived from the fault
// kind, the guarantee and the figures. `guide_sections` are the anchors of
// docs/study-guide.md that explain the mechanisms it names.
struct Explanation {
  std::string sentence;
  std::vector<std::string> guide_sections;
};
Explanation ExplainRun(const RunResult& run);

// The expectations of the run's guarantee it broke, in words.
std::vector<std::string> CheckExpectations(const RunResult& run);

// The limits a partition scenario's run is held to.
struct PartitionLimits {
  // The session timeout plus one commit interval: a spout cut from
  // ZooKeeper must have stopped emitting and committing by then.
  double fence_s = 4.5;
  double recover_s = 30;  // from the heal until the sink progresses again
};
// The run's figures against their bounds: lost (at-least-once: = expected),
// duplicated (at-most-once: = 0), the effectively-once sink's lost and
// duplicated (= 0), zombie commits (= 0), time to fence (<= limits.fence_s,
// when fence_expected), time to recover (<= limits.recover_s) and, for the
// nimbus leader, writes after losing leadership (= 0).
std::vector<BoundCheck> CheckBounds(const RunResult& run, const PartitionLimits& limits);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_RUN_ANALYSIS_H_
