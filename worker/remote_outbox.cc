#include "worker/remote_outbox.h"

#include <utility>

#include "spdlog/spdlog.h"

namespace tempest::worker {

RemoteOutbox::RemoteOutbox(std::string peer, net::TransportClient* client,
                           size_t max_batch_bytes, core::MetricsRegistry& metrics)
    : peer_(std::move(peer)),
      client_(client),
      max_batch_bytes_(max_batch_bytes),
      dropped_(&metrics.GetCounter("tempest_worker_remote_dropped_total", {{"peer", peer_}})),
      full_waits_(&metrics.GetCounter("tempest_worker_remote_send_waits_total", {{"peer", peer_}})) {}

void RemoteOutbox::Drop(net::Batch& batch, const char* why) {
  dropped_->Add(batch.message_count());
  // Dropped only at shutdown or when the client was closed: one line each.
  spdlog::warn("worker: {} message(s) for worker {} dropped ({})", batch.message_count(), peer_,
               why);
  batch.Clear();
}

bool RemoteOutbox::SendBlocking(net::Batch& batch, const std::atomic<bool>& stop) {
  // Short timeouts in a loop, so a stop request is noticed while the peer
  // is slow or gone.
  std::chrono::milliseconds timeout(0);
  for (;;) {
    absl::Status s = client_->Send(batch, timeout);
    if (s.ok()) return true;
    if (!absl::IsResourceExhausted(s)) {
      Drop(batch, s.ToString().c_str());
      return false;
    }
    if (stop.load(std::memory_order_acquire)) {
      Drop(batch, "executor stopping");
      return false;
    }
    if (timeout.count() == 0) full_waits_->Add(1);
    timeout = std::chrono::milliseconds(20);
  }
}

bool RemoteOutbox::TrySend(net::Batch& batch) {
  absl::Status s = client_->Send(batch, std::chrono::milliseconds(0));
  if (s.ok()) return true;
  if (absl::IsResourceExhausted(s)) return false;
  Drop(batch, s.ToString().c_str());
  return true;
}

}  // namespace tempest::worker
