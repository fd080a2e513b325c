#ifndef TEMPEST_WORKER_ITERATION_BUDGET_H_
#define TEMPEST_WORKER_ITERATION_BUDGET_H_

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace tempest::worker {

// How many items (a bolt's drain batch, a spout task's NextTuple burst) one
// executor loop iteration may take on, so that an iteration of a slow
// component stays near kTarget of real time.
//
// Why: an executor publishes its statistics counts, hands on what it emitted
// and sends its acks once per loop iteration. With a fixed batch, a bolt
// taking 40 ms a tuple spent 256 x 40 ms = 10 s in one iteration, so its
// counts (and its output) arrived in steps of 256 every 10 s. Sizing the
// batch from the time the previous ones took keeps a fast executor at its
// full batch (the per-tuple path gains no clock read) and gives a slow one
// batches of what fits in kTarget, down to one item.
//
// Starts at one item and doubles after each full batch that took less than
// half of kTarget, so a fast executor reaches `max` within a few iterations.
// Executor thread only.
class IterationBudget {
 public:
  static constexpr std::chrono::milliseconds kTarget{200};

  explicit IterationBudget(size_t max) : max_(std::max<size_t>(1, max)) {}

  size_t size() const { return size_; }
  size_t max() const { return max_; }

  // An iteration handled `items` (at most size()) in `took` without waiting
  // for input in between.
  void Observe(size_t items, std::chrono::nanoseconds took) {
    if (items == 0) return;
    if (took.count() <= 0) {
      if (items >= size_) size_ = std::min(max_, size_ * 2);
      return;
    }
    // The items that fit in kTarget at the speed just seen.
    const double fit = static_cast<double>(items) *
                       static_cast<double>(std::chrono::nanoseconds(kTarget).count()) /
                       static_cast<double>(took.count());
    if (fit < static_cast<double>(size_)) {
      size_ = std::max<size_t>(1, static_cast<size_t>(fit));
    } else if (items >= size_ && fit >= 2.0 * static_cast<double>(size_)) {
      size_ = std::min(max_, size_ * 2);
    }
  }

  // A cheap real monotonic reading (CLOCK_MONOTONIC_COARSE: a vDSO read, no
  // system call, a few ms of resolution, which is plenty against kTarget).
  // Real time on purpose: statistics are read on the real clock even when a
  // test drives the executors with simulated time.
  static std::chrono::nanoseconds CoarseNow() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }

 private:
  const size_t max_;
  size_t size_ = 1;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_ITERATION_BUDGET_H_
