#include "nimbus/kafka_lag_cache.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/config.h"
#include "common/core/status_macros.h"
#include "common/core/flux/stored_topology.h"
#include "common/os/limits.h"

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

absl::StatusOr<std::unique_ptr<KafkaLagCache>> KafkaLagCache::Create(Options options) {
  std::unique_ptr<KafkaLagCache> cache(new KafkaLagCache(std::move(options)));
  RETURN_IF_ERROR(os::StartThread(cache->thread_, "the Kafka lag measurer",
                                  [raw = cache.get()] { raw->Loop(); }));
  return cache;
}

KafkaLagCache::KafkaLagCache(Options options) : options_(std::move(options)) {
  if (!options_.measure) {
    options_.measure = [this](const std::vector<spout::SpoutLagTarget>& targets) {
      return Measure(targets);
    };
  }
}

KafkaLagCache::~KafkaLagCache() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    work_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
}

bool KafkaLagCache::Fresh(const Entry& entry, core::Clock::TimePoint now) const {
  return now - entry.at < options_.ttl * (AnyFailed(entry.lag) ? kFailedTtlFactor : 1);
}

absl::StatusOr<std::vector<spout::SpoutLagTarget>> KafkaLagCache::Targets(
    const StoredTopology& topology) const {
  // Parsing the stored definition touches neither Kafka nor ZooKeeper.
  ASSIGN_OR_RETURN(core::TopologyDef def, core::LoadStoredTopology(topology.base));
  // As a worker resolves it: a spout naming no ZooKeeper keeps its offsets
  // in the cluster's.
  def.config.Set(api::kTempestClusterZookeeperConnect, options_.zk_connect);
  return spout::KafkaSpoutsOf(def);
}

absl::StatusOr<std::vector<spout::SpoutLag>> KafkaLagCache::Get(const StoredTopology& topology) {
  ASSIGN_OR_RETURN(std::vector<spout::SpoutLagTarget> found, Targets(topology));
  Job job{topology.version, std::move(found)};
  if (job.targets.empty()) return std::vector<spout::SpoutLag>{};

  absl::MutexLock lock(&mu_);
  DropOld(options_.clock->Now());
  auto it = entries_.find(topology.id);
  if (it != entries_.end() && it->second.version == topology.version) {
    // Stale: answered now (it says when it was measured), refreshed behind.
    if (!Fresh(it->second, options_.clock->Now())) Schedule(topology.id, std::move(job));
    return it->second.lag;
  }
  // Never measured, or its record changed (a new definition, another
  // status): an old answer would not be this topology's.
  std::vector<spout::SpoutLagTarget> targets = job.targets;
  Schedule(topology.id, std::move(job));
  const bool done = AwaitMeasured(topology.id, topology.version);
  if (auto e = entries_.find(topology.id); done && e != entries_.end()) return e->second.lag;
  std::vector<spout::SpoutLag> pending;
  for (const spout::SpoutLagTarget& t : targets) {
    spout::SpoutLag s;
    s.component = t.component;
    s.status = absl::UnavailableError("being measured (Kafka or ZooKeeper is slow to answer); "
                                      "ask again in a few seconds");
    pending.push_back(std::move(s));
  }
  return pending;
}

bool KafkaLagCache::AwaitMeasured(const std::string& id, int version) {
  auto measured = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    auto e = entries_.find(id);
    return stopping_ || (e != entries_.end() && e->second.version == version);
  };
  const absl::Time deadline = absl::Now() + absl::FromChrono(options_.first_wait);
  while (!measured()) {
    if (measured_.WaitWithDeadline(&mu_, deadline)) return measured();
  }
  return true;
}

void KafkaLagCache::Schedule(const std::string& id, Job job) {
  // Already being measured for this record: that answer is the refresh.
  if (id == measuring_ && job.version == measuring_version_) return;
  auto [it, added] = jobs_.insert_or_assign(id, std::move(job));
  if (!added) return;
  queue_.push_back(id);
  work_.Signal();
}

void KafkaLagCache::DropOld(core::Clock::TimePoint now) {
  // Topologies nobody asks about (gone, or no page open) leave the cache.
  for (auto it = entries_.begin(); it != entries_.end();) {
    const bool old = now - it->second.at >= options_.ttl * 2 * kFailedTtlFactor;
    it = old ? entries_.erase(it) : std::next(it);
  }
}

void KafkaLagCache::Loop() {
  absl::MutexLock lock(&mu_);
  while (true) {
    while (!stopping_ && queue_.empty()) work_.Wait(&mu_);
    if (stopping_) return;
    const std::string id = queue_.front();
    queue_.pop_front();
    auto job = jobs_.extract(id);
    measuring_ = id;
    measuring_version_ = job.mapped().version;
    // Measuring can take seconds: Get answers from the entries meanwhile.
    mu_.Unlock();
    std::vector<spout::SpoutLag> lag = options_.measure(job.mapped().targets);
    mu_.Lock();
    measuring_.clear();
    entries_[id] = Entry{options_.clock->Now(), job.mapped().version, std::move(lag)};
    measured_.SignalAll();
  }
}

std::vector<spout::SpoutLag> KafkaLagCache::Measure(
    const std::vector<spout::SpoutLagTarget>& targets) {
  std::vector<spout::SpoutLag> out;
  std::map<std::string, std::unique_ptr<coord::ZkSession>> others;  // by connect string
  for (const spout::SpoutLagTarget& t : targets) {
    coord::ZkSession* zk = options_.session;
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
