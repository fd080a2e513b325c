#include "study/scenario.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "yaml-cpp/yaml.h"

namespace tempest::study {
namespace {

struct KindInfo {
  FaultKind kind;
  std::string_view name;
  std::string_view description;
};

constexpr KindInfo kKinds[] = {
    {FaultKind::kKillWorker, "kill-worker", "SIGKILL the workers running the spouts"},
    {FaultKind::kPauseWorker, "pause-worker",
     "SIGSTOP the spouts' workers for duration_s, then SIGCONT"},
    {FaultKind::kKillSupervisor, "kill-supervisor",
     "SIGKILL a supervisor and its workers; restart it after duration_s"},
    {FaultKind::kKillNimbus, "kill-nimbus", "SIGKILL nimbus; restart it after duration_s"},
    {FaultKind::kZkSessionExpiry, "zk-session-expiry",
     "cut the spouts' ZooKeeper connections for duration_s (sessions expire)"},
    {FaultKind::kKillZkLeader, "kill-zk-leader",
     "SIGKILL the ZooKeeper leader; restart it after duration_s"},
    {FaultKind::kZkQuorumLoss, "zk-quorum-loss",
     "SIGSTOP two of three ZooKeeper servers for duration_s"},
    {FaultKind::kKafkaBrokerDown, "kafka-broker-down", "take the Kafka broker down for duration_s"},
    {FaultKind::kRetention, "retention",
     "stop the topologies while retention deletes past their committed offsets; resubmit"},
    {FaultKind::kBoltFailures, "bolt-failures",
     "the transform fails fail_fraction of its inputs for duration_s"},
    {FaultKind::kSlowBolt, "slow-bolt", "the transform sleeps delay_ms per input for duration_s"},
    {FaultKind::kRestartTopology, "restart-topology", "kill -w every topology and resubmit it"},
    {FaultKind::kZkOverload, "zk-overload",
     "pause every ZooKeeper server 1.6 s of each 2 s for duration_s (commits slower than their "
     "interval)"},
    {FaultKind::kZkAclRevoked, "zk-acl-revoked",
     "an operator makes the spouts' offset nodes read-only to their identity; restore after "
     "duration_s"},
    {FaultKind::kZkMisconfigured, "zk-misconfigured",
     "resubmit with a zkServers chroot that does not exist, then with a dead server in zkServers"},
    {FaultKind::kPartitionWorkerPair, "partition-worker-pair",
     "each pipeline's two workers' hosts cannot reach each other for duration_s (--hosts)"},
    {FaultKind::kPartitionSpoutZk, "partition-spout-zk",
     "the spouts' hosts lose every ZooKeeper member for duration_s; Kafka stays (--hosts)"},
    {FaultKind::kPartitionSupervisorHost, "partition-supervisor-host",
     "the supervisor host running the most spouts is cut off from every host for duration_s "
     "(--hosts)"},
    {FaultKind::kPartitionNimbusLeader, "partition-nimbus-leader",
     "the leading nimbus's host is cut off from every host for duration_s (--hosts)"},
    {FaultKind::kPartitionZkMinority, "partition-zk-minority",
     "one ZooKeeper member is cut off from the other two for duration_s (--hosts)"},
    {FaultKind::kLossyNetwork, "lossy-network",
     "a spout's host drops loss_percent of its packets for duration_s (--hosts)"},
};

// The built-in scenarios, in exactly the format users write.
constexpr std::string_view kBuiltinYaml =
    R"(# Built-in scenarios of `tempest study`. Each starts its fault at a seeded
# random point between at[0] and at[1] of the production window.
scenarios:
  - name: worker-kill
    fault: kill-worker
    description: The spout's worker dies (SIGKILL); its supervisor starts it again.
  - name: supervisor-kill
    fault: kill-supervisor
    duration_s: 15
    description: >-
      A machine dies: a supervisor and its workers are SIGKILLed; nimbus moves the
      workers to the other supervisor; the dead one comes back after 15 s.
  - name: nimbus-kill
    fault: kill-nimbus
    duration_s: 8
    description: Nimbus dies for 8 s; running topologies should not notice.
  - name: zk-session-expiry
    fault: zk-session-expiry
    duration_s: 8
    description: >-
      The spout's ZooKeeper connections are cut for 8 s, twice its session
      timeout, so ZooKeeper expires its session and its ownership nodes.
  - name: zk-leader-kill
    fault: kill-zk-leader
    duration_s: 8
    description: The ZooKeeper leader dies; the ensemble elects another; it rejoins after 8 s.
  - name: zk-quorum-loss
    fault: zk-quorum-loss
    duration_s: 10
    description: Two of three ZooKeeper servers stop for 10 s; no commit can succeed meanwhile.
  - name: zombie-spout
    fault: pause-worker
    duration_s: 8
    description: >-
      The spout's worker freezes (SIGSTOP) for 8 s, past its session timeout, then
      wakes up believing it still owns its partitions.
  - name: kafka-broker-down
    fault: kafka-broker-down
    duration_s: 8
    description: The Kafka broker is unreachable for 8 s.
  - name: retention-past-offset
    fault: retention
    at: [0.25, 0.5]
    description: >-
      The topologies are down while production goes on and retention deletes
      records past their committed offsets; they are resubmitted at the end.
  - name: bolt-failures
    fault: bolt-failures
    fail_fraction: 0.1
    duration_s: 8
    description: The transform bolt fails 10% of its inputs for 8 s.
  - name: slow-bolt
    fault: slow-bolt
    delay_ms: 20
    duration_s: 10
    description: >-
      The transform bolt takes 20 ms per input for 10 s, so tuples queued
      behind it outlive the 4 s message timeout and are replayed while the
      originals are still on their way.
  - name: clean-restart
    fault: restart-topology
    description: The control. Every topology is killed with kill -w and submitted again.
  - name: zk-overload
    fault: zk-overload
    duration_s: 10
    description: >-
      ZooKeeper is overloaded for 10 s: every server runs only 0.4 s of each 2 s,
      so offset commits take longer than the spout's 500 ms commit interval.
  - name: zk-permission-lost
    fault: zk-acl-revoked
    duration_s: 8
    description: >-
      An operator changes the ACL of the spouts' offset nodes so that their
      identity may only read them; 8 s later the ACL is restored.
  - name: zk-misconfigured
    fault: zk-misconfigured
    description: >-
      The topologies are resubmitted with a zkServers chroot that does not exist
      (the spouts must refuse to open), then with an unreachable server in front
      of the valid ones (they must work through the others).
# The partition scenarios run on the multi-host world (tempest study --hosts).
  - name: partition-worker-pair
    fault: partition-worker-pair
    duration_s: 8
    description: >-
      Each pipeline's two workers cannot reach each other for 8 s (the hosts
      they run on are cut pairwise) while every host still reaches ZooKeeper;
      the trees crossing the cut time out and the spout replays them.
  - name: partition-spout-zk
    fault: partition-spout-zk
    duration_s: 8
    description: >-
      The spouts' hosts reach Kafka but no ZooKeeper member for 8 s, twice the
      session timeout: each spout must stop emitting and committing within its
      session timeout, and resume without loss once healed.
  - name: partition-supervisor-host
    fault: partition-supervisor-host
    duration_s: 15
    description: >-
      The supervisor host running the most spouts is cut off from every other
      host for 15 s: nimbus moves its executors elsewhere, the isolated workers
      fence themselves, and none of their commits may land after the new owner
      took over.
  - name: partition-nimbus-leader
    fault: partition-nimbus-leader
    duration_s: 10
    description: >-
      The leading nimbus's host is cut off for 10 s: the standby takes over,
      and the old leader writes nothing once it has lost leadership.
  - name: partition-zk-minority
    fault: partition-zk-minority
    duration_s: 8
    description: >-
      One ZooKeeper member is cut off from the other two for 8 s; it loses
      quorum, drops its clients, and they move to the majority.
  - name: lossy-network
    fault: lossy-network
    loss_percent: 10
    duration_s: 10
    description: A host running a spout drops 10% of its packets for 10 s.
)";

std::string Where(const std::string& source, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return source;
  return absl::StrCat(source, ":", mark.line + 1);
}

absl::Status Bad(const std::string& source, const YAML::Node& node, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(Where(source, node), ": ", what));
}

// Scalar conversions that report instead of throwing.
template <typename T>
absl::StatusOr<T> As(const std::string& source, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) return Bad(source, node, absl::StrCat(key, " must be a scalar"));
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    return Bad(source, node, absl::StrCat(key, ": '", node.Scalar(), "' is not a valid value"));
  }
}

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 48) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// Faults that act over a window need a non-zero duration_s; the restarts
// (kill-supervisor, kill-nimbus, kill-zk-leader) may come back at once.
bool NeedsDuration(FaultKind kind) {
  if (NeedsHosts(kind)) return true;  // every partition is a window
  switch (kind) {
    case FaultKind::kPauseWorker:
    case FaultKind::kZkSessionExpiry:
    case FaultKind::kZkQuorumLoss:
    case FaultKind::kKafkaBrokerDown:
    case FaultKind::kBoltFailures:
    case FaultKind::kSlowBolt:
    case FaultKind::kZkOverload:
    case FaultKind::kZkAclRevoked:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<Scenario> ParseOne(const std::string& source, const YAML::Node& node) {
  if (!node.IsMap()) return Bad(source, node, "a scenario must be a mapping");
  Scenario s;
  bool has_name = false;
  bool has_fault = false;
  std::set<std::string> keys;
  // Where these keys were given, for errors found once the fault is known.
  std::optional<YAML::Node> fail_fraction_node, delay_node, duration_node, loss_node;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (!keys.insert(key).second) {
      return Bad(source, kv.first, absl::StrCat("key '", key, "' is given twice"));
    }
    if (key == "fail_fraction") fail_fraction_node = kv.second;
    if (key == "delay_ms") delay_node = kv.second;
    if (key == "duration_s") duration_node = kv.second;
    if (key == "loss_percent") loss_node = kv.second;
    const YAML::Node& v = kv.second;
    if (key == "name") {
      absl::StatusOr<std::string> name = As<std::string>(source, v, key);
      if (!name.ok()) return name.status();
      if (!ValidName(*name)) {
        return Bad(source, v, absl::StrCat("name '", *name,
                                           "' must be 1-48 characters of a-z, 0-9 and '-'"));
      }
      s.name = *name;
      has_name = true;
    } else if (key == "fault") {
      absl::StatusOr<std::string> kind = As<std::string>(source, v, key);
      if (!kind.ok()) return kind.status();
      absl::StatusOr<FaultKind> parsed = ParseFaultKind(*kind);
      if (!parsed.ok()) return Bad(source, v, std::string(parsed.status().message()));
      s.fault = *parsed;
      has_fault = true;
    } else if (key == "description") {
      absl::StatusOr<std::string> d = As<std::string>(source, v, key);
      if (!d.ok()) return d.status();
      s.description = *d;
    } else if (key == "at") {
      if (v.IsSequence()) {
        if (v.size() != 2) return Bad(source, v, "at must be a fraction or [min, max]");
        absl::StatusOr<double> lo = As<double>(source, v[0], key);
        absl::StatusOr<double> hi = As<double>(source, v[1], key);
        if (!lo.ok()) return lo.status();
        if (!hi.ok()) return hi.status();
        s.at_min = *lo;
        s.at_max = *hi;
      } else {
        absl::StatusOr<double> at = As<double>(source, v, key);
        if (!at.ok()) return at.status();
        s.at_min = s.at_max = *at;
      }
      if (!(s.at_min >= 0 && s.at_max <= 1 && s.at_min <= s.at_max)) {
        return Bad(source, v, "at must lie within [0, 1] with min <= max");
      }
    } else if (key == "duration_s") {
      absl::StatusOr<double> d = As<double>(source, v, key);
      if (!d.ok()) return d.status();
      if (!(*d >= 0 && *d <= 600)) return Bad(source, v, "duration_s must be within [0, 600]");
      s.duration_s = *d;
    } else if (key == "fail_fraction") {
      absl::StatusOr<double> f = As<double>(source, v, key);
      if (!f.ok()) return f.status();
      if (!(*f > 0 && *f <= 1)) return Bad(source, v, "fail_fraction must be within (0, 1]");
      s.fail_fraction = *f;
    } else if (key == "delay_ms") {
      absl::StatusOr<int64_t> d = As<int64_t>(source, v, key);
      if (!d.ok()) return d.status();
      if (*d < 1 || *d > 10'000) return Bad(source, v, "delay_ms must be within [1, 10000]");
      s.delay_ms = *d;
    } else if (key == "loss_percent") {
      absl::StatusOr<int> l = As<int>(source, v, key);
      if (!l.ok()) return l.status();
      if (*l < 1 || *l > 50) return Bad(source, v, "loss_percent must be within [1, 50]");
      s.loss_percent = *l;
    } else {
      return Bad(source, kv.first,
                 absl::StrCat("unknown key '", key,
                              "' (name, fault, description, at, duration_s, fail_fraction, "
                              "delay_ms, loss_percent)"));
    }
  }
  if (!has_name) return Bad(source, node, "a scenario needs a name");
  if (!has_fault) return Bad(source, node, absl::StrCat("scenario '", s.name, "' needs a fault"));
  const std::string fault(FaultKindName(s.fault));
  if (NeedsDuration(s.fault) && s.duration_s <= 0) {
    return Bad(source, duration_node.value_or(node),
               absl::StrCat("fault ", fault, " needs duration_s > 0"));
  }
  if (fail_fraction_node.has_value() && s.fault != FaultKind::kBoltFailures) {
    return Bad(source, *fail_fraction_node,
               absl::StrCat("fail_fraction applies to bolt-failures, not ", fault));
  }
  if (delay_node.has_value() && s.fault != FaultKind::kSlowBolt) {
    return Bad(source, *delay_node, absl::StrCat("delay_ms applies to slow-bolt, not ", fault));
  }
  if (loss_node.has_value() && s.fault != FaultKind::kLossyNetwork) {
    return Bad(source, *loss_node, absl::StrCat("loss_percent applies to lossy-network, not ", fault));
  }
  return s;
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

bool NeedsHosts(FaultKind kind) {
  switch (kind) {
    case FaultKind::kPartitionWorkerPair:
    case FaultKind::kPartitionSpoutZk:
    case FaultKind::kPartitionSupervisorHost:
    case FaultKind::kPartitionNimbusLeader:
    case FaultKind::kPartitionZkMinority:
    case FaultKind::kLossyNetwork:
      return true;
    case FaultKind::kKillWorker:
    case FaultKind::kPauseWorker:
    case FaultKind::kKillSupervisor:
    case FaultKind::kKillNimbus:
    case FaultKind::kZkSessionExpiry:
    case FaultKind::kKillZkLeader:
    case FaultKind::kZkQuorumLoss:
    case FaultKind::kKafkaBrokerDown:
    case FaultKind::kRetention:
    case FaultKind::kBoltFailures:
    case FaultKind::kSlowBolt:
    case FaultKind::kRestartTopology:
    case FaultKind::kZkOverload:
    case FaultKind::kZkAclRevoked:
    case FaultKind::kZkMisconfigured:
      return false;
  }
  return false;
}

std::string_view FaultKindName(FaultKind kind) {
  for (const KindInfo& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  return "unknown";
}

absl::StatusOr<FaultKind> ParseFaultKind(std::string_view name) {
  std::string known;
  for (const KindInfo& k : kKinds) {
    if (k.name == name) return k.kind;
    absl::StrAppend(&known, known.empty() ? "" : ", ", std::string(k.name));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown fault '", std::string(name), "' (one of: ", known, ")"));
}

std::vector<std::pair<FaultKind, std::string_view>> FaultKinds() {
  std::vector<std::pair<FaultKind, std::string_view>> out;
  for (const KindInfo& k : kKinds) out.emplace_back(k.kind, k.description);
  return out;
}

absl::StatusOr<std::vector<Scenario>> ParseScenarios(std::string_view yaml,
                                                     std::string_view source_name) {
  const std::string source(source_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        e.mark.line >= 0 ? absl::StrCat(source, ":", e.mark.line + 1) : source,
        ": not valid YAML: ", e.msg));
  }
  YAML::Node list = root;
  if (root.IsMap()) {
    if (root.size() != 1 || !root["scenarios"]) {
      return Bad(source, root, "expected a list of scenarios or a mapping with one key, scenarios");
    }
    list = root["scenarios"];
  }
  if (!list.IsSequence()) return Bad(source, list, "expected a list of scenarios");
  std::vector<Scenario> out;
  std::set<std::string> names;
  for (const YAML::Node& node : list) {
    absl::StatusOr<Scenario> s = ParseOne(source, node);
    if (!s.ok()) return s.status();
    if (!names.insert(s->name).second) {
      return Bad(source, node, absl::StrCat("scenario '", s->name, "' is defined twice"));
    }
    out.push_back(*std::move(s));
  }
  if (out.empty()) return Bad(source, list, "no scenarios");
  return out;
}

std::string_view BuiltinScenarioYaml() { return kBuiltinYaml; }

const std::vector<Scenario>& BuiltinScenarios() {
  static const std::vector<Scenario>* const scenarios = [] {
    absl::StatusOr<std::vector<Scenario>> parsed = ParseScenarios(kBuiltinYaml, "built-in");
    // The text above is ours: a parse failure is a bug caught by every test.
    if (!parsed.ok()) std::abort();
    return new std::vector<Scenario>(*std::move(parsed));
  }();
  return *scenarios;
}

std::vector<Scenario> DefaultScenarios(bool hosts) {
  std::vector<Scenario> out;
  for (const Scenario& s : BuiltinScenarios()) {
    if (NeedsHosts(s.fault) == hosts) out.push_back(s);
  }
  return out;
}

FaultPlan PlanFault(const Scenario& scenario, uint64_t seed, double production_s) {
  std::mt19937_64 rng(seed ^ Fnv1a(scenario.name));
  std::uniform_real_distribution<double> fraction(scenario.at_min, scenario.at_max);
  FaultPlan plan;
  const double f = scenario.at_min == scenario.at_max ? scenario.at_min : fraction(rng);
  // Milliseconds are all the precision a fault schedule has.
  plan.start_s = std::round(f * production_s * 1000.0) / 1000.0;
  plan.duration_s = scenario.duration_s;
  plan.loss_percent = scenario.loss_percent;
  plan.pick = rng();
  return plan;
}

}  // namespace tempest::study
