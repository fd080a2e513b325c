// Nimbus's place among the nimbuses: its registration node, the leader
// election, and the check that only the leader writes.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "nimbus/nimbus.h"
#include "spdlog/spdlog.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {
namespace {

constexpr std::string_view kVersion = "tempest-0.1.0";

// How long a write waits for an election that has not settled yet.
constexpr std::chrono::seconds kLeadershipWait{5};

}  // namespace

bool Nimbus::IsLeader() const { return election_ != nullptr && election_->IsLeader(); }

absl::StatusOr<std::string> Nimbus::Leader() const {
  if (election_ == nullptr) return absl::UnavailableError("nimbus is not running");
  return election_->CurrentLeader();
}

core::Clock::TimePoint Nimbus::LeadershipDeadline() const {
  return options_.clock->Now() + kLeadershipWait;
}

absl::Status Nimbus::CheckLeader(core::Clock::TimePoint deadline) const {
  if (IsLeader()) return absl::OkStatus();
  absl::StatusOr<std::string> leader = Leader();
  // Just started (or re-joined): the election has not settled while no
  // leader is known yet or our own node leads without the election having
  // told us. Wait for its next round (until `deadline`) rather than refuse
  // a write this nimbus is about to be allowed to make.
  while ((!leader.ok() || *leader == id_) && !IsLeader() && options_.clock->Now() < deadline) {
    election_->AwaitRound(deadline);
    leader = Leader();
  }
  if (IsLeader()) return absl::OkStatus();
  if (leader.ok()) {
    return absl::UnavailableError(
        absl::StrCat("this nimbus (", id_, ") is not the leader; the leader is ", *leader));
  }
  return absl::UnavailableError(
      absl::StrCat("this nimbus (", id_, ") is not the leader and no leader is known"));
}

absl::Status Nimbus::JoinElection() {
  coord::LeaderElection::Options eo;
  eo.path = store_->paths().Leader();
  eo.participant_id = id_;
  eo.host = AdvertisedHost();
  eo.port = port_;
  eo.op_timeout = options_.op_timeout;
  eo.clock = options_.clock;
  std::weak_ptr<coord::SerialExecutor> weak = control_;
  eo.on_change = [this, weak](bool leader) {
    spdlog::info("nimbus {}: {}", id_, leader ? "gained leadership" : "is not the leader");
    if (auto control = weak.lock()) {
      control->Post([this, leader] {
        if (stopping_) return;
        // Storm's HeartbeatCache starts empty on a new leader: everyone
        // gets a full timeout, whatever an earlier term remembered.
        if (leader) cache_.Clear();
        ReconcileAfter(leader ? "gaining leadership" : "losing leadership");
      });
    }
  };
  ASSIGN_OR_RETURN(election_, coord::LeaderElection::Create(*session_, std::move(eo)));
  return absl::OkStatus();
}

// A nimbus restarted right after its process died (kill -9, a crash) finds
// the ephemeral nodes of that process: the same id (host:port), another
// session, alive until the ensemble expires it (the session timeout, 30 s by
// default). Its election node would still lead, and this nimbus would refuse
// writes with "the leader is <itself>" until then. That process is gone: this
// one has just bound the same address (the REST server above), which no
// other live process on this host can hold, so its nodes are deleted now
// (version-checked, so a node re-created meanwhile is left alone). A
// wildcard bind does not make host:port unique across machines, so then
// nothing is deleted and the old session simply expires.
void Nimbus::RemoveStaleNodesOfThisId() {
  if (options_.bind_host.empty() || options_.bind_host == "0.0.0.0" || options_.bind_host == "::") {
    return;
  }
  const int64_t mine = session_->session_id();
  auto stale = [mine](const coord::ZkStat& stat) {
    return stat.ephemeral_owner != 0 && stat.ephemeral_owner != mine;
  };
  const std::string registered = store_->paths().Nimbus(id_);
  if (absl::StatusOr<std::optional<coord::ZkStat>> exists = session_->Exists(registered);
      exists.ok() && exists->has_value() && stale(**exists)) {
    if (absl::Status s = session_->Delete(registered, (*exists)->version); s.ok()) {
      spdlog::info("nimbus {}: removed {} left by an earlier session of this id", id_, registered);
    }
  }
  absl::StatusOr<std::vector<std::string>> children = session_->Children(store_->paths().Leader());
  if (!children.ok()) return;  // no election yet, or ZooKeeper trouble: nothing to take over
  for (const std::string& child : *children) {
    const std::string path = store_->paths().LeaderNode(child);
    absl::StatusOr<coord::ZkNode> node = session_->Get(path);
    if (!node.ok() || !stale(node->stat)) continue;
    v1::ElectionParticipant participant;
    if (!participant.ParseFromString(node->data) || participant.participant_id() != id_) continue;
    if (absl::Status s = session_->Delete(path, node->stat.version); s.ok()) {
      spdlog::info("nimbus {}: removed election node {} left by an earlier session of this id", id_,
                   path);
    } else if (!absl::IsNotFound(s)) {
      spdlog::warn("nimbus {}: cannot remove stale election node {}: {}", id_, path,
                   std::string(s.message()));
    }
  }
}

absl::Status Nimbus::Register() {
  const std::string path = store_->paths().Nimbus(id_);
  ASSIGN_OR_RETURN(const std::optional<coord::ZkStat> exists, session_->Exists(path));
  // A node left by an earlier session of ours goes with that session; the
  // next round re-creates it.
  if (exists.has_value()) return absl::OkStatus();
  v1::NimbusSummary summary;
  summary.set_host(AdvertisedHost());
  summary.set_port(port_);
  summary.set_launch_time_secs(launch_time_secs_);
  summary.set_version(std::string(kVersion));
  coord::ZkCreateOptions create;
  create.mode = coord::ZkCreateMode::kEphemeral;
  create.create_parents = true;
  absl::StatusOr<std::string> created = session_->Create(path, summary.SerializeAsString(), create);
  if (created.ok() || absl::IsAlreadyExists(created.status())) return absl::OkStatus();
  return created.status();
}

}  // namespace tempest::nimbus
