#ifndef TEMPEST_NIMBUS_KAFKA_LAG_CACHE_H_
#define TEMPEST_NIMBUS_KAFKA_LAG_CACHE_H_

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"
#include "common/core/clock.h"
#include "nimbus/topology_store.h"
#include "spout/kafka_lag.h"

namespace tempest::nimbus {

// Each KafkaSpout's lag as GET /lag, the UI and /metrics show it, measured by
// nimbus itself (spout/kafka_lag.h: the log end asked of Kafka, the offsets
// where the spout stores them), so it needs no running worker and is never
// the spout's last fetch. A topology's answer is kept for `ttl`, so a page
// reload or a Prometheus scrape does not query Kafka each time; each Kafka
// call is bounded by `kafka_timeout`, and failures are kept as such, five
// times as long (an unreachable broker costs one timeout per 5 ttl, not one
// per request).
//
// Offsets in the cluster's own ZooKeeper are read through nimbus's session;
// a spout whose offsets are elsewhere gets a short-lived session there with
// the cluster's credentials (the identity `tempest offsets` uses).
// Thread-safe (a mutex); the caller's thread blocks while it measures.
class KafkaLagCache {
 public:
  struct Options {
    std::string zk_connect;       // the cluster's ZooKeeper
    coord::ZkClientConfig zk;     // its timeouts and credentials
    core::Clock* clock = nullptr;
    std::chrono::milliseconds ttl{2000};
    std::chrono::milliseconds kafka_timeout{3000};
  };
  explicit KafkaLagCache(Options options) : options_(std::move(options)) {}

  // One entry per KafkaSpout of `topology` (none: it has no KafkaSpout).
  // An error only when its stored definition does not load.
  absl::StatusOr<std::vector<spout::SpoutLag>> Get(const StoredTopology& topology,
                                                    coord::ZkSession& session);

 private:
  std::vector<spout::SpoutLag> Measure(const std::vector<spout::SpoutLagTarget>& targets,
                                       coord::ZkSession& session);

  struct Entry {
    core::Clock::TimePoint at;
    int version = -1;  // of the topology's record
    std::vector<spout::SpoutLag> lag;
  };
  Options options_;
  std::mutex mu_;
  std::map<std::string, Entry> entries_;  // by topology id
};

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_KAFKA_LAG_CACHE_H_
