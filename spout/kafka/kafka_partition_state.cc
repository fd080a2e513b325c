#include "spout/kafka/kafka_partition_state.h"

#include <algorithm>

namespace tempest::spout {

KafkaPartitionState::KafkaPartitionState(Options options, int64_t committed, int64_t start)
    : options_(options),
      committed_(committed),
      fetched_to_(start),
      emitted_to_(start),
      retry_(options.retry) {}

void KafkaPartitionState::OnFetched(int64_t offset) {
  fetched_to_ = std::max(fetched_to_, offset + 1);
}

void KafkaPartitionState::OnEmitted(int64_t offset) {
  emitted_to_ = std::max(emitted_to_, offset + 1);
  fetched_to_ = std::max(fetched_to_, emitted_to_);
  if (options_.guarantee == ProcessingGuarantee::kAtLeastOnce) pending_.Add(offset);
}

bool KafkaPartitionState::OnAck(int64_t offset) {
  if (!pending_.Complete(offset)) return false;
  retry_.Forget(offset);
  return true;
}

KafkaPartitionState::FailAction KafkaPartitionState::OnFail(int64_t offset,
                                                            core::Clock::TimePoint now) {
  if (!pending_.IsPending(offset)) return FailAction::kIgnore;
  retry_.Failed(offset, now);
  if (retry_.RetryFurther(offset)) return FailAction::kRetry;
  if (options_.has_dead_letter) {
    // Not retried any more; it completes once the dead letter is delivered.
    retry_.Retrying(offset);
    return FailAction::kDeadLetter;
  }
  return FailAction::kRetry;
}

bool KafkaPartitionState::OnDeadLettered(int64_t offset) { return OnAck(offset); }

int64_t KafkaPartitionState::CommitPoint() const {
  if (options_.guarantee == ProcessingGuarantee::kAtLeastOnce) {
    std::optional<int64_t> lowest = pending_.Lowest();
    return lowest.has_value() ? *lowest : emitted_to_;
  }
  return fetched_to_;
}

std::optional<int64_t> KafkaPartitionState::CommitCandidate() const {
  const int64_t point = CommitPoint();
  if (point > committed_) return point;
  return std::nullopt;
}

void KafkaPartitionState::OnCommitted(int64_t offset) { committed_ = std::max(committed_, offset); }

bool KafkaPartitionState::MayEmit(int64_t offset) const {
  return options_.guarantee != ProcessingGuarantee::kAtMostOnce || offset < committed_;
}

KafkaPartitionState::Reposition KafkaPartitionState::OnOutOfRange(int64_t requested, int64_t low,
                                                                  int64_t high,
                                                                  OutOfRangePolicy policy) {
  Reposition r;
  if (policy == OutOfRangePolicy::kFail) {
    r.fail = true;
    r.position = requested;
    return r;
  }
  r.position = policy == OutOfRangePolicy::kEarliest ? low : high;
  r.skipped = std::max<int64_t>(0, r.position - requested);
  if (r.position >= emitted_to_) {
    // In-flight offsets below the new start cannot be re-fetched.
    r.dropped_pending = pending_.DropBelow(r.position);
    retry_.ClearBefore(r.position);
    emitted_to_ = r.position;
  } else {
    // The log restarted below what we emitted (e.g. the topic was
    // re-created): everything in flight refers to records that are gone.
    r.dropped_pending = pending_.count();
    pending_ = PendingOffsets();
    retry_ = RetrySchedule(options_.retry);
    emitted_to_ = r.position;
  }
  fetched_to_ = r.position;
  return r;
}

}  // namespace tempest::spout
