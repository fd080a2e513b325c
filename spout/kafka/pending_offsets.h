#ifndef TEMPEST_SPOUT_PENDING_OFFSETS_H_
#define TEMPEST_SPOUT_PENDING_OFFSETS_H_

#include <cstdint>
#include <deque>
#include <optional>

namespace tempest::spout {

// The offsets of one partition that were emitted and are not yet complete,
// kept as a sliding window [base, base + size) of flags. Kafka hands out
// offsets in increasing order, so Add is amortised O(1) at the back, Complete
// is O(1) by index, and the lowest pending offset (the at-least-once commit
// point) is always the window's base: completed offsets at the front are
// dropped immediately. Offsets skipped inside the window (compaction,
// transaction markers) count as complete. Single-threaded: the spout's
// executor thread.
class PendingOffsets {
 public:
  // Marks `offset` pending. An offset below the window's base is already
  // complete and cannot become pending again: returns false. Re-adding a
  // pending offset (a retry) is a no-op that returns true.
  bool Add(int64_t offset);
  // Marks `offset` complete. Returns false if it was not pending.
  bool Complete(int64_t offset);
  bool IsPending(int64_t offset) const;

  // The lowest pending offset, if any.
  std::optional<int64_t> Lowest() const;
  int64_t count() const { return pending_count_; }
  bool empty() const { return pending_count_ == 0; }
  // Forgets everything below `offset` (retention removed those records);
  // returns how many pending offsets were dropped.
  int64_t DropBelow(int64_t offset);
  void Clear();

 private:
  void TrimFront();

  int64_t base_ = 0;
  std::deque<uint8_t> pending_;  // 1 = pending, 0 = complete or never emitted
  int64_t pending_count_ = 0;
  bool started_ = false;  // base_ is meaningful once anything was added
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_PENDING_OFFSETS_H_
