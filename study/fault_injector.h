#ifndef TEMPEST_STUDY_FAULT_INJECTOR_H_
#define TEMPEST_STUDY_FAULT_INJECTOR_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "study/scenario.h"
#include "study/study_world.h"
#include "study/zk_acl_operator.h"
#include "study/zk_duty_cycle.h"

namespace tempest::study {

// zk-overload: every ZooKeeper server is stopped this long of each period.
// The pause is longer than the spouts' 500 ms commit interval, so commits
// wait longer than the interval, and shorter than the world's clients' read
// timeout (2/3 of its 4 s session timeout) and the servers' 3 s sync limit,
// so no connection, session or leader is lost: ZooKeeper is slow, not down.
inline constexpr std::chrono::milliseconds kOverloadPeriod{2000};
inline constexpr std::chrono::milliseconds kOverloadPaused{1600};
// zk-misconfigured: the chroot the spouts are given first; it never exists.
inline constexpr char kMissingChroot[] = "/tempest-study-no-such-chroot";

// What a fault needs from the scenario it hits, beyond the cluster's levers:
// its own topologies, its producer and its clock. The scenario run implements
// it; every call comes from the main thread.
class FaultTargets {
 public:
  virtual ~FaultTargets() = default;
  // Seconds since production started.
  virtual double Now() const = 0;
  // The workers running the scenario's spouts.
  virtual std::vector<StudyWorld::Worker> SpoutWorkers() const = 0;
  virtual absl::Status KillTopologies() = 0;
  virtual absl::Status SubmitTopologies() = 0;
  // Retention: production pauses while the topologies die, then goes on with
  // records big enough for retention to delete them unread.
  virtual void HoldProduction(bool held) = 0;
  virtual void ProduceBigRecords() = 0;
  // Retention: while the topologies are gone, records what was deleted
  // between their committed offsets and the new log start.
  virtual absl::Status RecordRetentionLoss() = 0;
  // A remark every run of the scenario reports as a violation.
  virtual void Note(std::string note) = 0;
  // zk-acl-revoked: the offset nodes the scenario's spouts have written.
  virtual std::vector<std::string> OffsetNodes() = 0;
  // zk-misconfigured: submits every topology again (they must be gone) with
  // its spout's zkServers changed, without waiting for it to run.
  enum class ZkServers {
    kMissingChroot,  // the servers followed by a chroot that does not exist
    kDeadFirst,      // an address where nothing listens, then the servers
  };
  virtual absl::Status SubmitTopologiesWith(ZkServers servers) = 0;
  // Waits up to `timeout` until every topology's worker log contains
  // `needle`; NotFound naming those whose log does not.
  virtual absl::Status WaitWorkerLogs(std::string_view needle, std::chrono::seconds timeout) = 0;
  // Waits up to `timeout` until every spout reads its partitions.
  virtual absl::Status WaitSpoutsRunning(std::chrono::seconds timeout) = 0;
  // Partitions: every worker of the scenario's topologies (spouts or not).
  virtual std::vector<StudyWorld::Worker> TopologyWorkers() const = 0;
  // rebalance: `tempest rebalance NAME -w 0 -e transform=EXECUTORS` for
  // every topology, then waits until each one's workers run the new
  // assignment (PipelineRebalancer).
  virtual absl::Status RebalanceTopologies(int executors) = 0;
  // upgrade: `tempest upgrade NAME COPY.yaml` for every topology at once
  // (PipelineUpgrader); from then on the topologies are the copies.
  virtual absl::Status UpgradeTopologies() = 0;
};

// What a partition fault cut, for the scenario to measure against: the hosts
// it touched and when each was completely cut (the last of its rules in
// place; FaultTargets::Now seconds), the topologies whose spout ran on a
// host cut from ZooKeeper (they must fence themselves) with that host, and,
// for partition-nimbus-leader, the host of the nimbus that led.
struct PartitionCut {
  std::vector<std::string> hosts;
  std::map<std::string, double> cut_at;
  std::map<std::string, std::string> fenced_topology_hosts;  // topology id -> host
  std::string old_leader_host;
};

// Injects one scenario's fault and heals it, per FaultKind, remembering what
// it hit (paused pids, the killed supervisor or ZooKeeper server) so that
// Heal undoes exactly that, and when each happened. Main thread only (it
// signals and restarts the world's child processes). `world` is not touched
// by the faults that only switch the transform or the topologies
// (bolt-failures, slow-bolt, restart-topology, retention, kill-worker,
// zk-misconfigured, rebalance, upgrade), so it may be null for those.
class FaultInjector {
 public:
  FaultInjector(StudyWorld* world, FaultKind kind, const FaultPlan& plan,
                std::string switch_file, FaultTargets& targets)
      : world_(world),
        kind_(kind),
        plan_(plan),
        switch_file_(std::move(switch_file)),
        targets_(targets) {}

  // Marks the fault injected and its start time, then injects it. An error
  // leaves it injected: Heal still undoes what did happen.
  absl::Status Inject();
  // Marks it healed, undoes it, then records the end time.
  absl::Status Heal();

  bool injected() const { return injected_; }
  bool healed() const { return healed_; }
  std::optional<double> start_s() const { return start_s_; }
  std::optional<double> end_s() const { return end_s_; }
  const PartitionCut& partition_cut() const { return cut_; }

 private:
  // The partitions (NeedsHosts): the hosts to cut, cut, and the moment each
  // was cut recorded in cut_.
  absl::Status InjectPartition();
  absl::Status CutWorkerPairs(devcluster::NetnsHosts& hosts);
  absl::Status CutSpoutsFromZooKeeper(devcluster::NetnsHosts& hosts,
                                      const std::vector<StudyWorld::Worker>& spouts,
                                      const std::vector<int>& spout_supervisors);
  absl::Status IsolateBusiestSupervisor(devcluster::NetnsHosts& hosts,
                                        const std::vector<StudyWorld::Worker>& spouts);
  absl::Status IsolateNimbusLeader(devcluster::NetnsHosts& hosts);
  absl::Status CutZooKeeperMinority(devcluster::NetnsHosts& hosts);
  absl::Status DropPackets(devcluster::NetnsHosts& hosts,
                           const std::vector<int>& spout_supervisors);
  // Every pair of `host` and a ZooKeeper member cut.
  absl::Status CutFromZooKeeper(devcluster::NetnsHosts& hosts, const std::string& host);
  // The topologies whose spout runs on `supervisor`: cut from ZooKeeper
  // there, they must stop on their own.
  void FenceSpoutsOf(const std::vector<StudyWorld::Worker>& spouts, int supervisor);
  // Once `s` says its rules are all in place, every host in cut_.hosts not
  // yet marked is cut off now; returns `s`.
  absl::Status MarkCut(absl::Status s);
  absl::Status HealPartition();
  // Undoes a fault that is not a partition.
  absl::Status Undo();

  absl::Status InjectIntoWorkers();
  void KillSupervisorOfASpout();
  absl::Status PauseZooKeeperQuorum();
  absl::Status InjectRetention();
  absl::Status SwitchTransform(bool on);
  absl::Status RevokeOffsetAcls();
  absl::Status RestoreOffsetAcls();
  // zk-acl-revoked's operator, with its client's files beside the switch file.
  ZkAclOperator AclOperator() const;
  absl::Status Misconfigure();

  StudyWorld* world_;
  const FaultKind kind_;
  const FaultPlan plan_;
  const std::string switch_file_;  // present while the transform fails or slows down
  FaultTargets& targets_;

  bool injected_ = false;
  bool healed_ = false;
  std::optional<double> start_s_;
  std::optional<double> end_s_;
  std::vector<pid_t> paused_;
  int killed_supervisor_ = -1;
  int killed_zk_ = -1;
  std::vector<int> paused_zk_;
  std::unique_ptr<ZkDutyCycle> duty_cycle_;  // zk-overload
  std::vector<std::string> revoked_;         // zk-acl-revoked: nodes the operator changed
  std::vector<std::string> revoked_acls_;  // their ACLs before (setAcl form)
  PartitionCut cut_;                         // the partition kinds
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_FAULT_INJECTOR_H_
