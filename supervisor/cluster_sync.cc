#include "supervisor/cluster_sync.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/coord/topology_identity.h"
#include "common/coord/zk_acl_check.h"
#include "common/core/status_macros.h"
#include "spdlog/spdlog.h"

namespace tempest::supervisor {

using std::chrono::milliseconds;

ClusterSync::ClusterSync(const SupervisorOptions& options, std::string supervisor_id,
                         int64_t started_at_ms, PublishFn publish,
                         std::function<std::vector<int>()> used_ports)
    : options_(options),
      id_(std::move(supervisor_id)),
      started_at_ms_(started_at_ms),
      paths_(options_.root),
      publish_(std::move(publish)),
      used_ports_(std::move(used_ports)) {}

int64_t ClusterSync::NowMs() const { return options_.clock->WallMillis(); }

void ClusterSync::LogFailure(std::string_view what, const absl::Status& status) const {
  spdlog::warn("supervisor {}: {}: {}", id_, what, std::string(status.message()));
}

absl::Status ClusterSync::Connect() {
  coord::ZkSession::Options zo;
  zo.connect_string = options_.zk_connect;
  zo.config = options_.zk;
  zo.clock = options_.clock;
  zo.operation_timeout = options_.op_timeout;
  if (options_.metrics != nullptr) zo.metrics = *options_.metrics;
  ASSIGN_OR_RETURN(session_, coord::ZkSession::Create(std::move(zo)));
  if (absl::Status s = session_->WaitConnected(options_.zk.connection_timeout); !s.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach ZooKeeper at ", options_.zk_connect, ": ", s.message()));
  }
  RETURN_IF_ERROR(session_->VerifyAccess(options_.root.empty() ? "/" : options_.root));
  // From here on a new session (after an expiry) re-registers and re-arms
  // the watches.
  std::weak_ptr<coord::SerialExecutor> weak = zk_;
  listener_ = session_->Subscribe([this, weak](const coord::ZkSessionEvent& event) {
    if (auto zk = weak.lock()) {
      zk->Post([this, event] {
        if (!stopping_) OnSessionEvent(event);
      });
    }
  });
  for (const std::string& path :
       {paths_.Supervisors(), paths_.Assignments(), paths_.WorkerFailures()}) {
    RETURN_IF_ERROR(session_->EnsurePath(path));
  }
  // The same check nimbus makes: this supervisor registers under supervisors/
  // and trusts what it reads under assignments/.
  RETURN_IF_ERROR(coord::EnsureClusterTreeOwned(*session_, paths_, [this](const std::string& line) {
    spdlog::warn("supervisor {}: {}", id_, line);
  }));
  RemoveOwnExitRecords();
  return absl::OkStatus();
}

void ClusterSync::RemoveOwnExitRecords() {
  // Records of our previous run: their workers are stopped or adopted now,
  // and the next failure writes afresh (the records live in its memory).
  absl::StatusOr<std::vector<std::string>> topologies =
      session_->Children(paths_.WorkerFailures());
  if (!topologies.ok()) return;
  const std::string prefix = id_ + "-";
  for (const std::string& topology : *topologies) {
    const std::string dir = paths_.WorkerFailuresOf(topology);
    absl::StatusOr<std::vector<std::string>> names = session_->Children(dir);
    if (!names.ok()) continue;
    for (const std::string& name : *names) {
      // Best effort, as the listings above: a record left behind is stale
      // history, not state anyone acts on.
      if (name.rfind(prefix, 0) == 0) (void)session_->Delete(dir + "/" + name, -1);
    }
  }
}

void ClusterSync::StartLoops() {
  zk_->PostAfter(options_.heartbeat_interval, [this] { HeartbeatLoop(); });
  zk_->PostAfter(options_.monitor_interval, [this] { MonitorLoop(); });
}

void ClusterSync::RequestSync() {
  zk_->Post([this] {
    if (stopping_) return;
    SyncOrLog();
  });
}

void ClusterSync::Stop() {
  stopping_ = true;
  zk_->Stop();
}

void ClusterSync::Close(bool delete_node) {
  if (session_ == nullptr) return;
  if (listener_ != 0) session_->Unsubscribe(listener_);
  if (delete_node && session_->IsConnected()) {
    // Best effort: the node is ephemeral and goes with the session closed below.
    (void)session_->Delete(NodePath(), -1, coord::ZkCall{milliseconds(2000), 0});
  }
  session_->Close();
}

void ClusterSync::SyncOrLog() {
  if (absl::Status s = SyncAndPublish(); !s.ok()) LogFailure("assignments", s);
}

absl::Status ClusterSync::SyncAndPublish() {
  absl::StatusOr<DesiredSlots> desired = SyncAssignments();
  std::optional<DesiredSlots> result;
  if (desired.ok()) result = *std::move(desired);
  // On failure the worker side keeps the slots it knew (workers keep
  // running while ZooKeeper is away) but stops holding launches back.
  publish_(std::move(result));
  return desired.status();
}

absl::StatusOr<std::vector<std::string>> ClusterSync::AssignmentIds() {
  const std::string parent = paths_.Assignments();
  absl::StatusOr<std::vector<std::string>> ids;
  if (children_watch_armed_) {
    ids = session_->Children(parent);
  } else {
    ids = session_->ChildrenAndWatch(parent, PostingWatch([this](const coord::ZkWatchEvent&) {
                                       children_watch_armed_ = false;
                                       SyncOrLog();
                                     }));
    if (ids.ok()) children_watch_armed_ = true;
  }
  if (absl::IsNotFound(ids.status())) {
    // Nobody created the parent yet (or it was removed): nothing assigned.
    children_watch_armed_ = false;
    ids = std::vector<std::string>{};
  }
  return ids;
}

absl::StatusOr<std::optional<v1::Assignment>> ClusterSync::ReadAssignment(
    const std::string& topology_id) {
  const std::string path = paths_.Assignment(topology_id);
  absl::StatusOr<coord::ZkNode> node;
  if (data_watches_armed_.contains(topology_id)) {
    node = session_->Get(path);
  } else {
    node = session_->GetAndWatch(
        path, PostingWatch([this, topology_id](const coord::ZkWatchEvent&) {
          data_watches_armed_.erase(topology_id);
          SyncOrLog();
        }));
    if (node.ok()) data_watches_armed_.insert(topology_id);
  }
  if (absl::IsNotFound(node.status())) return std::nullopt;  // removed meanwhile
  RETURN_IF_ERROR(node.status());
  v1::Assignment a;
  if (a.ParseFromString(node->data)) {
    last_good_[topology_id] = a;
    return a;
  }
  const std::string problem =
      absl::StrCat("assignment ", path, " does not parse as an Assignment; ",
                   last_good_.contains(topology_id) ? "keeping the previous one" : "ignoring it");
  if (reported_problems_.insert(problem).second) spdlog::error("supervisor {}: {}", id_, problem);
  if (auto it = last_good_.find(topology_id); it != last_good_.end()) return it->second;
  return std::nullopt;
}

absl::StatusOr<DesiredSlots> ClusterSync::SyncAssignments() {
  ASSIGN_OR_RETURN(const std::vector<std::string> ids, AssignmentIds());
  std::map<std::string, v1::Assignment> assignments;
  for (const std::string& topology_id : ids) {
    ASSIGN_OR_RETURN(std::optional<v1::Assignment> a, ReadAssignment(topology_id));
    if (a.has_value()) assignments[topology_id] = *std::move(a);
  }
  for (auto it = last_good_.begin(); it != last_good_.end();) {
    it = assignments.contains(it->first) ? std::next(it) : last_good_.erase(it);
  }
  std::vector<std::string> problems;
  DesiredSlots desired = ComputeDesiredSlots(assignments, id_, options_.slot_ports, &problems);
  for (const std::string& p : problems) {
    if (reported_problems_.insert(p).second) spdlog::warn("supervisor {}: {}", id_, p);
  }
  RETURN_IF_ERROR(AddIdentities(desired));
  LogChanges(desired);
  return desired;
}

absl::Status ClusterSync::AddIdentities(DesiredSlots& desired) {
  for (auto it = handoffs_.begin(); it != handoffs_.end();) {
    it = last_good_.contains(it->first) ? std::next(it) : handoffs_.erase(it);
  }
  if (!options_.zk.auth.enabled()) return absl::OkStatus();
  for (auto it = desired.begin(); it != desired.end();) {
    const std::string& topology_id = it->second.topology_id;
    if (!handoffs_.contains(topology_id)) {
      const std::string name = coord::TopologyNameOfId(topology_id);
      absl::StatusOr<std::optional<coord::ZkAuthConfig>> identity =
          coord::ReadTopologyIdentity(*session_, paths_, name);
      if (!identity.ok() && !absl::IsDataLoss(identity.status())) return identity.status();
      if (identity.ok() && identity->has_value()) {
        coord::WorkerHandoff handoff{**identity, coord::ZkDigestId(options_.zk.auth.payload)};
        handoffs_[topology_id] = coord::EncodeWorkerHandoff(handoff);
      } else {
        // Workers never get the cluster identity instead: without their own
        // they do not run.
        const std::string problem = absl::StrCat(
            "topology ", topology_id, " has no usable ZooKeeper identity (",
            paths_.Credential(name), ": ",
            identity.ok() ? "missing" : std::string(identity.status().message()),
            "); its workers are not started (kill and submit it again)");
        if (reported_problems_.insert(problem).second) spdlog::error("supervisor {}: {}", id_, problem);
        it = desired.erase(it);
        continue;
      }
    }
    it->second.worker_handoff = handoffs_[topology_id];
    ++it;
  }
  return absl::OkStatus();
}

void ClusterSync::LogChanges(const DesiredSlots& desired) {
  if (desired == last_logged_) return;
  for (const auto& [port, slot] : desired) {
    auto old = last_logged_.find(port);
    if (old == last_logged_.end() || old->second != slot) {
      spdlog::info("supervisor {}: port {} assigned to {} executors {}", id_, port,
                   slot.topology_id, SpansText(slot.executors));
    }
  }
  for (const auto& [port, slot] : last_logged_) {
    if (!desired.contains(port)) {
      spdlog::info("supervisor {}: port {} no longer assigned ({})", id_, port, slot.topology_id);
    }
  }
  last_logged_ = desired;
}

coord::ZkWatchFn ClusterSync::PostingWatch(std::function<void(const coord::ZkWatchEvent&)> on_zk) {
  std::weak_ptr<coord::SerialExecutor> weak = zk_;
  return [this, weak, on_zk = std::move(on_zk)](const coord::ZkWatchEvent& event) {
    // The watch died with its session; OnSessionEvent clears every armed flag
    // and re-arms once the next session is up (re-arming here would only
    // duplicate those watches).
    if (event.type == coord::ZkWatchEventType::kSessionLost) return;
    if (auto zk = weak.lock()) {
      zk->Post([this, on_zk, event] {
        if (!stopping_) on_zk(event);
      });
    }
  };
}

void ClusterSync::OnSessionEvent(const coord::ZkSessionEvent& event) {
  if (event.state == coord::ZkSessionState::kLost) {
    // Workers keep running (as in Storm); nimbus may reassign their slots
    // meanwhile, which the next sync shows.
    spdlog::warn("supervisor {}: ZooKeeper session lost; workers keep running", id_);
    return;
  }
  if (event.state != coord::ZkSessionState::kConnected) return;
  // Start() registers the first time (after adoption); a late event about
  // the session it connected with must not register before that.
  if (registered_session_ == 0) return;
  if (event.session_id != registered_session_) {
    // A new session: every watch and our ephemeral node went with the old one.
    children_watch_armed_ = false;
    data_watches_armed_.clear();
    node_watch_armed_ = false;
    spdlog::info("supervisor {}: new ZooKeeper session {:x}; registering again", id_,
                 event.session_id);
  }
  if (absl::Status s = Register(); !s.ok()) {
    LogFailure("register", s);
  }
  SyncOrLog();
}

void ClusterSync::WriteExitRecord(const std::string& topology_id, int port,
                                  const std::optional<std::string>& record) {
  if (stopping_) return;
  const std::string dir = paths_.WorkerFailuresOf(topology_id);
  const std::string path = absl::StrCat(dir, "/", id_, "-", port);
  if (!record) {
    absl::Status s = session_->Delete(path, -1);
    if (!s.ok() && !absl::IsNotFound(s)) LogFailure(absl::StrCat("removing ", path), s);
    (void)session_->Delete(dir, -1);  // fails while other supervisors' records remain
    return;
  }
  absl::StatusOr<coord::ZkStat> set = session_->Set(path, *record, -1);
  if (set.ok()) return;
  absl::Status s = set.status();
  if (absl::IsNotFound(s)) {
    coord::ZkCreateOptions create;
    create.create_parents = true;  // with the session's ACL policy, as every node we write
    absl::StatusOr<std::string> created = session_->Create(path, *record, create);
    s = created.ok() || absl::IsAlreadyExists(created.status()) ? absl::OkStatus()
                                                                : created.status();
  }
  if (!s.ok()) LogFailure(absl::StrCat("writing ", path), s);
}

absl::Status ClusterSync::Register() {
  v1::SupervisorInfo info;
  info.set_supervisor_id(id_);
  info.set_hostname(options_.hostname);
  for (int port : options_.slot_ports) info.add_slot_ports(port);
  for (int port : used_ports_()) info.add_used_ports(port);
  const int64_t now = NowMs();
  info.set_time_secs(now / 1000);
  info.set_uptime_secs((now - started_at_ms_) / 1000);
  info.set_version(options_.version);
  const std::string data = info.SerializeAsString();
  const std::string path = NodePath();

  const int64_t session_id = session_->session_id();
  absl::StatusOr<coord::ZkStat> set = session_->Set(path, data, -1);
  if (!set.ok()) {
    if (!absl::IsNotFound(set.status())) return set.status();
    coord::ZkCreateOptions create;
    create.mode = coord::ZkCreateMode::kEphemeral;
    create.create_parents = true;
    absl::StatusOr<std::string> created = session_->Create(path, data, create);
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  }
  registered_session_ = session_id;
  // Armed after our own write, which would fire it otherwise.
  return ArmNodeWatch();
}

absl::Status ClusterSync::ArmNodeWatch() {
  if (node_watch_armed_) return absl::OkStatus();
  // A node left by an earlier session of ours (a restart within the session
  // timeout) is overwritten by Register and re-created as soon as it goes.
  // The watch also fires on our own heartbeat writes; those only re-arm it.
  absl::StatusOr<std::optional<coord::ZkStat>> exists = session_->ExistsAndWatch(
      NodePath(), PostingWatch([this](const coord::ZkWatchEvent& event) {
        node_watch_armed_ = false;
        absl::Status s =
            event.type == coord::ZkWatchEventType::kDeleted ? Register() : ArmNodeWatch();
        if (!s.ok()) LogFailure("register", s);
      }));
  RETURN_IF_ERROR(exists.status());
  node_watch_armed_ = true;
  if (!exists->has_value()) return Register();  // deleted between our write and the watch
  return absl::OkStatus();
}

void ClusterSync::HeartbeatLoop() {
  if (stopping_) return;
  if (absl::Status s = Register(); !s.ok()) LogFailure("heartbeat", s);
  zk_->PostAfter(options_.heartbeat_interval, [this] { HeartbeatLoop(); });
}

void ClusterSync::MonitorLoop() {
  if (stopping_) return;
  SyncOrLog();
  zk_->PostAfter(options_.monitor_interval, [this] { MonitorLoop(); });
}

}  // namespace tempest::supervisor
