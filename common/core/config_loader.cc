#include "common/core/config_loader.h"

#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/api/string_view_compat.h"
#include "common/core/yaml_value.h"

namespace tempest::core {
namespace {

using api::Sv;

// Keys of Storm's defaults.yaml that a storm.yaml commonly sets, plus the
// ones Tempest reads. Anything else (outside tempest.*) draws a warning.
const absl::flat_hash_set<std::string>& KnownKeys() {
  static const auto* const kKeys = new absl::flat_hash_set<std::string>{
      "storm.zookeeper.servers",
      "storm.zookeeper.port",
      "storm.zookeeper.root",
      "storm.zookeeper.session.timeout",
      "storm.zookeeper.connection.timeout",
      "storm.zookeeper.retry.times",
      "storm.zookeeper.retry.interval",
      "storm.zookeeper.retry.intervalceiling.millis",
      "storm.zookeeper.auth.user",
      "storm.zookeeper.auth.password",
      "storm.zookeeper.auth.scheme",
      "storm.zookeeper.topology.auth.scheme",
      "storm.zookeeper.topology.auth.payload",
      "storm.local.dir",
      "storm.local.hostname",
      "storm.log.dir",
      "storm.cluster.mode",
      "storm.id",
      "storm.messaging.transport",
      "storm.messaging.netty.buffer_size",
      "storm.messaging.netty.max_retries",
      "storm.messaging.netty.min_wait_ms",
      "storm.messaging.netty.max_wait_ms",
      "storm.messaging.netty.transfer.batch.size",
      "storm.scheduler",
      "storm.health.check.dir",
      "storm.health.check.timeout.ms",
      "storm.meta.serialization.delegate",
      "storm.thrift.transport",
      "storm.codedistributor.class",
      "storm.blobstore.replication.factor",
      "storm.principal.tolocal",
      "storm.group.mapping.service",
      "java.library.path",
      "dev.zookeeper.path",
      "nimbus.seeds",
      "nimbus.host",
      "nimbus.thrift.port",
      "nimbus.thrift.max_buffer_size",
      "nimbus.childopts",
      "nimbus.task.timeout.secs",
      "nimbus.supervisor.timeout.secs",
      "nimbus.monitor.freq.secs",
      "nimbus.cleanup.inbox.freq.secs",
      "nimbus.inbox.jar.expiration.secs",
      "nimbus.task.launch.secs",
      "nimbus.file.copy.expiration.secs",
      "nimbus.code.sync.freq.secs",
      "nimbus.topology.validator",
      "nimbus.credential.renewers.freq.secs",
      "nimbus.blobstore.class",
      "nimbus.assignments.service.threads",
      "ui.port",
      "ui.host",
      "ui.childopts",
      "ui.header.buffer.bytes",
      "ui.actions.enabled",
      "logviewer.port",
      "logviewer.childopts",
      "logviewer.cleanup.age.mins",
      "logviewer.appender.name",
      "drpc.port",
      "drpc.servers",
      "drpc.invocations.port",
      "drpc.childopts",
      "pacemaker.port",
      "pacemaker.servers",
      "supervisor.slots.ports",
      "supervisor.childopts",
      "supervisor.worker.start.timeout.secs",
      "supervisor.worker.timeout.secs",
      "supervisor.worker.shutdown.sleep.secs",
      "supervisor.monitor.frequency.secs",
      "supervisor.heartbeat.frequency.secs",
      "supervisor.enable",
      "supervisor.run.worker.as.user",
      "supervisor.memory.capacity.mb",
      "supervisor.cpu.capacity",
      "worker.childopts",
      "worker.gc.childopts",
      "worker.heartbeat.frequency.secs",
      "worker.heap.memory.mb",
      "worker.max.timeout.secs",
      "worker.log.level.reset.poll.secs",
      "task.heartbeat.frequency.secs",
      "task.refresh.poll.secs",
      "task.credentials.poll.secs",
      "executor.metrics.frequency.secs",
      "transactional.zookeeper.root",
      "transactional.zookeeper.servers",
      "transactional.zookeeper.port",
      "topology.name",
      "topology.workers",
      "topology.acker.executors",
      "topology.eventlogger.executors",
      "topology.message.timeout.secs",
      "topology.max.spout.pending",
      "topology.enable.message.timeouts",
      "topology.tick.tuple.freq.secs",
      "topology.debug",
      "topology.max.task.parallelism",
      "topology.tasks",
      "topology.skip.missing.kryo.registrations",
      "topology.kryo.register",
      "topology.kryo.decorators",
      "topology.kryo.factory",
      "topology.fall.back.on.java.serialization",
      "topology.worker.childopts",
      "topology.worker.timeout.secs",
      "topology.worker.max.heap.size.mb",
      "topology.executor.receive.buffer.size",
      "topology.executor.send.buffer.size",
      "topology.transfer.buffer.size",
      "topology.transfer.batch.size",
      "topology.producer.batch.size",
      "topology.batch.flush.interval.millis",
      "topology.spout.wait.strategy",
      "topology.sleep.spout.wait.strategy.time.ms",
      "topology.backpressure.enable",
      "topology.backpressure.wait.strategy",
      "topology.error.throttle.interval.secs",
      "topology.max.error.report.per.interval",
      "topology.stats.sample.rate",
      "topology.builtin.metrics.bucket.size.secs",
      "topology.metrics.consumer.register",
      "topology.environment",
      "topology.multilang.serializer",
      "topology.subprocess.timeout.secs",
      "topology.shellbolt.max.pending",
      "topology.disable.loadaware.messaging",
      "topology.state.synchronization.timeout.secs",
      "topology.trident.batch.emit.interval.millis",
      "topology.testing.always.try.serialize",
      "topology.classpath",
      "topology.auto-credentials",
      "topology.component.resources.onheap.memory.mb",
      "topology.component.resources.offheap.memory.mb",
      "topology.component.cpu.pcore.percent",
      "topology.scheduler.strategy",
      "topology.priority",
      "topology.min.replication.count",
      "topology.max.replication.wait.time.sec",
      "topology.users",
      "topology.groups",
      "topology.submitter.user",
      "topology.version",
      "topology.bolts.outgoing.overflow.buffer.enable",
  };
  return *kKeys;
}

absl::Status ParseError(std::string_view file, int line, std::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(Sv(file), ":", line, ": ", Sv(msg)));
}

}  // namespace

api::Config ConfigLoader::Defaults() {
  api::Config c;
  c.Set(api::kTopologyWorkers, 1);
  c.Set(api::kTopologyAckerExecutors, nullptr);
  c.Set(api::kTopologyMessageTimeoutSecs, 30);
  c.Set(api::kTopologyMaxSpoutPending, nullptr);
  c.Set(api::kTopologyEnableMessageTimeouts, true);
  c.Set(api::kTopologyTickTupleFreqSecs, nullptr);
  c.Set(api::kTopologyDebug, false);
  c.Set(api::kTopologyMaxTaskParallelism, nullptr);
  c.Set(api::kStormZookeeperServers, api::ValueList{"localhost"});
  c.Set(api::kStormZookeeperPort, 2181);
  c.Set(api::kStormZookeeperRoot, "/tempest");
  c.Set(api::kStormZookeeperSessionTimeout, 20000);
  c.Set(api::kStormZookeeperConnectionTimeout, 15000);
  c.Set(api::kStormZookeeperRetryTimes, 5);
  c.Set(api::kStormZookeeperRetryInterval, 1000);
  c.Set(api::kStormZookeeperRetryIntervalCeilingMillis, 30000);
  c.Set(api::kNimbusSeeds, api::ValueList{"localhost"});
  c.Set(api::kNimbusMonitorFreqSecs, 10);
  c.Set(api::kNimbusTaskTimeoutSecs, 30);
  c.Set(api::kNimbusTaskLaunchSecs, 120);
  c.Set(api::kNimbusSupervisorTimeoutSecs, 60);
  c.Set(api::kSupervisorSlotsPorts, api::ValueList{6700, 6701, 6702, 6703});
  // storm.local.dir has no default here: Storm's is "storm-local" under the
  // installation; a supervisor without one uses ./tempest-local.
  c.Set(api::kSupervisorHeartbeatFrequencySecs, 5);
  c.Set(api::kSupervisorMonitorFrequencySecs, 3);
  c.Set(api::kSupervisorWorkerTimeoutSecs, 30);
  c.Set(api::kSupervisorWorkerStartTimeoutSecs, 120);
  c.Set(api::kSupervisorWorkerShutdownSleepSecs, 3);
  c.Set(api::kWorkerHeartbeatFrequencySecs, 1);
  return c;
}

bool ConfigLoader::IsKnownKey(std::string_view key) {
  return key.starts_with("tempest.") || KnownKeys().contains(std::string(key));
}

absl::StatusOr<LoadedConfig> ConfigLoader::Parse(std::string_view yaml_text,
                                                 std::string_view file_name) {
  LoadedConfig out;
  out.config = Defaults();
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return ParseError(file_name, e.mark.is_null() ? 0 : e.mark.line + 1,
                      absl::StrCat("YAML syntax error: ", e.msg));
  }
  if (root.IsNull()) return out;  // empty file
  if (!root.IsMap()) return ParseError(file_name, YamlLine(root), "expected a map of config keys");
  for (const auto& kv : root) {
    const int line = YamlLine(kv.first);
    if (!kv.first.IsScalar()) return ParseError(file_name, line, "config keys must be strings");
    const std::string& key = kv.first.Scalar();
    absl::StatusOr<api::Value> v = YamlToValue(kv.second);
    if (!v.ok()) return ParseError(file_name, line, api::StdSv(v.status().message()));
    if (!IsKnownKey(key)) {
      out.warnings.push_back(
          absl::StrCat(Sv(file_name), ":", line, ": unknown config key '", key, "'"));
    }
    out.config.Set(key, std::move(*v));
  }
  return out;
}

absl::StatusOr<LoadedConfig> ConfigLoader::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read config file ", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return Parse(buf.str(), path);
}

absl::StatusOr<std::string> ConfigLoader::ApplyOverride(api::Config& config,
                                                        std::string_view key_equals_value) {
  size_t eq = key_equals_value.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("config override '", Sv(key_equals_value), "' is not key=value"));
  }
  std::string key(absl::StripAsciiWhitespace(Sv(key_equals_value.substr(0, eq))));
  absl::StatusOr<api::Value> v = ParseYamlValue(key_equals_value.substr(eq + 1));
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config override '", key, "': ", v.status().message()));
  }
  config.Set(key, std::move(*v));
  if (!IsKnownKey(key)) return absl::StrCat("unknown config key '", key, "'");
  return std::string();
}

}  // namespace tempest::core
