#ifndef TEMPEST_WORKER_TRANSFER_H_
#define TEMPEST_WORKER_TRANSFER_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "common/api/ids.h"
#include "worker/ack_lane.h"
#include "worker/envelope.h"
#include "worker/worker_context.h"

namespace tempest::worker {

// The sending side of one executor: its producer handle on the receive queue
// of every executor it may send to, batch buffers for the ack lanes of spout
// executors, and a local list for tuples it sends to its own tasks.
//
// Batching: Send() stages items in the target ring, which publishes every
// ExecutorOptions::batch_size items; Flush(), called by the executor at the
// end of each loop iteration (and so before it ever parks), publishes the
// rest and posts the ack-lane batches. So consumers are woken at most once
// per batch, and nothing an executor sent waits behind its own sleep.
//
// Self-sends (a bolt emitting to its own executor, e.g. a task anchoring to
// a sibling task) go to local() instead of the bounded queue: the executor
// is the only consumer of its queue, so blocking on it would deadlock.
//
// Back pressure: Send() blocks (spin, yield, park) while the target ring is
// full, except for pushes into a closed queue during shutdown, which are
// counted as dropped.
//
// Threads: Connect() on the control thread before the executor starts;
// everything else on the owning executor's thread only.
class Transfer {
 public:
  Transfer(WorkerContext& ctx, Executor* self) : ctx_(ctx), self_(self) {}

  // Registers producers on the queues of the executors of `tasks` and of
  // every acker executor, and the lanes of every spout executor (for
  // ackers). Call once, after every executor has its queue.
  absl::Status Connect(const std::vector<api::TaskId>& tasks, bool to_spout_lanes);

  // A data tuple or acker message for `e.task`.
  void Send(Envelope&& e);
  // An acker message: picks the acker task for e.root (root mod #ackers,
  // Storm's fields grouping on the root id with a simpler hash) and sends.
  void SendToAcker(Envelope&& e) {
    const auto& ackers = ctx_.acker_tasks;
    e.task = ackers[e.root % ackers.size()];
    Send(std::move(e));
  }
  // A reply for spout task `e.task`, buffered until Flush().
  void PostToSpout(Envelope&& e);

  // Publishes everything staged and posts lane batches.
  void Flush();

  // Items sent (queues, lanes, local), for idle detection.
  int64_t sent() const { return sent_; }
  // Items lost because their target queue had closed (shutdown only).
  int64_t dropped() const { return dropped_; }
  std::vector<Envelope>& local() { return local_; }

 private:
  struct Target {
    ExecutorQueue::Producer* producer = nullptr;
    bool self = false;
  };
  struct Lane {
    AckLane* lane = nullptr;
    std::vector<Envelope> batch;
  };
  absl::Status AddTarget(api::TaskId task);

  WorkerContext& ctx_;
  Executor* const self_;
  std::vector<Target> by_task_;  // index: task id
  std::vector<ExecutorQueue::Producer*> producers_;
  std::vector<Lane> lanes_;
  std::vector<int> lane_by_task_;  // index: task id; -1 none
  std::vector<Envelope> local_;
  int64_t sent_ = 0;
  int64_t dropped_ = 0;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_TRANSFER_H_
