#ifndef TEMPEST_SPOUT_KAFKA_PARTITION_STATE_H_
#define TEMPEST_SPOUT_KAFKA_PARTITION_STATE_H_

#include <cstdint>
#include <optional>

#include "common/core/clock.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/pending_offsets.h"
#include "spout/kafka/retry_schedule.h"

namespace tempest::spout {

// The offset bookkeeping of one owned partition: what is committed, fetched,
// emitted and pending, and the rules built on them (the commit point per
// processing guarantee, never moving a commit backwards, the uncommitted
// limit, retry / dead-letter decisions and the out-of-range policy). Pure
// logic, no I/O, so every rule is unit-tested without Kafka or ZooKeeper.
//
// One instance per ownership epoch of a partition: when ownership is lost
// the KafkaSpout throws it away (late acks then find nothing) and builds a
// new one from the re-read offset. Single-threaded: the spout's executor.
//
// Positions are "next offset" positions, like Kafka's and storm-kafka's:
//   committed   the offset stored in ZooKeeper (resume point)
//   fetched_to  one past the last record taken from Kafka
//   emitted_to  one past the last record emitted for the first time
class KafkaPartitionState {
 public:
  struct Options {
    ProcessingGuarantee guarantee = ProcessingGuarantee::kAtLeastOnce;
    RetryOptions retry;
    int64_t max_uncommitted = kDefaultMaxUncommittedOffsets;
    bool has_dead_letter = false;
  };

  // `committed`: the offset ZooKeeper holds (or `start` when it holds none);
  // `start`: the first offset to fetch.
  KafkaPartitionState(Options options, int64_t committed, int64_t start);

  int64_t committed() const { return committed_; }
  int64_t fetched_to() const { return fetched_to_; }
  int64_t emitted_to() const { return emitted_to_; }
  const PendingOffsets& pending() const { return pending_; }

  // A record was taken from Kafka (not yet emitted).
  void OnFetched(int64_t offset);
  // The record at `offset` was emitted for the first time. With
  // AT_LEAST_ONCE it becomes pending until acked.
  void OnEmitted(int64_t offset);
  // Returns false for an offset that is not pending (late or duplicate ack).
  bool OnAck(int64_t offset);

  enum class FailAction {
    kIgnore,      // not pending (late fail after a loss or a repositioning)
    kRetry,       // scheduled again with backoff
    kDeadLetter,  // past retryLimit: send to the dead-letter topic
  };
  // Without a dead-letter topic a tuple past its retry limit keeps being
  // retried at the maximum delay: it is never acked past silently.
  FailAction OnFail(int64_t offset, core::Clock::TimePoint now);
  // A failed offset whose backoff has expired, if any.
  std::optional<int64_t> NextRetry(core::Clock::TimePoint now) const { return retry_.NextDue(now); }
  void Retrying(int64_t offset) { retry_.Retrying(offset); }
  // The dead-letter producer confirmed delivery: the offset is complete.
  bool OnDeadLettered(int64_t offset);
  int RetryFailures(int64_t offset) const { return retry_.Failures(offset); }
  const RetrySchedule& retry_schedule() const { return retry_; }

  // The offset a commit would write now: AT_LEAST_ONCE the lowest pending
  // offset, else emitted_to; otherwise the fetched position.
  int64_t CommitPoint() const;
  // The commit point if it is ahead of what is committed (never backwards).
  std::optional<int64_t> CommitCandidate() const;
  // ZooKeeper confirmed `offset`; ignored if it is not ahead.
  void OnCommitted(int64_t offset);

  // Offsets taken from Kafka whose progress is not yet committed.
  int64_t Uncommitted() const { return fetched_to_ - committed_; }
  // Stop fetching while at or over the limit; resume once commits catch up.
  bool OverUncommittedLimit() const { return Uncommitted() >= options_.max_uncommitted; }
  // AT_MOST_ONCE emits a record only once its commit covers it.
  bool MayEmit(int64_t offset) const;

  struct Reposition {
    bool fail = false;            // policy kFail: stop the partition
    int64_t position = 0;         // where to fetch next
    int64_t skipped = 0;          // offsets jumped over (lost)
    int64_t dropped_pending = 0;  // in-flight offsets given up
  };
  // The offset `requested` is out of range; the log holds [low, high).
  Reposition OnOutOfRange(int64_t requested, int64_t low, int64_t high, OutOfRangePolicy policy);

 private:
  Options options_;
  int64_t committed_;
  int64_t fetched_to_;
  int64_t emitted_to_;
  PendingOffsets pending_;
  RetrySchedule retry_;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_PARTITION_STATE_H_
