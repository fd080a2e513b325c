#include "common/net/backoff.h"

#include <algorithm>

#include "common/core/jittered_backoff.h"

namespace tempest::net {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, uint64_t seed)
    : initial_(std::max(initial, std::chrono::milliseconds(1))),
      max_(std::max(max, initial_)),
      rng_(seed) {}

std::chrono::milliseconds Backoff::Next() {
  const std::chrono::milliseconds delay = core::JitteredBackoff(attempt_, initial_, max_, rng_);
  if (attempt_ < 64) ++attempt_;
  return std::max(delay, std::chrono::milliseconds(1));
}

}  // namespace tempest::net
