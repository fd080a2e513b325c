#ifndef TEMPEST_WORKER_REMOTE_RECEIVER_H_
#define TEMPEST_WORKER_REMOTE_RECEIVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/core/metrics_registry.h"
#include "common/core/rate_limited_log.h"
#include "common/net/batch.h"
#include "common/net/transport_server.h"
#include "worker/ack_lane.h"
#include "worker/envelope.h"
#include "worker/envelope_codec.h"
#include "worker/worker_context.h"

namespace tempest::worker {

// The receiving end of a worker: decodes each message the TransportServer
// hands over and delivers it to the local executor running its task, through
// one ReceiveQueue Producer per local bolt/acker executor (registered for the
// network thread) or, for spout tasks, the spout's AckLane.
//
// Never blocks the event loop: when a target ring is full, the rest of the
// frame is decoded into that connection's backlog and OnFrame returns false,
// which pauses the connection (TCP back pressure reaches the sender).
// RetryPaused() (posted to the loop by the Worker's resume timer) delivers
// backlogs as room appears and resumes the connections whose backlog is
// empty. Malformed messages and messages for tasks this worker does not run
// are counted and logged (rate-limited) and skipped.
//
// Local tasks regrouped into other executors (LocalCluster::Regroup): the
// receiver follows the new LocalRoutes at its next frame, retry or
// FollowLocal(), between frames (nothing staged), so a paused connection's
// backlog goes to the executor that runs its task now.
//
// Tasks that left this worker (a rebalance moved their bolt executors to
// another worker, LocalCluster::Regroup with publish_remote): a message for
// one, from a sender still on the old routes, is forwarded to the worker
// the current RemoteRoutes name for it (counted in
// tempest_worker_messages_forwarded_total), never blocking: when that
// connection's queue is full the message waits in the connection's backlog
// as for a full ring (docs/adr/0035-tasks-leave-a-worker-in-place.md).
// Messages for tasks this worker never ran are skipped as before, so a
// message cannot bounce between workers that disagree.
//
// Threads: Create on the control thread before executors start; OnFrame,
// RetryPaused and FollowLocal on the event-loop thread only; counters and
// local_version() from any thread.
class RemoteReceiver {
 public:
  // Registers the network producers on every local queue of `ctx`.
  // `delivered` (owned by the caller, read by the idle check) is set to the
  // number of messages put into local queues and lanes so far.
  static absl::StatusOr<std::unique_ptr<RemoteReceiver>> Create(WorkerContext& ctx,
                                                                const EnvelopeCodec& codec,
                                                                std::atomic<int64_t>* delivered);

  // The TransportServer callback.
  bool OnFrame(net::ConnectionId id, std::span<const net::Message> messages);
  // Loop thread: delivers backlogs; resumes connections through `server`.
  void RetryPaused(net::TransportServer& server);
  // Loop thread: switches to the current LocalRoutes if it changed.
  void FollowLocal() {
    if (ctx_.local.load(std::memory_order_acquire) != local_routes_) SwitchLocal();
  }
  // The LocalRoutes version the receiver delivers by (any thread).
  int64_t local_version() const { return local_version_.load(std::memory_order_acquire); }
  // Some connection is paused, or forwarded messages wait for room (any
  // thread): RetryPaused has work.
  bool has_paused() const {
    return paused_count_.load(std::memory_order_acquire) > 0 || forward_waiting();
  }
  // Forwarded messages wait for room in their connection (any thread).
  bool forward_waiting() const { return forward_waiting_.load(std::memory_order_acquire); }

  // Messages put into local queues/lanes (for the worker's idle check).
  int64_t delivered() const { return delivered_->load(std::memory_order_acquire); }
  int64_t unknown_task() const { return unknown_task_->Value(); }
  int64_t malformed() const { return malformed_->Value(); }
  // Messages for tasks that left, sent on to their new worker.
  int64_t forwarded() const { return forwarded_->Value(); }

 private:
  RemoteReceiver(WorkerContext& ctx, const EnvelopeCodec& codec, std::atomic<int64_t>* delivered);

  enum class Result { kDelivered, kFull, kSkipped };
  Result Deliver(Envelope& e);
  // Deliver's case of a task that left this worker.
  Result Forward(Envelope& e);
  // Hands forward_[worker] to its connection if there is room; whether it
  // is empty now.
  bool SendForward(const RemoteRoutes& routes, size_t worker);
  // Resolves producer_by_task_ and lane_by_task_ by the current LocalRoutes.
  absl::Status Resolve();
  void SwitchLocal();
  // Publishes staged ring items and posts collected lane batches.
  void FlushOutputs();
  void NoteBad(const char* what, int32_t task, const absl::Status& why);

  WorkerContext& ctx_;
  const EnvelopeCodec& codec_;
  // Index: task id.
  std::vector<ExecutorQueue::Producer*> producer_by_task_;
  std::vector<int> lane_by_task_;  // index into lanes_, -1 none
  struct Lane {
    AckLane* lane = nullptr;
    std::vector<Envelope> batch;
  };
  std::vector<Lane> lanes_;
  std::vector<ExecutorQueue::Producer*> producers_;
  // Every producer registered, by target executor (kept across regroupings).
  std::map<Executor*, ExecutorQueue::Producer*> by_executor_;
  const LocalRoutes* local_routes_ = nullptr;
  std::atomic<int64_t> local_version_{0};
  // Index: task id; the task ran here under an earlier LocalRoutes and no
  // longer does.
  std::vector<bool> left_;
  // Messages being forwarded, by index in RemoteRoutes::outboxes (stable
  // across snapshots).
  std::vector<net::Batch> forward_;
  std::atomic<bool> forward_waiting_{false};
  std::string scratch_;  // one encoded envelope
  // Undelivered envelopes of paused connections, oldest first.
  std::map<net::ConnectionId, std::vector<Envelope>> backlog_;
  std::atomic<int64_t> paused_count_{0};
  std::atomic<int64_t>* const delivered_;
  int64_t delivered_local_ = 0;
  core::Counter* unknown_task_;
  core::Counter* malformed_;
  core::Counter* pauses_;
  core::Counter* forwarded_;
  // At most one line per second; the counters have the totals.
  core::RateLimitedLog bad_log_{1, std::chrono::seconds(1)};
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_REMOTE_RECEIVER_H_
