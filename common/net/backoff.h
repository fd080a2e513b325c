#ifndef TEMPEST_COMMON_NET_BACKOFF_H_
#define TEMPEST_COMMON_NET_BACKOFF_H_

#include <chrono>
#include <cstdint>
#include <random>

namespace tempest::net {

// Bounded, jittered exponential backoff for reconnects: the n-th delay is
// core::JitteredBackoff(n, initial, max) (drawn from [base/2, base] with
// base = min(initial·2^n, max)), never below 1 ms; the attempt count is kept
// here so callers only ask for the next delay.
// Owns its PRNG (seeded by the caller, so tests are deterministic). Not
// thread-safe; TransportClient uses it on the event-loop thread.
class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, uint64_t seed);

  // The delay before the next attempt; grows with each call until Reset().
  std::chrono::milliseconds Next();
  // Call after a successful connection.
  void Reset() { attempt_ = 0; }
  int attempt() const { return attempt_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds max_;
  int attempt_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_BACKOFF_H_
