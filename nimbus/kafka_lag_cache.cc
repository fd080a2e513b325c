#include "nimbus/kafka_lag_cache.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/config.h"
#include "common/core/stored_topology.h"

namespace tempest::nimbus {

namespace {

// A measurement that failed (a broker or ZooKeeper that did not answer) is
// kept this many times longer: each retry costs the whole timeout, and a
// Prometheus scrape of several topologies must not wait that long each time.
constexpr int kFailedTtlFactor = 5;

bool AnyFailed(const std::vector<spout::SpoutLag>& lag) {
  return std::any_of(lag.begin(), lag.end(), [](const spout::SpoutLag& s) {
    if (!s.status.ok()) return true;
    return std::any_of(s.partitions.begin(), s.partitions.end(),
                       [](const spout::StoredPartitionOffset& p) { return !p.kafka_error.empty(); });
  });
}

}  // namespace

absl::StatusOr<std::vector<spout::SpoutLag>> KafkaLagCache::Get(const StoredTopology& topology,
                                                                 coord::ZkSession& session) {
  std::lock_guard<std::mutex> lock(mu_);
  const core::Clock::TimePoint now = options_.clock->Now();
  if (auto it = entries_.find(topology.id);
      it != entries_.end() && it->second.version == topology.version &&
      now - it->second.at < options_.ttl * (AnyFailed(it->second.lag) ? kFailedTtlFactor : 1)) {
    return it->second.lag;
  }
  absl::StatusOr<core::TopologyDef> def = core::LoadStoredTopology(topology.base);
  if (!def.ok()) return def.status();
  // As a worker resolves it: a spout naming no ZooKeeper keeps its offsets
  // in the cluster's.
  def->config.Set(api::kTempestClusterZookeeperConnect, options_.zk_connect);
  std::vector<spout::SpoutLag> lag = Measure(spout::KafkaSpoutsOf(*def), session);
  // Topologies that are gone leave the cache with the next measurement.
  for (auto it = entries_.begin(); it != entries_.end();) {
    const bool old = now - it->second.at >= options_.ttl * 2 * kFailedTtlFactor;
    it = old ? entries_.erase(it) : std::next(it);
  }
  entries_[topology.id] = Entry{options_.clock->Now(), topology.version, lag};
  return lag;
}

std::vector<spout::SpoutLag> KafkaLagCache::Measure(
    const std::vector<spout::SpoutLagTarget>& targets, coord::ZkSession& session) {
  std::vector<spout::SpoutLag> out;
  std::map<std::string, std::unique_ptr<coord::ZkSession>> others;  // by connect string
  for (const spout::SpoutLagTarget& t : targets) {
    coord::ZkSession* zk = &session;
    if (t.status.ok() && !t.config.offsets_in_kafka() && t.zk_connect != options_.zk_connect) {
      std::unique_ptr<coord::ZkSession>& other = others[t.zk_connect];
      if (other == nullptr) {
        coord::ZkSession::Options zo;
        zo.connect_string = t.zk_connect;
        zo.create_chroot = false;
        zo.config = options_.zk;
        zo.config.connection_timeout = options_.kafka_timeout;
        absl::StatusOr<std::unique_ptr<coord::ZkSession>> s = coord::ZkSession::Create(zo);
        if (s.ok() && (*s)->WaitConnected(options_.kafka_timeout).ok()) other = *std::move(s);
      }
      zk = other.get();
      if (zk == nullptr) {
        spout::SpoutLag failed;
        failed.component = t.component;
        failed.status = absl::UnavailableError(
            absl::StrCat("cannot reach the offsets' ZooKeeper at ", t.zk_connect));
        out.push_back(std::move(failed));
        continue;
      }
    }
    out.push_back(spout::MeasureSpoutLag(t, zk, options_.kafka_timeout));
  }
  return out;
}

}  // namespace tempest::nimbus
