#ifndef TEMPEST_WORKER_REMOTE_OUTBOX_H_
#define TEMPEST_WORKER_REMOTE_OUTBOX_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/core/metrics_registry.h"
#include "common/net/batch.h"
#include "common/net/transport_client.h"

namespace tempest::worker {

class EnvelopeCodec;

// The way from this worker to one other worker of the topology: its
// TransportClient (one connection per worker pair, shared by every executor
// of this worker) and the drop counter. Each executor keeps its own
// net::Batch per destination (Transfer) and hands it over here once per loop
// iteration, so executors never contend except on the client's queue mutex.
//
// Two ways to send (docs/adr/0010-worker-data-plane.md):
//  * SendBlocking: data tuples and acker-bound messages from spouts and
//    bolts. Waits while the client's bounded queue is full: that is the
//    back pressure across workers. Gives up (and counts the batch's messages
//    as dropped) only when `stop` becomes true or the client is closed.
//  * TrySend: acker replies to remote spout tasks. Never waits; the caller
//    keeps a refused batch in an unbounded overflow and retries it next
//    iteration, so an acker never blocks (the ack cycle stays deadlock-free).
//
// Thread-safety: any executor thread; the client is thread-safe. The client
// must outlive the outbox's use.
class RemoteOutbox {
 public:
  // `max_batch_bytes`: the payload size at which senders hand a batch over
  // early; must leave room in the client's queue (a batch larger than
  // max_queued_bytes could never be sent).
  RemoteOutbox(std::string peer, net::TransportClient* client, size_t max_batch_bytes,
               core::MetricsRegistry& metrics);

  // True when sent; false when dropped (stop or closed).
  bool SendBlocking(net::Batch& batch, const std::atomic<bool>& stop);
  // True when queued; false leaves `batch` unchanged (queue full). A closed
  // client drops the batch (counted) and returns true.
  bool TrySend(net::Batch& batch);

  // Asks the connection to write what is queued now instead of after its
  // coalescing delay (the sender is about to go idle).
  void Kick() { client_->Flush(); }

  const std::string& peer() const { return peer_; }
  size_t max_batch_bytes() const { return max_batch_bytes_; }
  int64_t dropped() const { return dropped_->Value(); }

 private:
  void Drop(net::Batch& batch, const char* why);

  const std::string peer_;
  net::TransportClient* const client_;
  const size_t max_batch_bytes_;
  core::Counter* dropped_;
  core::Counter* full_waits_;
};

// How tasks that run in other workers are reached, shared read-only by the
// Transfers of one worker (WorkerContext::remote). Built by Worker.
struct RemoteRoutes {
  const EnvelopeCodec* codec = nullptr;
  // Index: task id; the index in `outboxes` of the worker running it, or -1
  // (local, or no such task).
  std::vector<int> worker_by_task;
  std::vector<RemoteOutbox*> outboxes;

  int WorkerOf(int32_t task) const {
    const size_t t = static_cast<size_t>(task);
    return task > 0 && t < worker_by_task.size() ? worker_by_task[t] : -1;
  }
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_REMOTE_OUTBOX_H_
