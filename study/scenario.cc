#include "study/scenario.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace tempest::study {
namespace {

// Where a kind can run: anywhere, or only in the multi-host world (`tempest
// study --hosts`), as every network partition.
enum class World { kAny, kHosts };
// Whether a scenario of the kind must give a duration_s > 0: the faults that
// act over a window do; single events and the restarts (kill-supervisor,
// kill-nimbus, kill-zk-leader, which may come back at once) do not.
enum class Window { kOptional, kRequired };

// The one list of fault kinds: everything the parser, the help text and the
// injector's dispatch need to know about a kind.
struct KindInfo {
  FaultKind kind;
  std::string_view name;
  World world;
  Window window;
  std::string_view description;
};

constexpr KindInfo kKinds[] = {
    {FaultKind::kKillWorker, "kill-worker", World::kAny, Window::kOptional,
     "SIGKILL the workers running the spouts"},
    {FaultKind::kPauseWorker, "pause-worker", World::kAny, Window::kRequired,
     "SIGSTOP the spouts' workers for duration_s, then SIGCONT"},
    {FaultKind::kKillSupervisor, "kill-supervisor", World::kAny, Window::kOptional,
     "SIGKILL a supervisor and its workers; restart it after duration_s"},
    {FaultKind::kKillNimbus, "kill-nimbus", World::kAny, Window::kOptional,
     "SIGKILL nimbus; restart it after duration_s"},
    {FaultKind::kZkSessionExpiry, "zk-session-expiry", World::kAny, Window::kRequired,
     "cut the spouts' ZooKeeper connections for duration_s (sessions expire)"},
    {FaultKind::kKillZkLeader, "kill-zk-leader", World::kAny, Window::kOptional,
     "SIGKILL the ZooKeeper leader; restart it after duration_s"},
    {FaultKind::kZkQuorumLoss, "zk-quorum-loss", World::kAny, Window::kRequired,
     "SIGSTOP two of three ZooKeeper servers for duration_s"},
    {FaultKind::kKafkaBrokerDown, "kafka-broker-down", World::kAny, Window::kRequired,
     "take the Kafka broker down for duration_s"},
    {FaultKind::kRetention, "retention", World::kAny, Window::kOptional,
     "stop the topologies while retention deletes past their committed offsets; resubmit"},
    {FaultKind::kBoltFailures, "bolt-failures", World::kAny, Window::kRequired,
     "the transform fails fail_fraction of its inputs for duration_s"},
    {FaultKind::kSlowBolt, "slow-bolt", World::kAny, Window::kRequired,
     "the transform sleeps delay_ms per input for duration_s"},
    {FaultKind::kRestartTopology, "restart-topology", World::kAny, Window::kOptional,
     "kill -w every topology and resubmit it"},
    {FaultKind::kZkOverload, "zk-overload", World::kAny, Window::kRequired,
     "pause every ZooKeeper server 1.6 s of each 2 s for duration_s (commits slower than their "
     "interval)"},
    {FaultKind::kZkAclRevoked, "zk-acl-revoked", World::kAny, Window::kRequired,
     "an operator makes the spouts' offset nodes read-only to their identity; restore after "
     "duration_s"},
    {FaultKind::kZkMisconfigured, "zk-misconfigured", World::kAny, Window::kOptional,
     "resubmit with a zkServers chroot that does not exist, then with a dead server in zkServers"},
    {FaultKind::kRebalance, "rebalance", World::kAny, Window::kOptional,
     "rebalance -w 0 the transform from 1 to 2 executors; back to 1 after duration_s"},
    {FaultKind::kUpgrade, "upgrade", World::kAny, Window::kOptional,
     "tempest upgrade every topology to a copy of itself under another name"},
    {FaultKind::kPartitionWorkerPair, "partition-worker-pair", World::kHosts, Window::kRequired,
     "each pipeline's two workers' hosts cannot reach each other for duration_s (--hosts)"},
    {FaultKind::kPartitionSpoutZk, "partition-spout-zk", World::kHosts, Window::kRequired,
     "the spouts' hosts lose every ZooKeeper member for duration_s; Kafka stays (--hosts)"},
    {FaultKind::kPartitionSupervisorHost, "partition-supervisor-host", World::kHosts,
     Window::kRequired,
     "the supervisor host running the most spouts is cut off from every host for duration_s "
     "(--hosts)"},
    {FaultKind::kPartitionNimbusLeader, "partition-nimbus-leader", World::kHosts, Window::kRequired,
     "the leading nimbus's host is cut off from every host for duration_s (--hosts)"},
    {FaultKind::kPartitionZkMinority, "partition-zk-minority", World::kHosts, Window::kRequired,
     "one ZooKeeper member is cut off from the other two for duration_s (--hosts)"},
    {FaultKind::kLossyNetwork, "lossy-network", World::kHosts, Window::kRequired,
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
  - name: rebalance-under-load
    fault: rebalance
    duration_s: 8
    description: >-
      While records flow, the transform bolt is rebalanced from one executor
      to two (tempest rebalance -w 0 -e transform=2) and, 8 s later, back
      to one, each time waiting for the new assignment to settle. Only the
      worker that runs the transform restarts (after draining); the
      pipeline's other worker is left alone and switches its routes in place.
  - name: upgrade-under-load
    fault: upgrade
    description: >-
      While records flow, every pipeline is replaced by a copy of itself under
      another name with tempest upgrade (the copy submitted inactive, the old
      one killed with a 5 s wait and waited out until no partition has an
      owner, the copy activated). Its offsets stay in place, so the copy reads
      on from the old one's last commits.
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

// The entry of `kind` in the one list; null for a value outside the enum.
const KindInfo* Find(FaultKind kind) {
  for (const KindInfo& k : kKinds) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

bool NeedsDuration(FaultKind kind) {
  const KindInfo* info = Find(kind);
  return info != nullptr && info->window == Window::kRequired;
}

// Where the keys that only some faults take were given, for the errors
// found once the fault is known.
struct FaultKeyNodes {
  std::optional<YAML::Node> fail_fraction, delay, duration, loss;

  void Remember(const std::string& key, const YAML::Node& value) {
    if (key == "fail_fraction") fail_fraction = value;
    if (key == "delay_ms") delay = value;
    if (key == "duration_s") duration = value;
    if (key == "loss_percent") loss = value;
  }
};

absl::Status ParseName(const std::string& source, const YAML::Node& v, Scenario& s) {
  ASSIGN_OR_RETURN(std::string name, As<std::string>(source, v, "name"));
  if (!ValidName(name)) {
    return Bad(source, v,
               absl::StrCat("name '", name, "' must be 1-48 characters of a-z, 0-9 and '-'"));
  }
  s.name = name;
  return absl::OkStatus();
}

absl::Status ParseFault(const std::string& source, const YAML::Node& v, Scenario& s) {
  ASSIGN_OR_RETURN(std::string kind, As<std::string>(source, v, "fault"));
  absl::StatusOr<FaultKind> parsed = ParseFaultKind(kind);
  if (!parsed.ok()) return Bad(source, v, std::string(parsed.status().message()));
  s.fault = *parsed;
  return absl::OkStatus();
}

// `at`: a fraction of the production window, or [min, max].
absl::Status ParseAt(const std::string& source, const YAML::Node& v, Scenario& s) {
  if (v.IsSequence()) {
    if (v.size() != 2) return Bad(source, v, "at must be a fraction or [min, max]");
    ASSIGN_OR_RETURN(s.at_min, As<double>(source, v[0], "at"));
    ASSIGN_OR_RETURN(s.at_max, As<double>(source, v[1], "at"));
  } else {
    ASSIGN_OR_RETURN(double at, As<double>(source, v, "at"));
    s.at_min = s.at_max = at;
  }
  if (!(s.at_min >= 0 && s.at_max <= 1 && s.at_min <= s.at_max)) {
    return Bad(source, v, "at must lie within [0, 1] with min <= max");
  }
  return absl::OkStatus();
}

// The numeric keys, each within its bounds.
absl::Status ParseNumber(const std::string& source, const std::string& key, const YAML::Node& v,
                         Scenario& s) {
  if (key == "duration_s") {
    ASSIGN_OR_RETURN(double d, As<double>(source, v, key));
    if (!(d >= 0 && d <= 600)) return Bad(source, v, "duration_s must be within [0, 600]");
    s.duration_s = d;
  } else if (key == "fail_fraction") {
    ASSIGN_OR_RETURN(double f, As<double>(source, v, key));
    if (!(f > 0 && f <= 1)) return Bad(source, v, "fail_fraction must be within (0, 1]");
    s.fail_fraction = f;
  } else if (key == "delay_ms") {
    ASSIGN_OR_RETURN(int64_t d, As<int64_t>(source, v, key));
    if (d < 1 || d > 10'000) return Bad(source, v, "delay_ms must be within [1, 10000]");
    s.delay_ms = d;
  } else {
    ASSIGN_OR_RETURN(int l, As<int>(source, v, key));
    if (l < 1 || l > 50) return Bad(source, v, "loss_percent must be within [1, 50]");
    s.loss_percent = l;
  }
  return absl::OkStatus();
}

// One `key: value` of a scenario mapping into `s`; `key_node` places the
// error about an unknown key.
absl::Status ParseKey(const std::string& source, const std::string& key, const YAML::Node& key_node,
                      const YAML::Node& v, Scenario& s) {
  if (key == "name") return ParseName(source, v, s);
  if (key == "fault") return ParseFault(source, v, s);
  if (key == "description") {
    ASSIGN_OR_RETURN(s.description, As<std::string>(source, v, key));
    return absl::OkStatus();
  }
  if (key == "at") return ParseAt(source, v, s);
  if (key == "duration_s" || key == "fail_fraction" || key == "delay_ms" || key == "loss_percent") {
    return ParseNumber(source, key, v, s);
  }
  return Bad(source, key_node,
             absl::StrCat("unknown key '", key,
                          "' (name, fault, description, at, duration_s, fail_fraction, "
                          "delay_ms, loss_percent)"));
}

// What the scenario's fault requires of the keys given (or not) with it.
absl::Status CheckFaultKeys(const std::string& source, const YAML::Node& node, const Scenario& s,
                            const FaultKeyNodes& given) {
  const std::string fault(FaultKindName(s.fault));
  if (NeedsDuration(s.fault) && s.duration_s <= 0) {
    return Bad(source, given.duration.value_or(node),
               absl::StrCat("fault ", fault, " needs duration_s > 0"));
  }
  if (given.fail_fraction.has_value() && s.fault != FaultKind::kBoltFailures) {
    return Bad(source, *given.fail_fraction,
               absl::StrCat("fail_fraction applies to bolt-failures, not ", fault));
  }
  if (given.delay.has_value() && s.fault != FaultKind::kSlowBolt) {
    return Bad(source, *given.delay, absl::StrCat("delay_ms applies to slow-bolt, not ", fault));
  }
  if (given.loss.has_value() && s.fault != FaultKind::kLossyNetwork) {
    return Bad(source, *given.loss,
               absl::StrCat("loss_percent applies to lossy-network, not ", fault));
  }
  return absl::OkStatus();
}

absl::StatusOr<Scenario> ParseOne(const std::string& source, const YAML::Node& node) {
  if (!node.IsMap()) return Bad(source, node, "a scenario must be a mapping");
  Scenario s;
  std::set<std::string> keys;
  FaultKeyNodes given;
  for (const auto& kv : node) {
    const std::string key = kv.first.Scalar();
    if (!keys.insert(key).second) {
      return Bad(source, kv.first, absl::StrCat("key '", key, "' is given twice"));
    }
    given.Remember(key, kv.second);
    RETURN_IF_ERROR(ParseKey(source, key, kv.first, kv.second, s));
  }
  if (!keys.contains("name")) return Bad(source, node, "a scenario needs a name");
  if (!keys.contains("fault")) {
    return Bad(source, node, absl::StrCat("scenario '", s.name, "' needs a fault"));
  }
  RETURN_IF_ERROR(CheckFaultKeys(source, node, s, given));
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
  const KindInfo* info = Find(kind);
  return info != nullptr && info->world == World::kHosts;
}

std::string_view FaultKindName(FaultKind kind) {
  const KindInfo* info = Find(kind);
  return info != nullptr ? info->name : "unknown";
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
    ASSIGN_OR_RETURN(Scenario s, ParseOne(source, node));
    if (!names.insert(s.name).second) {
      return Bad(source, node, absl::StrCat("scenario '", s.name, "' is defined twice"));
    }
    out.push_back(std::move(s));
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
