#ifndef TEMPEST_COMMON_NET_TRANSPORT_CLIENT_H_
#define TEMPEST_COMMON_NET_TRANSPORT_CLIENT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/core/metrics_registry.h"
#include "common/net/batch.h"
#include "common/net/event_loop.h"

namespace tempest::net {

class FrameWriterConnection;

struct TransportClientOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  // Per-topology secret; must equal the server's. Used to answer the
  // server's challenge on every (re)connect.
  std::string secret;
  // Also MAC every data frame (HMAC-SHA256 over the whole frame). Off by
  // default: the handshake already proves the peer knows the secret, and the
  // per-frame MAC roughly halves throughput on the 2-core machine
  // (docs/benchmarks.md). Required if the server sets require_frame_mac.
  bool mac_every_frame = false;
  // Bound of the send buffer: payload bytes queued or being written. A Send
  // that would exceed it waits (up to its timeout) and then fails.
  size_t max_queued_bytes = 16 << 20;
  // Coalescing: queued batches are written as soon as at least this many
  // bytes are waiting; smaller amounts wait up to `flush_interval`.
  size_t min_write_bytes = 16 << 10;
  std::chrono::microseconds flush_interval = std::chrono::milliseconds(1);
  // Queued batches are concatenated into frames of at most this payload size
  // (a single larger batch becomes one frame of its own). Must not exceed
  // the server's max_payload_bytes.
  size_t max_frame_payload_bytes = 1 << 20;
  // Reconnect backoff: jittered exponential, bounded by reconnect_max.
  std::chrono::milliseconds reconnect_initial = std::chrono::milliseconds(20);
  std::chrono::milliseconds reconnect_max = std::chrono::seconds(2);
  std::chrono::milliseconds connect_timeout = std::chrono::seconds(2);
  uint64_t backoff_seed = 0;  // 0 = seed from std::random_device
  // SO_SNDBUF; 0 keeps the OS default. Tests shrink it to reach back
  // pressure quickly.
  int send_buffer_bytes = 0;
  // Where metrics go; nullptr = MetricsRegistry::Global(). Must outlive the
  // client.
  core::MetricsRegistry* metrics = nullptr;
};

// The sending end of one worker-to-worker transport connection. Owns the
// socket, the bounded send queue, the flush timer and the reconnect timer;
// the socket and timers live on the EventLoop's thread, the queue is shared
// with sending threads under a mutex.
//
// Send() may be called from any thread. It never makes a syscall: it appends
// the batch to the queue and wakes the loop thread only when the queue turns
// non-empty or crosses `min_write_bytes`. The loop thread writes queued
// batches as frames of up to `max_frame_payload_bytes`, one gather write per
// frame straight from the batches' buffers, so small batches are coalesced
// without a copy. Written batches' buffers are recycled: Send hands one back
// (empty, with capacity) in place of the batch it queued.
//
// Full queue (the peer is slow, paused, or unreachable): Send blocks until
// there is room or its timeout passes, then returns ResourceExhausted and
// leaves the batch with the caller. A timeout of 0 makes Send non-blocking.
// Callers on the event-loop thread must use timeout 0.
//
// Each (re)connect answers the server's challenge with an HMAC of its nonce
// under `secret` before any data is written (FrameCodec describes the
// handshake). Connection loss: the client reconnects with bounded jittered
// backoff.
// Queued batches wait for the new connection. A server that stops
// gracefully says goodbye first (FrameCodec, "Goodbye"): the client finishes
// the frame it is writing, answers, and keeps the rest queued for the
// peer's next worker, retrying every 50 ms for 30 s before backing off as
// usual; nothing is dropped. Batches that were being
// written when the connection broke are dropped and counted in
// `tempest_net_messages_dropped_total`: the transport is at-most-once per
// batch and never resends, because a duplicated ack would corrupt the XOR
// ledger; Storm-style replay recovers the loss.
//
// The EventLoop must outlive the client. Destroying the client drops what is
// still queued.
class TransportClient {
 public:
  static absl::StatusOr<std::unique_ptr<TransportClient>> Create(EventLoop& loop,
                                                                 TransportClientOptions options);
  ~TransportClient();

  TransportClient(const TransportClient&) = delete;
  TransportClient& operator=(const TransportClient&) = delete;

  // Queues `batch` for sending. OK: the batch was moved into the queue and
  // `batch` is empty (possibly holding a recycled buffer's capacity). ResourceExhausted: no room before the timeout; `batch`
  // is unchanged. InvalidArgument: the batch alone exceeds max_queued_bytes.
  // FailedPrecondition: the client was closed.
  absl::Status Send(Batch& batch, std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Writes whatever is queued now instead of waiting for the flush interval.
  void Flush();
  // Stops sending and reconnecting; wakes blocked senders. Idempotent.
  void Close();

  bool connected() const;
  // Successful connections so far (1 + reconnects).
  int64_t connect_count() const;
  // Payload bytes queued or being written.
  size_t queued_bytes() const;

 private:
  TransportClient(EventLoop& loop, std::shared_ptr<FrameWriterConnection> conn);

  EventLoop& loop_;
  std::shared_ptr<FrameWriterConnection> conn_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_TRANSPORT_CLIENT_H_
