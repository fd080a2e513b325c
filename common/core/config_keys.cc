#include "common/core/config_keys.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "common/core/storm_default_keys.h"

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
    {"storm.zookeeper.auth.payload", "every ZooKeeper client (digest ACLs)"},
    {"storm.zookeeper.auth.scheme", "every ZooKeeper client (digest ACLs)"},
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
    {"tempest.kafka.offset.journal.max.entries", "KafkaSpout (offset journal bound)"},
    {"tempest.kafka.offset.journal.retention.secs", "KafkaSpout (offset journal retention)"},
    {"tempest.transport.max.frame.bytes", "workers (transport server)"},
    {"tempest.zookeeper.offsets.world.readable", "KafkaSpout offset nodes (digest ACLs)"},
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
static_assert(std::is_sorted(std::begin(kKeysRead), std::end(kKeysRead),
                             [](const ConfigKeyReader& a, const ConfigKeyReader& b) {
                               return a.key < b.key;
                             }));

// The rest of Storm's defaults.yaml that a storm.yaml commonly sets:
// accepted without a warning, but nothing in Tempest reads them. Sorted.
constexpr std::string_view kKeysAcceptedWithoutEffect[] = {
    "dev.zookeeper.path",
    "drpc.childopts",
    "drpc.invocations.port",
    "drpc.port",
    "drpc.servers",
    "executor.metrics.frequency.secs",
    "java.library.path",
    "logviewer.appender.name",
    "logviewer.childopts",
    "logviewer.cleanup.age.mins",
    "logviewer.port",
    "nimbus.assignments.service.threads",
    "nimbus.blobstore.class",
    "nimbus.childopts",
    "nimbus.cleanup.inbox.freq.secs",
    "nimbus.code.sync.freq.secs",
    "nimbus.credential.renewers.freq.secs",
    "nimbus.file.copy.expiration.secs",
    "nimbus.host",
    "nimbus.inbox.jar.expiration.secs",
    "nimbus.thrift.max_buffer_size",
    "nimbus.thrift.port",
    "nimbus.topology.validator",
    "pacemaker.port",
    "pacemaker.servers",
    "storm.blobstore.replication.factor",
    "storm.cluster.mode",
    "storm.codedistributor.class",
    "storm.group.mapping.service",
    "storm.health.check.dir",
    "storm.health.check.timeout.ms",
    "storm.id",
    "storm.log.dir",
    "storm.messaging.netty.buffer_size",
    "storm.messaging.netty.max_retries",
    "storm.messaging.netty.max_wait_ms",
    "storm.messaging.netty.min_wait_ms",
    "storm.messaging.netty.transfer.batch.size",
    "storm.messaging.transport",
    "storm.meta.serialization.delegate",
    "storm.principal.tolocal",
    "storm.scheduler",
    "storm.thrift.transport",
    "storm.zookeeper.auth.password",
    "storm.zookeeper.auth.user",
    "storm.zookeeper.topology.auth.payload",
    "storm.zookeeper.topology.auth.scheme",
    "supervisor.childopts",
    "supervisor.cpu.capacity",
    "supervisor.enable",
    "supervisor.memory.capacity.mb",
    "supervisor.run.worker.as.user",
    "task.credentials.poll.secs",
    "task.heartbeat.frequency.secs",
    "task.refresh.poll.secs",
    "topology.auto-credentials",
    "topology.backpressure.enable",
    "topology.backpressure.wait.strategy",
    "topology.batch.flush.interval.millis",
    "topology.bolts.outgoing.overflow.buffer.enable",
    "topology.builtin.metrics.bucket.size.secs",
    "topology.classpath",
    "topology.component.cpu.pcore.percent",
    "topology.component.resources.offheap.memory.mb",
    "topology.component.resources.onheap.memory.mb",
    "topology.disable.loadaware.messaging",
    "topology.environment",
    "topology.error.throttle.interval.secs",
    "topology.eventlogger.executors",
    "topology.executor.receive.buffer.size",
    "topology.executor.send.buffer.size",
    "topology.fall.back.on.java.serialization",
    "topology.groups",
    "topology.kryo.decorators",
    "topology.kryo.factory",
    "topology.kryo.register",
    "topology.max.error.report.per.interval",
    "topology.max.replication.wait.time.sec",
    "topology.metrics.consumer.register",
    "topology.min.replication.count",
    "topology.multilang.serializer",
    "topology.priority",
    "topology.producer.batch.size",
    "topology.scheduler.strategy",
    "topology.shellbolt.max.pending",
    "topology.skip.missing.kryo.registrations",
    "topology.sleep.spout.wait.strategy.time.ms",
    "topology.spout.wait.strategy",
    "topology.state.synchronization.timeout.secs",
    "topology.stats.sample.rate",
    "topology.submitter.user",
    "topology.tasks",
    "topology.testing.always.try.serialize",
    "topology.transfer.batch.size",
    "topology.transfer.buffer.size",
    "topology.trident.batch.emit.interval.millis",
    "topology.users",
    "topology.version",
    "topology.worker.childopts",
    "topology.worker.max.heap.size.mb",
    "topology.worker.timeout.secs",
    "transactional.zookeeper.port",
    "transactional.zookeeper.root",
    "transactional.zookeeper.servers",
    "ui.actions.enabled",
    "ui.childopts",
    "ui.header.buffer.bytes",
    "worker.childopts",
    "worker.gc.childopts",
    "worker.heap.memory.mb",
    "worker.log.level.reset.poll.secs",
    "worker.max.timeout.secs",
};
static_assert(std::is_sorted(std::begin(kKeysAcceptedWithoutEffect),
                             std::end(kKeysAcceptedWithoutEffect)));

}  // namespace

std::span<const ConfigKeyReader> KeysTempestReads() { return kKeysRead; }

bool TempestReadsKey(std::string_view key) {
  if (key.starts_with("tempest.")) return true;
  return std::any_of(std::begin(kKeysRead), std::end(kKeysRead),
                     [&](const ConfigKeyReader& k) { return k.key == key; });
}

bool TempestAcceptsKey(std::string_view key) {
  return TempestReadsKey(key) || IsStormDefaultKey(key) ||
         std::binary_search(std::begin(kKeysAcceptedWithoutEffect),
                            std::end(kKeysAcceptedWithoutEffect), key);
}

}  // namespace tempest::core
