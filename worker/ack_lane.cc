#include "worker/ack_lane.h"

#include <iterator>
#include <utility>

namespace tempest::worker {

void AckLane::Post(std::vector<Envelope>& batch) {
  if (batch.empty()) return;
  {
    absl::MutexLock lock(&mu_);
    if (items_.empty()) {
      // Hand the producer's buffer over wholesale; it gets ours (with its
      // capacity) back, so steady state allocates nothing.
      items_.swap(batch);
    } else {
      items_.insert(items_.end(), std::make_move_iterator(batch.begin()),
                    std::make_move_iterator(batch.end()));
    }
    size_.store(items_.size(), std::memory_order_release);
  }
  batch.clear();
  event_.Notify();
}

bool AckLane::Drain(std::vector<Envelope>& out) {
  if (size_.load(std::memory_order_acquire) == 0) return false;
  absl::MutexLock lock(&mu_);
  out.swap(items_);
  size_.store(0, std::memory_order_release);
  return !out.empty();
}

}  // namespace tempest::worker
