#include "common/core/config/config_keys.h"

#include <algorithm>
#include <iterator>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/config/storm_default_keys.h"

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
    {"storm.zookeeper.topology.auth.payload", "nimbus and workers (a topology's own identity)"},
    {"storm.zookeeper.topology.auth.scheme", "nimbus and workers (a topology's own identity)"},
    {"supervisor.heartbeat.frequency.secs", "supervisor"},
    {"supervisor.monitor.frequency.secs", "supervisor"},
    {"supervisor.slots.ports", "supervisor (worker slots)"},
    {"supervisor.worker.shutdown.sleep.secs", "supervisor"},
    {"supervisor.worker.start.timeout.secs", "supervisor"},
    {"supervisor.worker.timeout.secs", "supervisor"},
    {"supervisor.worker.user", "supervisor and workers (who workers run as under root)"},
    {"tempest.api.descriptor.reserve", "nimbus (REST API descriptors kept free)"},
    {"tempest.api.max.connections", "nimbus (REST API connections)"},
    {"tempest.api.max.connections.per.peer", "nimbus (REST API connections per address)"},
    {"tempest.cluster.secret.file", "nimbus (transport secrets derive from it)"},
    {"tempest.kafka.offset.journal.max.entries", "KafkaSpout (offset journal bound)"},
    {"tempest.kafka.offset.journal.retention.secs", "KafkaSpout (offset journal retention)"},
    {"tempest.supervisor.metrics.host", "supervisor (/metrics address)"},
    {"tempest.supervisor.metrics.port", "supervisor (/metrics port; 0: off)"},
    {"tempest.supervisor.worker.slot.uid.base", "supervisor and workers (slot uids under root)"},
    {"tempest.supervisor.worker.slot.uids", "supervisor and workers (a uid per slot under root)"},
    {"tempest.transport.descriptor.reserve", "workers (descriptors kept free)"},
    {"tempest.transport.max.connections", "workers (transport connections)"},
    {"tempest.transport.max.connections.per.peer", "workers (transport connections per address)"},
    {"tempest.transport.max.frame.bytes", "workers (transport server)"},
    {"tempest.zookeeper.auth.file", "every ZooKeeper client (digest ACLs)"},
    {"tempest.zookeeper.offsets.world.readable", "KafkaSpout offset nodes (digest ACLs)"},
    {"topology.acker.executors", "scheduler and workers"},
    {"topology.debug", "workers"},
    {"topology.enable.message.timeouts", "workers (acker)"},
    {"topology.environment", "multilang children (their environment)"},
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

constexpr int64_t kIntMax = 2147483647;  // read as int (Java's Integer)
constexpr int64_t kDay = 86400;
constexpr int64_t kHourMillis = 3600 * 1000;

// Sorted by key. Durations are bounded so that none overflows a
// millisecond count; ports are TCP ports (ui.port 0: any free port).
constexpr ConfigKeyRange kRanges[] = {
    {"nimbus.monitor.freq.secs", 1, kDay},
    {"nimbus.supervisor.timeout.secs", 1, kDay},
    {"nimbus.task.launch.secs", 1, kDay},
    {"nimbus.task.timeout.secs", 1, kDay},
    {"storm.zookeeper.connection.timeout", 1, kHourMillis},
    {"storm.zookeeper.port", 1, 65535},
    {"storm.zookeeper.retry.interval", 0, kHourMillis},
    {"storm.zookeeper.retry.intervalceiling.millis", 0, kHourMillis},
    {"storm.zookeeper.retry.times", 0, 1000000},
    {"storm.zookeeper.session.timeout", 1, kHourMillis},
    {"supervisor.heartbeat.frequency.secs", 1, kDay},
    {"supervisor.monitor.frequency.secs", 1, kDay},
    {"supervisor.slots.ports", 1, 65535, false, true},
    {"supervisor.worker.shutdown.sleep.secs", 0, kDay},
    {"supervisor.worker.start.timeout.secs", 1, kDay},
    {"supervisor.worker.timeout.secs", 1, kDay},
    {"tempest.api.descriptor.reserve", 0, 4096},
    {"tempest.api.max.body.bytes", 1024, 1 << 30},
    {"tempest.api.max.connections", 1, 65536},
    {"tempest.api.max.connections.per.peer", 1, 65536},
    {"tempest.api.max.header.bytes", 1024, 1 << 20},
    {"tempest.api.request.timeout.secs", 1, 3600},
    {"tempest.supervisor.metrics.port", 0, 65535},
    {"tempest.transport.descriptor.reserve", 0, 4096},
    {"tempest.transport.max.connections", 1, 65536},
    {"tempest.transport.max.connections.per.peer", 1, 65536},
    {"tempest.transport.max.frame.bytes", 4096, 1 << 30},
    {"topology.acker.executors", 0, kIntMax, true},
    {"topology.max.spout.pending", 1, kIntMax, true},
    {"topology.max.task.parallelism", 1, kIntMax, true},
    {"topology.message.timeout.secs", 1, kIntMax},
    {"topology.subprocess.timeout.secs", 1, kIntMax, true},
    {"topology.tick.tuple.freq.secs", 1, kIntMax, true},
    {"topology.workers", 1, kIntMax},
    {"ui.port", 0, 65535},
    {"worker.heartbeat.frequency.secs", 1, kDay},
};
static_assert(std::is_sorted(std::begin(kRanges), std::end(kRanges),
                             [](const ConfigKeyRange& a, const ConfigKeyRange& b) {
                               return a.key < b.key;
                             }));

// Keys whose value is not an integer, checked as strictly as the ranges
// because each decides who may do what: a value that does not mean exactly
// true or false, or is not a string, refuses to start rather than quietly
// falling back to a default. Sorted by key.
enum class KeyKind { kBool, kString, kSecretString, kStringList };
struct KeyOfKind {
  std::string_view key;
  KeyKind kind;
};
constexpr KeyOfKind kKinds[] = {
    {"nimbus.authorizer", KeyKind::kString},
    {"storm.zookeeper.auth.payload", KeyKind::kSecretString},
    {"storm.zookeeper.auth.scheme", KeyKind::kString},
    {"supervisor.worker.user", KeyKind::kString},
    {"tempest.api.allowed.hosts", KeyKind::kStringList},
    {"tempest.api.auth.reads", KeyKind::kBool},
    {"tempest.api.token.file", KeyKind::kString},
    {"tempest.supervisor.metrics.host", KeyKind::kString},
    {"tempest.zookeeper.offsets.world.readable", KeyKind::kBool},
    {"ui.host", KeyKind::kString},
};
static_assert(std::is_sorted(std::begin(kKinds), std::end(kKinds),
                             [](const KeyOfKind& a, const KeyOfKind& b) { return a.key < b.key; }));

std::optional<KeyKind> KindOfKey(std::string_view key) {
  auto it = std::lower_bound(std::begin(kKinds), std::end(kKinds), key,
                             [](const KeyOfKind& k, std::string_view x) { return k.key < x; });
  if (it == std::end(kKinds) || it->key != key) return std::nullopt;
  return it->kind;
}

// A YAML boolean as the loader resolves it (true/false, and YAML 1.1's
// yes/no/on/off, as Storm's SnakeYAML does), or the string "true" or
// "false" in any case (a quoted value, a JSON string). 1, 0 and every
// other word are not booleans.
std::optional<bool> StrictBool(const api::Value& v) {
  if (std::optional<bool> b = v.TryBool()) return b;
  if (!v.is_string()) return std::nullopt;
  const std::string lower = absl::AsciiStrToLower(v.AsString());
  if (lower == "true") return true;
  if (lower == "false") return false;
  return std::nullopt;
}

// A value as quoted in a message: at most 80 characters of it.
std::string Shown(const api::Value& v) {
  std::string text = v.DebugString();
  if (text.size() > 80) text = absl::StrCat(text.substr(0, 80), "...");
  return text;
}

bool InRange(const api::Value& v, const ConfigKeyRange& r) {
  absl::StatusOr<int64_t> i = v.CoerceInt();
  return i.ok() && *i >= r.min && *i <= r.max;
}

}  // namespace

std::optional<ConfigKeyRange> RangeOfKey(std::string_view key) {
  auto it = std::lower_bound(std::begin(kRanges), std::end(kRanges), key,
                             [](const ConfigKeyRange& r, std::string_view k) { return r.key < k; });
  if (it == std::end(kRanges) || it->key != key) return std::nullopt;
  return *it;
}

namespace {

absl::Status CheckKindOfValue(std::string_view key, KeyKind kind, const api::Value& value) {
  bool ok = false;
  std::string_view wanted;
  switch (kind) {
    case KeyKind::kBool:
      ok = StrictBool(value).has_value();
      wanted = "true or false";
      break;
    case KeyKind::kString:
    case KeyKind::kSecretString:
      // Null: not set (Storm's default for each of these).
      ok = value.is_nil() || value.is_string();
      wanted = "a string";
      break;
    case KeyKind::kStringList:
      ok = value.is_nil() || (value.is_list() && std::all_of(value.AsList().begin(),
                                                             value.AsList().end(),
                                                             [](const api::Value& e) {
                                                               return e.is_string();
                                                             }));
      wanted = "a list of strings";
      break;
  }
  if (ok) return absl::OkStatus();
  // A secret is never quoted, not even when it is malformed.
  const std::string got = kind == KeyKind::kSecretString
                              ? absl::StrCat("a value of type ", api::Sv(api::Value::TypeName(
                                                                     value.type())))
                              : Shown(value);
  return absl::InvalidArgumentError(
      absl::StrCat("config ", api::Sv(key), " must be ", api::Sv(wanted), ", got ", got));
}

}  // namespace

absl::StatusOr<bool> ConfigBool(const api::Config& config, std::string_view key,
                                bool default_value) {
  const api::Value* v = config.Find(key);
  if (v == nullptr) return default_value;
  // Null where null is not refused (a key without a kind): the default.
  if (v->is_nil() && KindOfKey(key) != KeyKind::kBool) return default_value;
  if (std::optional<bool> b = StrictBool(*v)) return *b;
  return CheckKindOfValue(key, KeyKind::kBool, *v);
}

absl::Status CheckConfigValue(std::string_view key, const api::Value& value) {
  if (std::optional<KeyKind> kind = KindOfKey(key)) return CheckKindOfValue(key, *kind, value);
  std::optional<ConfigKeyRange> range = RangeOfKey(key);
  if (!range) return absl::OkStatus();
  if (value.is_nil() && range->nullable) return absl::OkStatus();
  bool ok = !value.is_nil();
  if (ok && range->list) {
    ok = value.is_list();
    for (size_t i = 0; ok && i < value.AsList().size(); ++i) ok = InRange(value.AsList()[i], *range);
  } else if (ok) {
    ok = InRange(value, *range);
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "config ", api::Sv(key), " must be ", range->list ? "a list of integers" : "an integer",
      " from ", range->min, " to ", range->max, range->nullable ? " or null" : "", ", got ",
      Shown(value)));
}

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
