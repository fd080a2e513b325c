#ifndef TEMPEST_COMMON_API_CONFIG_H_
#define TEMPEST_COMMON_API_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/api/value.h"

namespace tempest::api {

// Storm configuration key names (same meaning as in Storm). Tempest-only keys
// start with "tempest.". Defaults live in core::DefaultConfig().
inline constexpr std::string_view kTopologyName = "topology.name";
// Where the topology's resources are on this machine (`tempest local
// --resources`, or what a worker fetched for `tempest submit --resources`);
// multilang children run there. Set by the runtime, not by users.
inline constexpr std::string_view kTempestResourcesDir = "tempest.resources.dir";
inline constexpr std::string_view kTopologyWorkers = "topology.workers";
inline constexpr std::string_view kTopologyAckerExecutors = "topology.acker.executors";
inline constexpr std::string_view kTopologyMessageTimeoutSecs = "topology.message.timeout.secs";
inline constexpr std::string_view kTopologyMaxSpoutPending = "topology.max.spout.pending";
inline constexpr std::string_view kTopologyEnableMessageTimeouts =
    "topology.enable.message.timeouts";
inline constexpr std::string_view kTopologyTickTupleFreqSecs = "topology.tick.tuple.freq.secs";
inline constexpr std::string_view kTopologyDebug = "topology.debug";
inline constexpr std::string_view kTopologyMaxTaskParallelism = "topology.max.task.parallelism";
inline constexpr std::string_view kStormZookeeperServers = "storm.zookeeper.servers";
// Set by a cluster worker in the config of the topology it runs: the
// cluster's own ZooKeeper ("host:port,..."), where storm-kafka spouts keep
// their offsets unless the topology names another ZooKeeper.
inline constexpr std::string_view kTempestClusterZookeeperConnect =
    "tempest.cluster.zookeeper.connect";
inline constexpr std::string_view kStormZookeeperPort = "storm.zookeeper.port";
inline constexpr std::string_view kStormZookeeperRoot = "storm.zookeeper.root";
inline constexpr std::string_view kStormZookeeperSessionTimeout = "storm.zookeeper.session.timeout";
inline constexpr std::string_view kStormZookeeperConnectionTimeout =
    "storm.zookeeper.connection.timeout";
inline constexpr std::string_view kStormZookeeperRetryTimes = "storm.zookeeper.retry.times";
inline constexpr std::string_view kStormZookeeperRetryInterval = "storm.zookeeper.retry.interval";
inline constexpr std::string_view kStormZookeeperRetryIntervalCeilingMillis =
    "storm.zookeeper.retry.intervalceiling.millis";
inline constexpr std::string_view kNimbusSeeds = "nimbus.seeds";
inline constexpr std::string_view kNimbusMonitorFreqSecs = "nimbus.monitor.freq.secs";
inline constexpr std::string_view kNimbusTaskTimeoutSecs = "nimbus.task.timeout.secs";
inline constexpr std::string_view kNimbusTaskLaunchSecs = "nimbus.task.launch.secs";
inline constexpr std::string_view kNimbusSupervisorTimeoutSecs = "nimbus.supervisor.timeout.secs";
inline constexpr std::string_view kSupervisorSlotsPorts = "supervisor.slots.ports";
inline constexpr std::string_view kStormLocalDir = "storm.local.dir";
inline constexpr std::string_view kStormLocalHostname = "storm.local.hostname";
inline constexpr std::string_view kSupervisorHeartbeatFrequencySecs =
    "supervisor.heartbeat.frequency.secs";
inline constexpr std::string_view kSupervisorMonitorFrequencySecs =
    "supervisor.monitor.frequency.secs";
inline constexpr std::string_view kSupervisorWorkerTimeoutSecs = "supervisor.worker.timeout.secs";
inline constexpr std::string_view kSupervisorWorkerStartTimeoutSecs =
    "supervisor.worker.start.timeout.secs";
inline constexpr std::string_view kSupervisorWorkerShutdownSleepSecs =
    "supervisor.worker.shutdown.sleep.secs";
inline constexpr std::string_view kWorkerHeartbeatFrequencySecs = "worker.heartbeat.frequency.secs";
// Tempest: how long a worker whose slot was unassigned or reassigned may take
// to exit by itself before its supervisor stops it.
inline constexpr std::string_view kTempestSupervisorWorkerExitGraceSecs =
    "tempest.supervisor.worker.exit.grace.secs";

// A configuration map, string key -> Value (Storm's `Map<String, Object>`).
// Owns its entries; a plain value type, not synchronized (share as const).
// Keys are kept sorted so dumps are deterministic.
//
//   Config c;  c.Set(kTopologyWorkers, 2);
//   int64_t w = c.GetInt(kTopologyWorkers, 1);
//   std::optional<int64_t> pending = c.GetOptionalInt(kTopologyMaxSpoutPending);
//
// Typed getters coerce leniently (an int given as "2" reads as 2) and fall
// back to the default when the key is absent, nil, or does not convert.
class Config {
 public:
  Config() = default;
  explicit Config(ValueMap entries) : entries_(std::move(entries)) {}

  void Set(std::string_view key, Value value) { entries_[std::string(key)] = std::move(value); }
  bool Erase(std::string_view key) { return entries_.erase(std::string(key)) > 0; }
  // Present, possibly nil.
  bool Has(std::string_view key) const { return Find(key) != nullptr; }
  // nullptr when absent.
  const Value* Find(std::string_view key) const;
  // Nil when absent.
  const Value& Get(std::string_view key) const;

  int64_t GetInt(std::string_view key, int64_t default_value) const;
  double GetDouble(std::string_view key, double default_value) const;
  bool GetBool(std::string_view key, bool default_value) const;
  std::string GetString(std::string_view key, std::string_view default_value) const;
  // nullopt when absent, nil or not an integer (Storm's "null" defaults).
  std::optional<int64_t> GetOptionalInt(std::string_view key) const;

  // Copies every entry of `other` over this one.
  void Merge(const Config& other);

  const ValueMap& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  friend bool operator==(const Config&, const Config&) = default;

 private:
  ValueMap entries_;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_CONFIG_H_
