#include "common/core/config_keys.h"

#include <algorithm>
#include <iterator>

namespace tempest::core {
namespace {

// Sorted by key. Keep `read_by` short: migrate check prints it.
constexpr ConfigKeyReader kKeysRead[] = {
    {"nimbus.monitor.freq.secs", "nimbus (liveness monitor)"},
    {"nimbus.seeds", "client verbs (where nimbus is)"},
    {"nimbus.supervisor.timeout.secs", "nimbus (supervisor liveness)"},
    {"nimbus.task.launch.secs", "nimbus (worker start grace)"},
    {"nimbus.task.timeout.secs", "nimbus (worker heartbeat timeout)"},
    {"storm.local.dir", "supervisor (worker directories)"},
    {"storm.local.hostname", "supervisor (advertised host)"},
    {"storm.zookeeper.connection.timeout", "every ZooKeeper client"},
    {"storm.zookeeper.port", "every ZooKeeper client"},
    {"storm.zookeeper.retry.interval", "every ZooKeeper client"},
    {"storm.zookeeper.retry.intervalceiling.millis", "every ZooKeeper client"},
    {"storm.zookeeper.retry.times", "every ZooKeeper client"},
    {"storm.zookeeper.root", "nimbus, supervisors, workers"},
    {"storm.zookeeper.servers", "every ZooKeeper client, storm-kafka offsets"},
    {"storm.zookeeper.session.timeout", "every ZooKeeper client"},
    {"supervisor.heartbeat.frequency.secs", "supervisor"},
    {"supervisor.monitor.frequency.secs", "supervisor"},
    {"supervisor.slots.ports", "supervisor (worker slots)"},
    {"supervisor.worker.shutdown.sleep.secs", "supervisor"},
    {"supervisor.worker.start.timeout.secs", "supervisor"},
    {"supervisor.worker.timeout.secs", "supervisor"},
    {"topology.acker.executors", "scheduler and workers"},
    {"topology.debug", "workers"},
    {"topology.enable.message.timeouts", "workers (acker)"},
    {"topology.max.spout.pending", "workers (spout executors)"},
    {"topology.max.task.parallelism", "topology model"},
    {"topology.message.timeout.secs", "workers (acker), KafkaBolt"},
    {"topology.name", "topology model"},
    {"topology.subprocess.timeout.secs", "multilang bolts and spouts"},
    {"topology.tick.tuple.freq.secs", "bolt executors"},
    {"topology.workers", "scheduler"},
    {"ui.host", "nimbus (REST API and UI address)"},
    {"ui.port", "nimbus (REST API and UI port), client verbs"},
    {"worker.heartbeat.frequency.secs", "workers"},
};

}  // namespace

std::span<const ConfigKeyReader> KeysTempestReads() { return kKeysRead; }

bool TempestReadsKey(std::string_view key) {
  if (key.starts_with("tempest.")) return true;
  return std::any_of(std::begin(kKeysRead), std::end(kKeysRead),
                     [&](const ConfigKeyReader& k) { return k.key == key; });
}

}  // namespace tempest::core
