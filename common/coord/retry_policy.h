#ifndef TEMPEST_COMMON_COORD_RETRY_POLICY_H_
#define TEMPEST_COMMON_COORD_RETRY_POLICY_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string_view>

#include "common/coord/zk_auth.h"

namespace tempest::coord {

// Client settings with Storm's key names and defaults.
struct ZkClientConfig {
  int retry_times = 5;                             // storm.zookeeper.retry.times
  std::chrono::milliseconds retry_interval{1000};  // storm.zookeeper.retry.interval
  std::chrono::milliseconds retry_interval_ceiling{30000};
  // storm.zookeeper.retry.intervalceiling.millis
  std::chrono::milliseconds session_timeout{20000};     // storm.zookeeper.session.timeout
  std::chrono::milliseconds connection_timeout{15000};  // storm.zookeeper.connection.timeout
  // storm.zookeeper.auth.*: not read by FromLookup (ZkAuthConfig::FromConfig).
  ZkAuthConfig auth;

  // Reads the keys above through `lookup` (which returns nullopt for an
  // absent key); absent keys keep Storm's defaults. Negative or zero values
  // are ignored, so a bad config cannot produce a zero deadline.
  static ZkClientConfig FromLookup(
      const std::function<std::optional<int64_t>(std::string_view key)>& lookup);
};

// Bounded exponential backoff with jitter, in the spirit of Storm's
// StormBoundedExponentialBackoffRetry: the n-th retry (n from 0) waits
// core::JitteredBackoff(n, interval, ceiling), a random time in [b/2, b]
// where b = min(interval * 2^n, ceiling); at most
// `retry_times` retries; never longer than the time left before the caller's
// deadline. Pure logic: the caller sleeps. Not thread-safe (owns its RNG);
// make one per call site or per retry loop.
class RetryPolicy {
 public:
  struct Options {
    int max_retries = 5;
    std::chrono::milliseconds base_interval{1000};
    std::chrono::milliseconds max_interval{30000};
  };

  explicit RetryPolicy(Options options, uint64_t seed = std::random_device{}());
  static RetryPolicy FromConfig(const ZkClientConfig& config,
                                uint64_t seed = std::random_device{}());

  // How long to wait before retry number `retry` (0-based), or nullopt if the
  // retry budget is spent or `remaining` (time left before the deadline) is
  // not positive. The result never exceeds `remaining`.
  std::optional<std::chrono::milliseconds> NextBackoff(int retry,
                                                       std::chrono::milliseconds remaining);

  const Options& options() const { return options_; }

 private:
  Options options_;
  std::mt19937_64 rng_;
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_RETRY_POLICY_H_
