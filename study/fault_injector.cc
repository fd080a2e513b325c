#include "study/fault_injector.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "study/zk_acl_operator.h"

namespace tempest::study {
namespace {

// The supervisors `workers` run on, each once, in order.
std::vector<int> SupervisorsOf(const std::vector<StudyWorld::Worker>& workers) {
  std::vector<int> supervisors;
  for (const StudyWorld::Worker& w : workers) supervisors.push_back(w.supervisor);
  std::sort(supervisors.begin(), supervisors.end());
  supervisors.erase(std::unique(supervisors.begin(), supervisors.end()), supervisors.end());
  return supervisors;
}

// Every pair of supervisors (a < b) that one topology runs workers on: its
// tuple trees cross between them.
std::set<std::pair<int, int>> SupervisorPairsOfTopologies(
    const std::vector<StudyWorld::Worker>& workers) {
  std::map<std::string, std::set<int>> hosts_of;  // topology id -> its supervisors
  for (const StudyWorld::Worker& w : workers) hosts_of[w.topology_id].insert(w.supervisor);
  std::set<std::pair<int, int>> pairs;
  for (const auto& [id, supervisors] : hosts_of) {
    for (int a : supervisors) {
      for (int b : supervisors) {
        if (a < b) pairs.insert({a, b});
      }
    }
  }
  return pairs;
}

}  // namespace

absl::Status FaultInjector::Inject() {
  injected_ = true;
  start_s_ = targets_.Now();
  if (NeedsHosts(kind_)) return InjectPartition();
  switch (kind_) {
    case FaultKind::kKillWorker:
    case FaultKind::kPauseWorker:
      return InjectIntoWorkers();
    case FaultKind::kKillSupervisor:
      KillSupervisorOfASpout();
      break;
    case FaultKind::kKillNimbus:
      world_->KillNimbus();
      break;
    case FaultKind::kZkSessionExpiry:
      world_->CutSpoutZooKeeper(true);
      break;
    case FaultKind::kKillZkLeader:
      killed_zk_ = world_->zookeeper().LeaderIndex();
      if (killed_zk_ < 0) return absl::UnavailableError("ZooKeeper has no leader to kill");
      world_->zookeeper().Kill(killed_zk_);
      break;
    case FaultKind::kZkQuorumLoss:
      return PauseZooKeeperQuorum();
    case FaultKind::kKafkaBrokerDown:
      return world_->kafka().SetBrokerDown(1);
    case FaultKind::kRetention:
      return InjectRetention();
    case FaultKind::kBoltFailures:
    case FaultKind::kSlowBolt:
      return SwitchTransform(true);
    case FaultKind::kRestartTopology:
      RETURN_IF_ERROR(targets_.KillTopologies());
      return targets_.SubmitTopologies();
    case FaultKind::kZkOverload:
      duty_cycle_ =
          std::make_unique<ZkDutyCycle>(world_->zookeeper(), kOverloadPeriod, kOverloadPaused);
      break;
    case FaultKind::kZkAclRevoked:
      return RevokeOffsetAcls();
    case FaultKind::kZkMisconfigured:
      return Misconfigure();
    case FaultKind::kRebalance:
      return targets_.RebalanceTopologies(kRebalancedExecutors);
    case FaultKind::kUpgrade:
      return targets_.UpgradeTopologies();
    default:  // the partitions (NeedsHosts), injected above
      break;
  }
  return absl::OkStatus();
}

absl::Status FaultInjector::InjectPartition() {
  devcluster::NetnsCluster* cluster = world_ == nullptr ? nullptr : world_->multi_host();
  if (cluster == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        std::string(FaultKindName(kind_)), " needs the multi-host world (tempest study --hosts)"));
  }
  devcluster::NetnsHosts& hosts = cluster->hosts();
  const std::vector<StudyWorld::Worker> spouts = targets_.SpoutWorkers();
  const std::vector<int> spout_supervisors = SupervisorsOf(spouts);
  if (spout_supervisors.empty() && kind_ != FaultKind::kPartitionNimbusLeader &&
      kind_ != FaultKind::kPartitionZkMinority) {
    return absl::UnavailableError("no spout worker was found to cut off");
  }
  switch (kind_) {
    case FaultKind::kPartitionWorkerPair:
      return CutWorkerPairs(hosts);
    case FaultKind::kPartitionSpoutZk:
      return CutSpoutsFromZooKeeper(hosts, spouts, spout_supervisors);
    case FaultKind::kPartitionSupervisorHost:
      return IsolateBusiestSupervisor(hosts, spouts);
    case FaultKind::kPartitionNimbusLeader:
      return IsolateNimbusLeader(hosts);
    case FaultKind::kPartitionZkMinority:
      return CutZooKeeperMinority(hosts);
    case FaultKind::kLossyNetwork:
      return DropPackets(hosts, spout_supervisors);
    default:
      return absl::InternalError("not a partition fault");
  }
}

absl::Status FaultInjector::MarkCut(absl::Status s) {
  if (s.ok()) {
    for (const std::string& host : cut_.hosts) {
      if (!cut_.cut_at.contains(host)) cut_.cut_at[host] = targets_.Now();
    }
  }
  return s;
}

void FaultInjector::FenceSpoutsOf(const std::vector<StudyWorld::Worker>& spouts, int supervisor) {
  for (const StudyWorld::Worker& w : spouts) {
    if (w.supervisor == supervisor) {
      cut_.fenced_topology_hosts[w.topology_id] = StudyWorld::SupervisorHost(supervisor);
    }
  }
}

absl::Status FaultInjector::CutFromZooKeeper(devcluster::NetnsHosts& hosts,
                                             const std::string& host) {
  for (int z = 0; z < world_->zookeeper().size(); ++z) {
    RETURN_IF_ERROR(hosts.CutPair(hosts.Find(host), hosts.Find(absl::StrCat("zk", z + 1))));
  }
  return absl::OkStatus();
}

absl::Status FaultInjector::CutWorkerPairs(devcluster::NetnsHosts& hosts) {
  // Each pipeline's two workers lose each other: every pair of supervisor
  // hosts that a pipeline runs workers on is cut (its trees cross there), so
  // every guarantee's trees time out, while every host still reaches
  // ZooKeeper, nimbus and Kafka.
  const std::set<std::pair<int, int>> pairs =
      SupervisorPairsOfTopologies(targets_.TopologyWorkers());
  if (pairs.empty()) return absl::UnavailableError("no pipeline has workers on two hosts");
  std::set<std::string> touched;
  for (const auto& [a, b] : pairs) {
    touched.insert(StudyWorld::SupervisorHost(a));
    touched.insert(StudyWorld::SupervisorHost(b));
  }
  cut_.hosts.assign(touched.begin(), touched.end());
  for (const auto& [a, b] : pairs) {
    RETURN_IF_ERROR(hosts.CutPair(hosts.Find(StudyWorld::SupervisorHost(a)),
                                  hosts.Find(StudyWorld::SupervisorHost(b))));
  }
  return MarkCut(absl::OkStatus());
}

absl::Status FaultInjector::CutSpoutsFromZooKeeper(devcluster::NetnsHosts& hosts,
                                                   const std::vector<StudyWorld::Worker>& spouts,
                                                   const std::vector<int>& spout_supervisors) {
  for (int s : spout_supervisors) {
    const std::string host = StudyWorld::SupervisorHost(s);
    cut_.hosts.push_back(host);
    FenceSpoutsOf(spouts, s);
    RETURN_IF_ERROR(MarkCut(CutFromZooKeeper(hosts, host)));
  }
  return absl::OkStatus();
}

absl::Status FaultInjector::IsolateBusiestSupervisor(
    devcluster::NetnsHosts& hosts, const std::vector<StudyWorld::Worker>& spouts) {
  // The host running the most spouts (ties broken by the seed), so that as
  // many guarantees as possible lose their spout's host.
  std::map<int, int> count;
  for (const StudyWorld::Worker& w : spouts) ++count[w.supervisor];
  int most = 0;
  for (const auto& [s, n] : count) most = std::max(most, n);
  std::vector<int> busiest;
  for (const auto& [s, n] : count) {
    if (n == most) busiest.push_back(s);
  }
  const int victim = busiest[plan_.pick % busiest.size()];
  cut_.hosts = {StudyWorld::SupervisorHost(victim)};
  FenceSpoutsOf(spouts, victim);
  return MarkCut(hosts.Isolate(hosts.Find(cut_.hosts[0])));
}

absl::Status FaultInjector::IsolateNimbusLeader(devcluster::NetnsHosts& hosts) {
  ASSIGN_OR_RETURN(const std::string leader, world_->LeaderNimbusHost());
  cut_.hosts = {leader};
  cut_.old_leader_host = leader;
  return MarkCut(hosts.Isolate(hosts.Find(leader)));
}

absl::Status FaultInjector::CutZooKeeperMinority(devcluster::NetnsHosts& hosts) {
  // A follower, so that the majority keeps its leader and only the clients
  // of the cut member have to move.
  const int n = world_->zookeeper().size();
  const int leader = std::max(world_->zookeeper().LeaderIndex(), 0);
  const int member = static_cast<int>((leader + 1 + plan_.pick % (n - 1)) % n);
  const std::string host = absl::StrCat("zk", member + 1);
  cut_.hosts = {host};
  for (int z = 0; z < n; ++z) {
    if (z == member) continue;
    RETURN_IF_ERROR(hosts.CutPair(hosts.Find(host), hosts.Find(absl::StrCat("zk", z + 1))));
  }
  return MarkCut(absl::OkStatus());
}

absl::Status FaultInjector::DropPackets(devcluster::NetnsHosts& hosts,
                                        const std::vector<int>& spout_supervisors) {
  const int victim = spout_supervisors[plan_.pick % spout_supervisors.size()];
  cut_.hosts = {StudyWorld::SupervisorHost(victim)};
  return MarkCut(hosts.SetLoss(hosts.Find(cut_.hosts[0]), plan_.loss_percent));
}

ZkAclOperator FaultInjector::AclOperator() const {
  return ZkAclOperator(world_->zk_connect(), world_->spout_credentials(),
                       world_->operator_credentials(),
                       std::filesystem::path(switch_file_).parent_path().string());
}

absl::Status FaultInjector::RevokeOffsetAcls() {
  revoked_ = targets_.OffsetNodes();
  if (revoked_.empty()) {
    targets_.Note("no offset node had been written yet: there was no ACL to change");
    return absl::OkStatus();
  }
  revoked_acls_.clear();
  return AclOperator().RevokeWrite(revoked_, &revoked_acls_);
}

absl::Status FaultInjector::Misconfigure() {
  // First a chroot that does not exist: each spout must refuse to open,
  // naming it, and never read or write offsets elsewhere.
  RETURN_IF_ERROR(targets_.KillTopologies());
  RETURN_IF_ERROR(targets_.SubmitTopologiesWith(FaultTargets::ZkServers::kMissingChroot));
  absl::Status refused = targets_.WaitWorkerLogs(
      absl::StrCat("the ZooKeeper chroot ", kMissingChroot, " of zkServers"),
      std::chrono::seconds(60));
  if (!refused.ok()) {
    targets_.Note(
        absl::StrCat("a spout given a missing chroot did not refuse to open: ", refused.message()));
  }
  // Then a server list whose first member is dead: the client must move on
  // to the others and the spouts resume from their committed offsets.
  RETURN_IF_ERROR(targets_.KillTopologies());
  RETURN_IF_ERROR(targets_.SubmitTopologiesWith(FaultTargets::ZkServers::kDeadFirst));
  return targets_.WaitSpoutsRunning(std::chrono::seconds(90));
}

absl::Status FaultInjector::InjectIntoWorkers() {
  std::vector<StudyWorld::Worker> workers = targets_.SpoutWorkers();
  if (workers.empty()) targets_.Note("no spout worker was found to hit");
  for (const StudyWorld::Worker& w : workers) {
    if (kind_ == FaultKind::kKillWorker) {
      ::kill(-w.pid, SIGKILL);
    } else {
      ::kill(w.pid, SIGSTOP);
      paused_.push_back(w.pid);
    }
  }
  return absl::OkStatus();
}

void FaultInjector::KillSupervisorOfASpout() {
  // Among the supervisors running spouts, one chosen by the seed.
  std::vector<int> candidates = SupervisorsOf(targets_.SpoutWorkers());
  if (candidates.empty()) candidates.push_back(0);
  killed_supervisor_ = candidates[plan_.pick % candidates.size()];
  world_->KillSupervisor(killed_supervisor_);
}

absl::Status FaultInjector::PauseZooKeeperQuorum() {
  const int n = world_->zookeeper().size();
  const int leader = std::max(world_->zookeeper().LeaderIndex(), 0);
  paused_zk_ = {leader, static_cast<int>((leader + 1 + plan_.pick % (n - 1)) % n)};
  for (int i : paused_zk_) world_->zookeeper().Pause(i);
  return absl::OkStatus();
}

absl::Status FaultInjector::InjectRetention() {
  // Nothing is produced while the topologies die, so they cannot read past
  // the fault; everything after it is big enough for retention to delete it
  // unread.
  targets_.HoldProduction(true);
  absl::Status s = targets_.KillTopologies();
  targets_.ProduceBigRecords();
  targets_.HoldProduction(false);
  return s;
}

absl::Status FaultInjector::SwitchTransform(bool on) {
  if (on) {
    std::ofstream file(switch_file_);
    file << "on\n";
    if (!file) return absl::InternalError(absl::StrCat("cannot write ", switch_file_));
    return absl::OkStatus();
  }
  std::error_code ec;
  std::filesystem::remove(switch_file_, ec);
  if (ec) {
    return absl::InternalError(absl::StrCat("cannot remove ", switch_file_, ": ", ec.message()));
  }
  return absl::OkStatus();
}

absl::Status FaultInjector::Heal() {
  healed_ = true;
  absl::Status status = NeedsHosts(kind_) ? HealPartition() : Undo();
  end_s_ = targets_.Now();
  return status;
}

absl::Status FaultInjector::HealPartition() {
  if (world_ == nullptr || world_->multi_host() == nullptr) return absl::OkStatus();
  return world_->multi_host()->hosts().Heal();
}

absl::Status FaultInjector::Undo() {
  switch (kind_) {
    case FaultKind::kPauseWorker:
      for (pid_t pid : paused_) ::kill(pid, SIGCONT);
      break;
    case FaultKind::kKillSupervisor:
      if (killed_supervisor_ >= 0) return world_->StartSupervisor(killed_supervisor_);
      break;
    case FaultKind::kKillNimbus:
      return world_->StartNimbus();
    case FaultKind::kZkSessionExpiry:
      world_->CutSpoutZooKeeper(false);
      break;
    case FaultKind::kKillZkLeader:
      if (killed_zk_ >= 0) return world_->zookeeper().Restart(killed_zk_);
      break;
    case FaultKind::kZkQuorumLoss:
      for (int i : paused_zk_) world_->zookeeper().Resume(i);
      break;
    case FaultKind::kKafkaBrokerDown:
      return world_->kafka().SetBrokerUp(1);
    case FaultKind::kRetention:
      RETURN_IF_ERROR(targets_.RecordRetentionLoss());
      return targets_.SubmitTopologies();
    case FaultKind::kBoltFailures:
    case FaultKind::kSlowBolt:
      return SwitchTransform(false);
    case FaultKind::kZkOverload:
      if (duty_cycle_ != nullptr) duty_cycle_->Stop();
      break;
    case FaultKind::kZkAclRevoked:
      return RestoreOffsetAcls();
    case FaultKind::kRebalance:
      return targets_.RebalanceTopologies(1);
    case FaultKind::kKillWorker:
    case FaultKind::kRestartTopology:
    case FaultKind::kUpgrade:
    case FaultKind::kZkMisconfigured:  // nothing left to undo
    default:                           // the partitions: HealPartition
      break;
  }
  return absl::OkStatus();
}

absl::Status FaultInjector::RestoreOffsetAcls() {
  if (revoked_.empty()) return absl::OkStatus();
  return AclOperator().Restore(revoked_, revoked_acls_);
}

}  // namespace tempest::study
