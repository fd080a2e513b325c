#ifndef TEMPEST_STUDY_SCENARIO_H_
#define TEMPEST_STUDY_SCENARIO_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tempest::study {

// What a scenario does to the running world. Each kind is one mechanism; a
// scenario picks one and says when and for how long.
enum class FaultKind {
  kKillWorker,       // SIGKILL the workers running the spouts; supervisors restart them
  kPauseWorker,      // SIGSTOP them past their ZooKeeper session timeout, then SIGCONT (zombie)
  kKillSupervisor,   // SIGKILL one supervisor and its workers; restart it after `duration`
  kKillNimbus,       // SIGKILL nimbus; restart it after `duration`
  kZkSessionExpiry,  // cut the spouts' ZooKeeper connections for `duration`, so the server expires
                     // their sessions
  kKillZkLeader,     // SIGKILL the ZooKeeper leader; restart it after `duration`
  kZkQuorumLoss,     // SIGSTOP two of the three ZooKeeper servers for `duration`
  kKafkaBrokerDown,  // take the Kafka broker down for `duration`
  kRetention,  // stop the topologies; retention deletes past their committed offsets; resubmit at
               // the end of production
  kBoltFailures,  // the transform bolt fails `fail_fraction` of its inputs for `duration`
  kSlowBolt,      // the transform bolt sleeps `delay_ms` per input for `duration` (tuples time out)
  kRestartTopology,  // `kill -w` every topology and submit it again (the control)
  kZkOverload,    // SIGSTOP/SIGCONT every ZooKeeper server, paused 80% of each 2 s, for `duration`
  kZkAclRevoked,  // an operator makes the spouts' offset nodes read-only to them; restores after
                  // `duration`
  kZkMisconfigured,  // resubmit with a chroot that does not exist, then with a dead server in
                     // zkServers
  kRebalance,  // `tempest rebalance -w 0` the transform to kRebalancedExecutors executors while
               // records flow; back to one after `duration_s`
  kUpgrade,    // `tempest upgrade NAME` to a copy of each topology (NAME + kUpgradedSuffix, the
               // same spout id, so its offsets stay in place) while records flow
  // Network partitions; these need the multi-host world (`tempest study --hosts`).
  kPartitionWorkerPair,      // each pipeline's two workers cannot reach each other (their hosts
                             // are cut pairwise); all still reach ZooKeeper, nimbus and Kafka
  kPartitionSpoutZk,         // the hosts running the spouts lose every ZooKeeper member; they
                             // keep Kafka, nimbus and the other hosts
  kPartitionSupervisorHost,  // the supervisor host running the most spouts is cut off from
                             // every other host
  kPartitionNimbusLeader,    // the leading nimbus's host is cut off from every other host
  kPartitionZkMinority,      // one ZooKeeper member is cut off from the other two; its clients
                             // must move to the majority
  kLossyNetwork,             // a host running a spout drops loss_percent of its packets
};

// rebalance: the bolt it rebalances and how many executors it splits it
// into. The study's transform runs as one executor over this many tasks
// (pipeline_topology.cc), so the split keeps every task in the worker that
// ran it and leaves the pipeline's other worker alone.
inline constexpr char kRebalancedBolt[] = "transform";
inline constexpr int kRebalancedExecutors = 2;

// upgrade: the name of each topology's copy is its name and this suffix
// (so the copy's workers still match "NAME-"), and the seconds its kill
// wait gives the old topology's trees in flight.
inline constexpr char kUpgradedSuffix[] = "-v2";
inline constexpr int kUpgradeWaitSecs = 5;

// True for the kinds that only run in the multi-host world.
bool NeedsHosts(FaultKind kind);

std::string_view FaultKindName(FaultKind kind);
absl::StatusOr<FaultKind> ParseFaultKind(std::string_view name);
// Every kind with a one-line description, for `tempest study --help` and docs.
std::vector<std::pair<FaultKind, std::string_view>> FaultKinds();

// One scenario: a fault, when it starts and how long it lasts. Users write
// these in YAML (see BuiltinScenarioYaml for the format). A plain value.
struct Scenario {
  std::string name;  // [a-z0-9-], at most 48 characters
  std::string description;
  FaultKind fault = FaultKind::kKillWorker;
  // The fault starts at a seeded random point of the production window,
  // between these fractions of it.
  double at_min = 0.25;
  double at_max = 0.6;
  double duration_s = 0;      // 0: the fault is a single event
  double fail_fraction = 0.1;  // kBoltFailures
  int64_t delay_ms = 20;       // kSlowBolt, per input
  int loss_percent = 10;       // kLossyNetwork
};

// Parses scenarios from YAML: a list of mappings, or a mapping with a
// `scenarios:` list. Keys: name, fault (required), description, at (a
// fraction, or [min, max]), duration_s, fail_fraction, delay_ms, loss_percent. Any other
// key, a bad value or a repeated name is an InvalidArgument naming `source`
// and the line. loss_percent (lossy-network) is within [1, 50].
absl::StatusOr<std::vector<Scenario>> ParseScenarios(std::string_view yaml,
                                                     std::string_view source);

// The built-in scenarios, in the order the study runs them, and their YAML.
// The partition scenarios (NeedsHosts) come last; a study without --hosts
// leaves them out of its default set (DefaultScenarios).
const std::vector<Scenario>& BuiltinScenarios();
// What `tempest study` runs without --scenario: the built-in scenarios of
// its world, the partition ones with `hosts`, the others without.
std::vector<Scenario> DefaultScenarios(bool hosts);
std::string_view BuiltinScenarioYaml();

// When a scenario's fault happens, drawn from the study's seed. Depends only
// on (seed, scenario name, production window), so a scenario's timing does
// not change when other scenarios are added or left out.
struct FaultPlan {
  double start_s = 0;     // seconds after production starts
  double duration_s = 0;  // from the scenario
  uint64_t pick = 0;      // chooses among equal targets (e.g. which supervisor)
  int loss_percent = 0;   // lossy-network, from the scenario
};
FaultPlan PlanFault(const Scenario& scenario, uint64_t seed, double production_s);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_SCENARIO_H_
