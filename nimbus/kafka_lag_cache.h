#ifndef TEMPEST_NIMBUS_KAFKA_LAG_CACHE_H_
#define TEMPEST_NIMBUS_KAFKA_LAG_CACHE_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/zk_session.h"
#include "common/core/clock.h"
#include "nimbus/topology_store.h"
#include "spout/kafka/kafka_lag.h"

namespace tempest::nimbus {

// Each KafkaSpout's lag as GET /lag, the UI and /metrics show it, measured by
// nimbus itself (spout/kafka/kafka_lag.h: the log end asked of Kafka, the offsets
// where the spout stores them), so it needs no running worker and is never
// the spout's last fetch. A topology's answer is fresh for `ttl`, so a page
// reload or a Prometheus scrape does not query Kafka each time; each Kafka
// call is bounded by `kafka_timeout`, and failures stay fresh five times as
// long (an unreachable broker costs one timeout per 5 ttl, not one per
// request).
//
// Measuring can take seconds (a broker that does not answer), and Get runs
// on nimbus's REST threads, so it never measures itself: one thread owned by
// the cache measures one topology at a time, without the lock held. A stale
// answer is returned at once while it is refreshed; only a topology with no
// answer yet (or a changed record) waits for its measurement, at most
// `first_wait`, and then reads "being measured" rather than a lag.
//
// Offsets in the cluster's own ZooKeeper are read through `session`
// (nimbus's; ZkSession is thread-safe and must outlive the cache); a spout
// whose offsets are elsewhere gets a short-lived session there with the
// cluster's credentials (the identity `tempest offsets` uses).
class KafkaLagCache {
 public:
  // Measures every spout of one topology (the real one: spout::MeasureSpoutLag).
  using MeasureFn =
      std::function<std::vector<spout::SpoutLag>(const std::vector<spout::SpoutLagTarget>&)>;
  struct Options {
    std::string zk_connect;            // the cluster's ZooKeeper
    coord::ZkClientConfig zk;          // its timeouts and credentials
    coord::ZkSession* session = nullptr;  // a session to it (not owned)
    core::Clock* clock = nullptr;
    std::chrono::milliseconds ttl{2000};
    std::chrono::milliseconds kafka_timeout{3000};
    // How long a first measurement is waited for (real time).
    std::chrono::milliseconds first_wait{4000};
    MeasureFn measure;  // empty: measure against Kafka and ZooKeeper
  };

  // Starts the measuring thread.
  static absl::StatusOr<std::unique_ptr<KafkaLagCache>> Create(Options options);
  // Stops the thread; waits for a measurement under way (bounded by its timeouts).
  ~KafkaLagCache();
  KafkaLagCache(const KafkaLagCache&) = delete;
  KafkaLagCache& operator=(const KafkaLagCache&) = delete;

  // One entry per KafkaSpout of `topology` (none: it has no KafkaSpout).
  // An error only when its stored definition does not load.
  absl::StatusOr<std::vector<spout::SpoutLag>> Get(const StoredTopology& topology);
  // Each KafkaSpout of `topology` as its stored definition configures it,
  // resolved as a worker resolves it; measures nothing.
  absl::StatusOr<std::vector<spout::SpoutLagTarget>> Targets(const StoredTopology& topology) const;

 private:
  explicit KafkaLagCache(Options options);

  struct Entry {
    core::Clock::TimePoint at;
    int version = -1;  // of the topology's record
    std::vector<spout::SpoutLag> lag;
  };
  struct Job {
    int version = -1;
    std::vector<spout::SpoutLagTarget> targets;
  };

  bool Fresh(const Entry& entry, core::Clock::TimePoint now) const;
  // Queues `id` unless it is already queued (then its job is replaced).
  void Schedule(const std::string& id, Job job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropOld(core::Clock::TimePoint now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits (real time, at most first_wait) until `id` is measured at `version`.
  bool AwaitMeasured(const std::string& id, int version) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();
  std::vector<spout::SpoutLag> Measure(const std::vector<spout::SpoutLagTarget>& targets);

  Options options_;
  std::thread thread_;
  absl::Mutex mu_;
  absl::CondVar work_;      // a job was queued, or stopping
  absl::CondVar measured_;  // an entry was stored
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);  // by topology id
  std::map<std::string, Job> jobs_ ABSL_GUARDED_BY(mu_);       // queued, by topology id
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);         // ids of jobs_, oldest first
  // The topology being measured ("" none).
  std::string measuring_ ABSL_GUARDED_BY(mu_);
  int measuring_version_ ABSL_GUARDED_BY(mu_) = -1;
};

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_KAFKA_LAG_CACHE_H_
