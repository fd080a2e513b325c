#ifndef TEMPEST_WORKER_ACK_LANE_H_
#define TEMPEST_WORKER_ACK_LANE_H_

#include <atomic>
#include <cstddef>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "worker/envelope.h"
#include "worker/event_count.h"

namespace tempest::worker {

// The unbounded control lane into a spout executor: acker replies (ack, fail,
// reset timeout) for the spout's tasks. It is the edge of the ack cycle
// (spout -> bolt -> acker -> spout) that never blocks its producer, which is
// what makes the cycle deadlock-free when data queues are full (see
// docs/adr/0003-executor-queues-and-ack-lane.md). Memory is bounded by the
// number of tracked trees in flight (topology.max.spout.pending per task).
//
// Producers (acker executors) hand over whole batches: one mutex acquisition
// and at most one futex wake per batch, never per message. The consumer (the
// spout executor thread) swaps the whole list out. Thread-safe: Post() from
// any thread, Drain() from the single consumer thread only.
class AckLane {
 public:
  // Moves every element of `batch` into the lane and clears it.
  void Post(std::vector<Envelope>& batch);

  // Swaps the lane's contents into `out` (which must be empty). Returns
  // whether anything was taken. Consumer thread only.
  bool Drain(std::vector<Envelope>& out);

  size_t size() const { return size_.load(std::memory_order_acquire); }
  bool empty() const { return size() == 0; }

  // The consumer parks on this; Post() notifies it. Also used to wake the
  // consumer for control changes (activate, stop).
  EventCount& event() { return event_; }

 private:
  absl::Mutex mu_;
  std::vector<Envelope> items_ ABSL_GUARDED_BY(mu_);
  std::atomic<size_t> size_{0};
  EventCount event_;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_ACK_LANE_H_
