#include "common/coord/retry_policy.h"

#include <algorithm>

#include "common/core/jittered_backoff.h"

namespace tempest::coord {

ZkClientConfig ZkClientConfig::FromLookup(
    const std::function<std::optional<int64_t>(std::string_view key)>& lookup) {
  ZkClientConfig c;
  auto positive = [&](std::string_view key) -> std::optional<int64_t> {
    auto v = lookup(key);
    if (v.has_value() && *v > 0) return v;
    return std::nullopt;
  };
  if (auto v = lookup("storm.zookeeper.retry.times"); v.has_value() && *v >= 0) {
    c.retry_times = static_cast<int>(std::min<int64_t>(*v, 1000));
  }
  if (auto v = positive("storm.zookeeper.retry.interval")) {
    c.retry_interval = std::chrono::milliseconds(*v);
  }
  if (auto v = positive("storm.zookeeper.retry.intervalceiling.millis")) {
    c.retry_interval_ceiling = std::chrono::milliseconds(*v);
  }
  if (auto v = positive("storm.zookeeper.session.timeout")) {
    c.session_timeout = std::chrono::milliseconds(*v);
  }
  if (auto v = positive("storm.zookeeper.connection.timeout")) {
    c.connection_timeout = std::chrono::milliseconds(*v);
  }
  return c;
}

RetryPolicy::RetryPolicy(Options options, uint64_t seed) : options_(options), rng_(seed) {
  options_.max_retries = std::max(0, options_.max_retries);
  options_.base_interval = std::max(options_.base_interval, std::chrono::milliseconds(1));
  options_.max_interval = std::max(options_.max_interval, options_.base_interval);
}

RetryPolicy RetryPolicy::FromConfig(const ZkClientConfig& config, uint64_t seed) {
  return RetryPolicy(
      Options{config.retry_times, config.retry_interval, config.retry_interval_ceiling}, seed);
}

std::optional<std::chrono::milliseconds> RetryPolicy::NextBackoff(
    int retry, std::chrono::milliseconds remaining) {
  if (retry < 0 || retry >= options_.max_retries) return std::nullopt;
  if (remaining <= std::chrono::milliseconds::zero()) return std::nullopt;
  return std::min(core::JitteredBackoff(retry, options_.base_interval, options_.max_interval, rng_),
                  remaining);
}

}  // namespace tempest::coord
