#ifndef TEMPEST_COMMON_COORD_ZK_SESSION_METRICS_H_
#define TEMPEST_COMMON_COORD_ZK_SESSION_METRICS_H_

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"

namespace tempest::coord {

// The metrics of one ZkSession (names in common/coord/README.md). Counters
// and histograms are looked up once; failure and ambiguous-write counters,
// whose labels depend on the outcome, per event. Thread-safe (the registry
// is); latencies are measured by the caller on ZkSession::DeadlineClock.
class ZkSessionMetrics {
 public:
  explicit ZkSessionMetrics(core::MetricsRegistry& registry);

  // One synchronous call of `op` ("get", "set", ...) and its result.
  void Record(std::string_view op, std::chrono::nanoseconds elapsed, const absl::Status& status);
  void RecordSetAsync(std::chrono::nanoseconds elapsed, const absl::Status& status);
  // How the read-back of an ambiguous `op` came out ("applied", ...).
  void Ambiguous(std::string_view op, std::string_view outcome);
  void Transition(ZkSessionState from, ZkSessionState to);
  void SessionCreated();

 private:
  struct Op {
    core::Counter* count;
    core::Histogram* latency_us;
  };
  void Record(Op& op, std::string_view name, std::chrono::nanoseconds elapsed,
              const absl::Status& status);

  core::MetricsRegistry& registry_;
  std::map<std::string, Op, std::less<>> ops_;
  Op* set_async_;
  core::Gauge* state_;
  core::Counter* sessions_;
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_SESSION_METRICS_H_
