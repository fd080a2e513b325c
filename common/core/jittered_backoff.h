#ifndef TEMPEST_COMMON_CORE_JITTERED_BACKOFF_H_
#define TEMPEST_COMMON_CORE_JITTERED_BACKOFF_H_

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace tempest::core {

// Bounded exponential backoff with jitter, the one formula behind ZooKeeper
// retries (coord::RetryPolicy) and transport reconnects (net::Backoff): the
// delay before attempt `attempt` (0-based) is drawn uniformly from [b/2, b]
// with b = min(initial * 2^attempt, max), so clients that lost the same
// server do not come back in lock-step. Expects 1 <= initial <= max; callers
// clamp their settings once.
inline std::chrono::milliseconds JitteredBackoff(int attempt, std::chrono::milliseconds initial,
                                                 std::chrono::milliseconds max,
                                                 std::mt19937_64& rng) {
  // Doubling stops at the ceiling, so however many attempts are made the
  // multiplication cannot overflow.
  int64_t bound = initial.count();
  for (int i = 0; i < attempt && bound < max.count(); ++i) bound *= 2;
  bound = std::min<int64_t>(bound, max.count());
  std::uniform_int_distribution<int64_t> jitter(bound / 2, bound);
  return std::chrono::milliseconds(jitter(rng));
}

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_JITTERED_BACKOFF_H_
