#include "common/net/backoff.h"

#include <algorithm>

namespace tempest::net {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, uint64_t seed)
    : initial_(std::max(initial, std::chrono::milliseconds(1))),
      max_(std::max(max, initial_)),
      rng_(seed) {}

std::chrono::milliseconds Backoff::Next() {
  int64_t base = initial_.count();
  // Doubling stops at max_, so the shift never overflows.
  for (int i = 0; i < attempt_ && base < max_.count(); ++i) base *= 2;
  base = std::min<int64_t>(base, max_.count());
  if (attempt_ < 64) ++attempt_;
  std::uniform_int_distribution<int64_t> jitter(base / 2, base);
  return std::chrono::milliseconds(std::max<int64_t>(1, jitter(rng_)));
}

}  // namespace tempest::net
