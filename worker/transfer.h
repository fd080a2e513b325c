#ifndef TEMPEST_WORKER_TRANSFER_H_
#define TEMPEST_WORKER_TRANSFER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/api/ids.h"
#include "common/net/batch.h"
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
// Remote tasks (WorkerContext::remote, a Worker running part of a topology):
// Send() encodes the envelope (EnvelopeCodec) into this executor's net::Batch
// for the destination worker; Flush() (or a batch reaching
// RemoteOutbox::max_batch_bytes()) hands it to that worker's RemoteOutbox, blocking while
// the connection's send queue is full. Acker replies to remote spout tasks
// (PostToSpout) go into a separate batch that is sent without ever waiting:
// a refused batch joins an unbounded overflow retried on every Flush(), so
// an acker never blocks (docs/adr/0010-worker-data-plane.md).
//
// Routes that change while running (Worker::UpdateRemoteWorkers): the
// Transfer follows a new RemoteRoutes snapshot on its own thread, at the
// next remote send or Flush, after publishing what it had staged. Likewise
// a new LocalRoutes snapshot (local tasks regrouped into other executors,
// LocalCluster::Regroup), at the end of the next Flush; local_version()
// then says it no longer sends to the executors the old one named.
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
  // A data tuple for `task`, given by its parts. To a task of another worker
  // it is encoded straight into that worker's batch, without building the
  // tuple, and `values` is left as it was; otherwise the tuple is built with
  // `values`, moved when `take_values`, else copied.
  //
  // `init`, for a spout's tracked tuple: the tree's ack-init, which the
  // tuple carries (api::Tuple::CarryInit) when `task` runs in this worker.
  // Returns whether it did; if not, the spout must send the init itself.
  // Only tuples that stay in this process carry one, so nothing about it
  // reaches the wire or another worker's version of the runtime.
  struct CarriedInit {
    uint64_t xor_of_edges = 0;
    int32_t spout_task = 0;
  };
  bool SendTuple(int32_t task, const std::shared_ptr<const api::StreamSchema>& schema,
                 api::TaskId source, api::Values& values, bool take_values,
                 api::TupleAnchors&& anchors, const CarriedInit* init = nullptr);
  // An acker message: picks the acker task for e.root (root mod #ackers,
  // Storm's fields grouping on the root id with a simpler hash) and sends.
  void SendToAcker(Envelope&& e) {
    const auto& ackers = ctx_.acker_tasks;
    const size_t n = ackers.size();
    // Exactly root % n, but a mask when n is a power of two (one acker, most
    // often): a 64-bit division costs tens of cycles on every acking message.
    e.task = ackers[(n & (n - 1)) == 0 ? e.root & (n - 1) : e.root % n];
    Send(std::move(e));
  }
  // A reply for spout task `e.task`, buffered until Flush().
  void PostToSpout(Envelope&& e);

  // Publishes everything staged and posts lane batches. `idle`: the
  // executor is about to park, so connections it handed data to since the
  // last idle flush write now instead of waiting for their coalescing delay
  // (low latency at low rates; at high rates executors rarely park and
  // batches coalesce).
  void Flush(bool idle = false);

  // Items sent (queues, lanes, local), for idle detection. Excludes items
  // for remote tasks (remote_sent()), which other processes consume.
  int64_t sent() const { return sent_; }
  int64_t remote_sent() const { return remote_sent_; }
  // Acker replies waiting in the overflow for a full remote connection.
  size_t remote_overflow() const;
  // Items lost because their target queue had closed (shutdown only).
  int64_t dropped() const { return dropped_; }
  std::vector<Envelope>& local() { return local_; }
  // Any thread: the LocalRoutes version this Transfer sends by.
  int64_t local_version() const { return local_version_.load(std::memory_order_acquire); }

  // A remote data batch is handed over early once it holds this many bytes.
  static constexpr size_t kRemoteBatchBytes = 64 << 10;

 private:
  struct Target {
    ExecutorQueue::Producer* producer = nullptr;
    int remote = -1;  // index into remote_ (and RemoteRoutes::outboxes)
    bool self = false;
  };
  struct Remote {
    net::Batch data;
    net::Batch replies;
    std::vector<net::Batch> overflow;  // replies refused by a full connection, oldest first
    bool unkicked = false;             // handed data over since the last idle flush
  };
  void SendRemote(int worker, Envelope&& e);
  // Appends one message for `task` to `worker`'s batch:
  // `encode(const EnvelopeCodec&, std::string& out)` appends its bytes.
  template <typename Encode>
  void EncodeToRemote(int worker, int32_t task, Encode&& encode);
  // Switches to the worker's current RemoteRoutes snapshot if it changed;
  // true if it did (remote targets re-resolved).
  bool FollowRoutes();
  void FlushRemoteData(Remote& r, int worker);
  void FlushRemoteReplies(Remote& r, int worker);
  struct Lane {
    AckLane* lane = nullptr;
    std::vector<Envelope> batch;
  };
  absl::Status AddTarget(api::TaskId task);
  // This Transfer's producer on `owner`'s queue, registered on first use.
  absl::StatusOr<ExecutorQueue::Producer*> ProducerFor(Executor* owner);
  // Re-resolves the local targets by the current LocalRoutes (Flush, after
  // publishing what was staged) and acknowledges its version.
  void FollowLocal();

  WorkerContext& ctx_;
  Executor* const self_;
  std::vector<Target> by_task_;                      // index: task id
  std::vector<ExecutorQueue::Producer*> producers_;  // the ones by_task_ uses
  // Every producer registered, by target executor (kept across regroupings:
  // a queue takes a bounded number of producers).
  std::vector<std::pair<Executor*, ExecutorQueue::Producer*>> registered_;
  const LocalRoutes* local_routes_ = nullptr;
  std::atomic<int64_t> local_version_{0};
  std::vector<Lane> lanes_;
  std::vector<int> lane_by_task_;  // index: task id; -1 none
  std::vector<Envelope> local_;
  // The routes snapshot this Transfer follows (WorkerContext::remote when
  // it last looked; nullptr when every task is local).
  const RemoteRoutes* routes_ = nullptr;
  std::vector<Remote> remote_;  // index: RemoteRoutes::outboxes
  int64_t sent_ = 0;
  int64_t remote_sent_ = 0;
  int64_t dropped_ = 0;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_TRANSFER_H_
