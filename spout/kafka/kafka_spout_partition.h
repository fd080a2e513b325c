#ifndef TEMPEST_SPOUT_KAFKA_SPOUT_PARTITION_H_
#define TEMPEST_SPOUT_KAFKA_SPOUT_PARTITION_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/core/clock.h"
#include "common/core/rate_limited_log.h"
#include "common/kafka/kafka_reader.h"
#include "spout/kafka/kafka_partition_state.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/kafka_spout_metrics.h"
#include "spout/kafka/offsets/offset_store.h"
#include "spout/kafka/offsets/partition_assignment.h"
#include "spout/kafka/record_window.h"

namespace tempest::spout {

// One partition as KafkaSpout::Stats reports it.
struct KafkaSpoutPartitionStats {
  bool owned = false;   // acquired and fetching (or paused)
  bool paused = false;  // stopped at the uncommitted limit
  bool failed = false;  // stopped by outOfRangePolicy=fail
  int64_t committed = -1;
  int64_t emitted_to = -1;
  int64_t pending = 0;
  int64_t lost = 0;  // offsets skipped by out-of-range repositioning
  int64_t dropped_pending = 0;
  int64_t dead_lettered = 0;
  int64_t acquisitions = 0;         // how often ownership was (re)acquired
  int64_t rewinds = 0;              // fenced moves applied on request (tempest offsets set)
  int64_t stored_out_of_range = 0;  // stored offsets found outside the log
};

// Everything a KafkaSpout task keeps about one partition it was assigned,
// across ownerships: its phase (unowned, resolving its start, active,
// stopped by policy) and ownership epoch, the offset bookkeeping of the
// current ownership (a KafkaPartitionState) and its record window, the
// fetch state (fetching, paused at the uncommitted limit, repositioning
// after an out-of-range fetch), the commit in flight and the journal entries
// for the next one, a fenced rewind in progress, its log end and gauges,
// and the throttles of the lines it writes.
//
// No I/O: the spout asks it what to do and does it (starts and stops
// fetches, posts commits, writes the lines). Single-threaded: the spout's
// executor. Kept for the life of the task, by slot (the slot and epoch go
// into every tuple id, so a late ack of an older ownership finds nothing).
class KafkaSpoutPartition {
 public:
  enum class Phase { kUnowned, kResolving, kActive, kFailed };

  // A fenced move requested by `tempest offsets set` (or made for a stored
  // offset beyond the log end): the owner's write, then a release and a
  // re-acquisition that re-reads the moved offset.
  enum class RewindStage { kNone, kWriting, kReleasing, kReacquiring };
  // What a rewind in progress makes of a store update.
  enum class RewindVerdict {
    kNotTaken,       // handle the update as usual
    kTaken,          // consumed; nothing else to do
    kTakenReassign,  // consumed; hand the store the assignment again
  };

  // Why a commit cannot move on, when the throttled warning is due.
  struct BlockedCommit {
    int64_t offset = -1;
    int64_t seconds = 0;
    int failures = 0;
    int64_t pending = 0;
  };

  KafkaSpoutPartition(TopicPartition tp, int slot, KafkaPartitionMetrics metrics,
                      const core::Clock& clock);

  const TopicPartition& tp() const { return tp_; }
  int slot() const { return slot_; }
  uint32_t epoch() const { return epoch_; }
  Phase phase() const { return phase_; }
  // Owned with its start known: it fetches, emits and commits.
  bool active() const { return phase_ == Phase::kActive && state_.has_value(); }
  // Active, or stopped by outOfRangePolicy=fail: it has a position.
  bool positioned() const { return phase_ == Phase::kActive || phase_ == Phase::kFailed; }
  bool assigned() const { return assigned_; }
  void set_assigned(bool assigned) { assigned_ = assigned; }
  const std::optional<StormKafkaOffset>& stored() const { return stored_; }
  // The offset bookkeeping of this ownership; null until its start is known.
  KafkaPartitionState* state() { return state_.has_value() ? &*state_ : nullptr; }
  const KafkaPartitionState* state() const { return state_.has_value() ? &*state_ : nullptr; }
  // Fetched records not yet emitted, then (AT_LEAST_ONCE) the payloads of
  // emitted ones until acked or dead-lettered, for retries.
  RecordWindow& window() { return window_; }
  const RecordWindow& window() const { return window_; }
  bool fetching() const { return fetching_; }
  bool repositioning() const { return repositioning_; }
  int64_t end_offset() const { return end_offset_; }
  KafkaSpoutPartitionStats Stats() const;

  // --- Ownership ---
  // The store acquired it; its start is resolved next.
  void Acquired(uint64_t acquisition, std::optional<StormKafkaOffset> stored);
  // The first acquisition of this task's life (a missing offset then deserves a word).
  bool first_acquisition() const { return totals_.acquisitions == 1; }
  // Whether a start resolution tagged `acquisition` is the one awaited.
  bool AwaitsStart(uint64_t acquisition) const {
    return phase_ == Phase::kResolving && acquisition_ == acquisition;
  }
  // The start is known: a fresh ownership from `committed`, fetching from
  // `start`; `log_end` as the leader said, which a stopAtEnd run ends at.
  void Start(const KafkaPartitionState::Options& options, int64_t committed, int64_t start,
             int64_t log_end, std::pair<std::string, int> leader);
  // Offsets emitted and not yet acked.
  int64_t InFlight() const { return state_.has_value() ? state_->pending().count() : 0; }
  // Ownership gone: everything of this ownership is forgotten (the next
  // owner meets the same resets and failures again) and the epoch moves on,
  // so late acks and fails of the old one find nothing.
  void Disown();
  // Stopped under outOfRangePolicy=fail.
  void StopByPolicy();
  bool OfEpoch(uint32_t epoch) const { return epoch_ == epoch; }

  // --- Fetching ---
  // A record from Kafka, kept in the window unless it is not wanted (not
  // fetching, taken already, past the end of a stopAtEnd run, or over the
  // uncommitted limit: fetched again on resume). True when the partition is
  // at or over its uncommitted limit.
  bool TakeFetched(const kafka::KafkaRecord& record, bool stop_at_end);
  // Whether fetching may be started or stopped now (not while repositioning).
  bool FetchControllable() const { return active() && !repositioning_; }
  // Not at the end of a stopAtEnd run and under the uncommitted limit.
  bool WantsFetch(bool stop_at_end) const;
  bool OverUncommittedLimit() const { return state_->OverUncommittedLimit(); }
  // Fetching (re)started; true if this ends a pause at the uncommitted limit.
  bool FetchStarted();
  // Fetching stopped; true if this starts a pause at the uncommitted limit.
  bool FetchStopped(bool over_limit);

  // --- Out of range ---
  // An out-of-range fetch: true if the partition now waits for the log's
  // watermarks (false when not fetching or already waiting).
  bool BeginReposition();
  // Whether watermarks tagged `epoch` answer the repositioning awaited.
  bool AwaitsWatermarks(uint64_t epoch) const {
    return active() && repositioning_ && epoch == epoch_;
  }
  // The log holds [low, high) and `requested` is outside: moved under
  // `policy` (or stopped), with the move journaled for the next commit.
  KafkaPartitionState::Reposition Reposition(int64_t requested, int64_t low, int64_t high,
                                             OutOfRangePolicy policy);

  // --- Log end and gauges ---
  void SawLogEnd(int64_t log_end) { log_end_ = std::max(log_end_, log_end); }
  // Fetches carry the log end only while the partition is fetched, so the
  // leader is asked now and then: true when a query should go out now.
  bool LogEndQueryDue(core::Clock::TimePoint now);
  // The leader's answer to that query, tagged with the epoch it was asked in.
  void OnLogEndAnswer(bool ok, uint64_t epoch, int64_t log_end);
  // Lag in time: the newest fetched record's timestamp minus the first
  // uncommitted record's; 0 when caught up, -1 unknown. Active only.
  int64_t LagMillis();
  // Log end, lag, commit position and commit-blocked gauges; the blocked
  // commit when its (throttled) warning is due. Active only.
  std::optional<BlockedCommit> UpdateGauges(core::Clock::TimePoint now);
  // Throttles the line about a stored offset that cannot be used.
  bool AllowReadErrorLine() { return read_error_log_.Allow(); }

  // --- Commits ---
  // The commit to request now, if the commit point moved past what is
  // committed or requested; the journal entries go with it.
  std::optional<OffsetCommit> TakeCommit(const std::string& topology_id,
                                         const std::string& topology_name);
  // storm-kafka's node for this partition at `offset`, naming its leader.
  StormKafkaOffset NodeAt(int64_t offset, const std::string& topology_id,
                          const std::string& topology_name) const;
  // The store stored `offset`; false when no ownership takes it.
  bool Committed(int64_t offset);
  // A commit round failed: nothing is in flight, and AT_MOST_ONCE asks
  // again from `retry_at`.
  void CommitFailed(core::Clock::TimePoint retry_at);
  bool commit_in_flight() const { return commit_in_flight_; }
  // AT_MOST_ONCE: whether a commit may be requested now.
  bool AtMostOnceCommitDue(core::Clock::TimePoint now) const {
    return assigned_ && !commit_in_flight_ && now >= amo_retry_at_;
  }

  // --- Acks, fails, dead letters ---
  void Ack(int64_t offset);
  // The dead-letter topic has the record: its offset completes and the
  // move is journaled. The failures it had, or nullopt if it was not pending.
  std::optional<int64_t> DeadLettered(int64_t offset, const std::string& dead_letter_topic);
  // stopAtEnd: every record up to the end was emitted, acked and committed.
  bool DoneAtEnd() const;

  // --- Rewinds ---
  bool rewinding() const { return rewind_.stage != RewindStage::kNone; }
  bool rewind_writing() const { return rewind_.stage == RewindStage::kWriting; }
  // Released to the store for a rewind: left out of the store's assignment.
  bool released_for_rewind() const { return rewind_.stage == RewindStage::kReleasing; }
  // The owner writes `target` (a fenced move); the partition is not owned
  // meanwhile.
  void BeginRewind(int64_t target, core::Clock::TimePoint now);
  // A stored offset beyond the log end is being moved to `position` in the
  // store; the partition waits for it unowned.
  void AwaitMove(int64_t position, core::Clock::TimePoint now);
  // The write was answered (`applied` or not); true when the partition is
  // now released to the store (hand it the assignment again).
  bool RewindWritten(bool applied, core::Clock::TimePoint now);
  // After a release the store has surely seen: true when the partition is
  // now to be re-acquired (hand the store the assignment again).
  bool ReleaseWaitOver(core::Clock::TimePoint now);
  RewindVerdict TakeForRewind(OffsetStoreUpdate::Kind kind,
                              const std::optional<StormKafkaOffset>& stored,
                              core::Clock::TimePoint now);
  void ForgetRewind() { rewind_ = Rewind{}; }
  void CountRewind() { totals_.rewinds++; }
  void CountStoredOutOfRange();

 private:
  struct Rewind {
    RewindStage stage = RewindStage::kNone;
    int64_t target = -1;  // -1: not applied, accept any re-acquisition
    int cycles = 0;
    core::Clock::TimePoint since{};
  };

  TopicPartition tp_;
  int slot_ = 0;
  uint32_t epoch_ = 0;
  bool assigned_ = false;
  Phase phase_ = Phase::kUnowned;
  uint64_t acquisition_ = 0;
  std::optional<StormKafkaOffset> stored_;  // as read at acquisition
  std::optional<KafkaPartitionState> state_;
  RecordWindow window_;
  bool fetching_ = false;
  bool paused_ = false;
  bool repositioning_ = false;
  int64_t end_offset_ = -1;  // log end at acquisition (stopAtEnd)
  int64_t log_end_ = -1;
  // The next time the gauges ask the leader for the log end, and whether
  // an answer is still due.
  core::Clock::TimePoint next_log_end_query_{};
  bool log_end_query_due_ = false;
  int64_t newest_timestamp_ms_ = -1;  // of the newest record fetched (lag in time)
  std::pair<std::string, int> leader_{"", 0};
  bool commit_in_flight_ = false;
  int64_t requested_commit_ = -1;
  // Journal entries (resets, dead letters) sent with the next commit.
  std::vector<JournalEntry> journal_;
  core::Clock::TimePoint amo_retry_at_{};
  int64_t blocked_offset_ = -1;
  core::Clock::TimePoint blocked_since_{};
  core::RateLimitedLog blocked_log_;     // "commit blocked by offset", while it lasts
  core::RateLimitedLog read_error_log_;  // a stored offset that cannot be used
  Rewind rewind_;
  KafkaSpoutPartitionStats totals_;
  KafkaPartitionMetrics metrics_;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_SPOUT_PARTITION_H_
