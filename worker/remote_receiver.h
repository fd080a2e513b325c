#ifndef TEMPEST_WORKER_REMOTE_RECEIVER_H_
#define TEMPEST_WORKER_REMOTE_RECEIVER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <span>
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
// Threads: Create on the control thread before executors start; OnFrame and
// RetryPaused on the event-loop thread only; counters from any thread.
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
  // Some connection is paused (any thread).
  bool has_paused() const { return paused_count_.load(std::memory_order_acquire) > 0; }

  // Messages put into local queues/lanes (for the worker's idle check).
  int64_t delivered() const { return delivered_->load(std::memory_order_acquire); }
  int64_t unknown_task() const { return unknown_task_->Value(); }
  int64_t malformed() const { return malformed_->Value(); }

 private:
  RemoteReceiver(WorkerContext& ctx, const EnvelopeCodec& codec, std::atomic<int64_t>* delivered);

  enum class Result { kDelivered, kFull, kSkipped };
  Result Deliver(Envelope& e);
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
  // Undelivered envelopes of paused connections, oldest first.
  std::map<net::ConnectionId, std::vector<Envelope>> backlog_;
  std::atomic<int64_t> paused_count_{0};
  std::atomic<int64_t>* const delivered_;
  int64_t delivered_local_ = 0;
  core::Counter* unknown_task_;
  core::Counter* malformed_;
  core::Counter* pauses_;
  // At most one line per second; the counters have the totals.
  core::RateLimitedLog bad_log_{1, std::chrono::seconds(1)};
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_REMOTE_RECEIVER_H_
