#include "nimbus/nimbus.h"

#include <future>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"
#include "common/coord/cluster_zk_config.h"
#include "common/net/event_loop.h"
#include "common/net/http_server.h"
#include "nimbus/even_scheduler.h"
#include "nimbus/rest_api.h"
#include "spdlog/spdlog.h"

namespace tempest::nimbus {
namespace {

constexpr std::string_view kVersion = "tempest-0.1.0";

}  // namespace

absl::StatusOr<NimbusOptions> NimbusOptions::FromConfig(const api::Config& config) {
  NimbusOptions o;
  absl::StatusOr<coord::ClusterZkConfig> zk = coord::ClusterZkConfig::FromConfig(config);
  if (!zk.ok()) return zk.status();
  o.zk_connect = zk->connect;
  o.root = zk->root;
  o.zk = zk->client;
  o.bind_host = config.GetString("ui.host", "127.0.0.1");
  const int64_t port = config.GetInt("ui.port", 8080);
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("ui.port must be 0..65535, not ", port));
  }
  o.port = static_cast<int>(port);
  const int64_t monitor = config.GetInt("nimbus.monitor.freq.secs", 10);
  if (monitor > 0) o.monitor_interval = std::chrono::seconds(monitor);
  return o;
}

Nimbus::Nimbus(NimbusOptions options) : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<Nimbus>> Nimbus::Create(NimbusOptions options) {
  if (options.registry == nullptr) {
    return absl::InvalidArgumentError("nimbus needs a component registry");
  }
  std::unique_ptr<Nimbus> n(new Nimbus(std::move(options)));
  if (absl::Status s = n->Start(); !s.ok()) return s;
  return n;
}

absl::Status Nimbus::Start() {
  launch_time_secs_ = options_.clock->WallMillis() / 1000;
  coord::ZkSession::Options zo;
  zo.connect_string = options_.zk_connect;
  zo.config = options_.zk;
  zo.clock = options_.clock;
  absl::StatusOr<std::unique_ptr<coord::ZkSession>> session =
      coord::ZkSession::Create(std::move(zo));
  if (!session.ok()) return session.status();
  session_ = *std::move(session);
  if (absl::Status s = session_->WaitConnected(options_.zk.connection_timeout); !s.ok()) {
    return absl::UnavailableError(absl::StrCat("cannot reach ZooKeeper at ", options_.zk_connect,
                                               ": ", s.message()));
  }
  store_ = std::make_unique<TopologyStore>(*session_, options_.root, *options_.registry,
                                           *options_.clock);

  absl::StatusOr<std::unique_ptr<net::EventLoop>> loop = net::EventLoop::Create("nimbus-http");
  if (!loop.ok()) return loop.status();
  loop_ = *std::move(loop);
  absl::StatusOr<net::HttpRouter> router = MakeNimbusRouter(*this);
  if (!router.ok()) return router.status();
  net::HttpServerOptions ho;
  ho.bind_address = options_.bind_host;
  ho.port = options_.port;
  ho.body_limit_bytes = 4 << 20;
  absl::StatusOr<std::unique_ptr<net::HttpServer>> http =
      net::HttpServer::Create(*loop_, std::move(ho), *std::move(router));
  if (!http.ok()) return http.status();
  http_ = *std::move(http);
  port_ = http_->port();
  id_ = absl::StrCat(options_.bind_host, ":", port_);

  for (const std::string& path : {store_->StormsPath(), store_->AssignmentsPath(),
                                  store_->SupervisorsPath(), store_->NimbusesPath()}) {
    if (absl::Status s = session_->EnsurePath(path); !s.ok()) return s;
  }
  if (absl::Status s = Register(); !s.ok()) return s;

  coord::LeaderElection::Options eo;
  eo.path = store_->LeaderPath();
  eo.participant_id = id_;
  eo.host = options_.bind_host;
  eo.port = port_;
  eo.op_timeout = options_.op_timeout;
  std::weak_ptr<coord::SerialExecutor> weak = control_;
  eo.on_change = [this, weak](bool leader) {
    spdlog::info("nimbus {}: {}", id_, leader ? "gained leadership" : "is not the leader");
    if (auto control = weak.lock()) {
      control->Post([this] {
        if (!stopping_) (void)Reconcile();
      });
    }
  };
  absl::StatusOr<std::unique_ptr<coord::LeaderElection>> election =
      coord::LeaderElection::Create(*session_, std::move(eo));
  if (!election.ok()) return election.status();
  election_ = *std::move(election);
  ScheduleNextRound();
  return absl::OkStatus();
}

Nimbus::~Nimbus() {
  stopping_ = true;
  if (http_) http_->Stop();
  if (loop_) loop_->Stop();
  control_->Stop();
  election_.reset();
  if (session_) session_->Close();
}

void Nimbus::CloseSessionForTest() {
  if (session_) session_->Close();
}

bool Nimbus::IsLeader() const { return election_ != nullptr && election_->IsLeader(); }

absl::StatusOr<std::string> Nimbus::Leader() const {
  if (election_ == nullptr) return absl::UnavailableError("nimbus is not running");
  return election_->CurrentLeader();
}

absl::Status Nimbus::CheckLeader() const {
  if (IsLeader()) return absl::OkStatus();
  absl::StatusOr<std::string> leader = Leader();
  if (leader.ok()) {
    return absl::UnavailableError(
        absl::StrCat("this nimbus (", id_, ") is not the leader; the leader is ", *leader));
  }
  return absl::UnavailableError(
      absl::StrCat("this nimbus (", id_, ") is not the leader and no leader is known"));
}

template <typename T>
absl::StatusOr<T> Nimbus::OnControl(std::function<absl::StatusOr<T>()> fn) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<T>>>();
  std::future<absl::StatusOr<T>> result = promise->get_future();
  control_->Post([promise, fn = std::move(fn)] { promise->set_value(fn()); });
  if (result.wait_for(options_.op_timeout) != std::future_status::ready) {
    return absl::DeadlineExceededError("nimbus did not complete the request in time");
  }
  return result.get();
}

absl::StatusOr<std::string> Nimbus::Submit(const SubmitRequest& request) {
  return OnControl<std::string>([this, request]() -> absl::StatusOr<std::string> {
    if (absl::Status s = CheckLeader(); !s.ok()) return s;
    absl::StatusOr<std::string> id = store_->Submit(request);
    if (id.ok()) {
      spdlog::info("nimbus {}: submitted {}", id_, *id);
      (void)Reconcile();
    }
    return id;
  });
}

absl::StatusOr<v1::StormBase> Nimbus::Activate(const std::string& id) {
  return OnControl<v1::StormBase>([this, id]() -> absl::StatusOr<v1::StormBase> {
    if (absl::Status s = CheckLeader(); !s.ok()) return s;
    return store_->Transition(id, TopologyEvent::kActivate);
  });
}

absl::StatusOr<v1::StormBase> Nimbus::Deactivate(const std::string& id) {
  return OnControl<v1::StormBase>([this, id]() -> absl::StatusOr<v1::StormBase> {
    if (absl::Status s = CheckLeader(); !s.ok()) return s;
    return store_->Transition(id, TopologyEvent::kDeactivate);
  });
}

absl::StatusOr<v1::StormBase> Nimbus::Kill(const std::string& id, std::optional<int> wait_secs) {
  return OnControl<v1::StormBase>([this, id, wait_secs]() -> absl::StatusOr<v1::StormBase> {
    if (absl::Status s = CheckLeader(); !s.ok()) return s;
    absl::StatusOr<v1::StormBase> base = store_->Transition(id, TopologyEvent::kKill, wait_secs);
    if (base.ok()) {
      spdlog::info("nimbus {}: killed {} (removal in {}s)", id_, id, base->kill_wait_secs());
      // A zero wait removes it in this round already.
      (void)Reconcile();
    }
    return base;
  });
}

absl::StatusOr<std::vector<StoredTopology>> Nimbus::Topologies() { return store_->List(); }

absl::StatusOr<StoredTopology> Nimbus::Topology(const std::string& id) { return store_->Get(id); }

absl::StatusOr<std::optional<v1::Assignment>> Nimbus::AssignmentOf(const std::string& id) {
  return store_->GetAssignment(id);
}

absl::StatusOr<std::vector<v1::SupervisorInfo>> Nimbus::Supervisors() {
  return store_->ListSupervisors();
}

absl::StatusOr<std::vector<NimbusPeer>> Nimbus::Nimbuses() {
  absl::StatusOr<std::vector<std::string>> ids = session_->Children(store_->NimbusesPath());
  if (!ids.ok()) return ids.status();
  std::sort(ids->begin(), ids->end());
  absl::StatusOr<std::string> leader = Leader();
  std::vector<NimbusPeer> out;
  for (const std::string& id : *ids) {
    absl::StatusOr<coord::ZkNode> node =
        session_->Get(absl::StrCat(store_->NimbusesPath(), "/", id));
    if (absl::IsNotFound(node.status())) continue;
    if (!node.ok()) return node.status();
    NimbusPeer peer;
    peer.id = id;
    if (!peer.summary.ParseFromString(node->data)) continue;
    peer.leader = leader.ok() && *leader == id;
    out.push_back(std::move(peer));
  }
  return out;
}

absl::Status Nimbus::ReconcileNow() {
  absl::StatusOr<bool> done = OnControl<bool>([this]() -> absl::StatusOr<bool> {
    absl::Status s = Reconcile();
    if (!s.ok()) return s;
    return true;
  });
  return done.status();
}

void Nimbus::ScheduleNextRound() {
  std::weak_ptr<coord::SerialExecutor> weak = control_;
  control_->PostAfter(options_.monitor_interval, [this, weak] {
    if (stopping_) return;
    if (absl::Status s = Reconcile(); !s.ok()) {
      spdlog::warn("nimbus {}: reconcile: {}", id_, std::string(s.message()));
    }
    if (weak.lock()) ScheduleNextRound();
  });
}

absl::Status Nimbus::Register() {
  const std::string path = absl::StrCat(store_->NimbusesPath(), "/", id_);
  absl::StatusOr<std::optional<coord::ZkStat>> exists = session_->Exists(path);
  if (!exists.ok()) return exists.status();
  // A node left by an earlier session of ours goes with that session; the
  // next round re-creates it.
  if (exists->has_value()) return absl::OkStatus();
  v1::NimbusSummary summary;
  summary.set_host(options_.bind_host);
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

absl::Status Nimbus::Reconcile() {
  if (absl::Status s = Register(); !s.ok()) return s;
  if (!IsLeader()) return absl::OkStatus();
  absl::StatusOr<std::vector<StoredTopology>> topologies = store_->List();
  if (!topologies.ok()) return topologies.status();
  const int64_t now_secs = options_.clock->WallMillis() / 1000;
  std::vector<StoredTopology> remaining;
  for (StoredTopology& t : *topologies) {
    if (t.base.status() == v1::KILLED && t.base.remove_at_secs() <= now_secs) {
      if (absl::Status s = store_->Remove(t.id); !s.ok()) return s;
      spdlog::info("nimbus {}: removed {}", id_, t.id);
      continue;
    }
    remaining.push_back(std::move(t));
  }
  absl::Status scheduled = Schedule(remaining);
  // A kill whose wait ends before the next periodic round gets its own.
  for (const StoredTopology& t : remaining) {
    if (t.base.status() != v1::KILLED) continue;
    const auto delay = std::chrono::seconds(std::max<int64_t>(0, t.base.remove_at_secs() - now_secs));
    if (delay < options_.monitor_interval) {
      control_->PostAfter(std::chrono::duration_cast<std::chrono::milliseconds>(delay) +
                              std::chrono::milliseconds(50),
                          [this] {
                            if (!stopping_) (void)Reconcile();
                          });
    }
  }
  return scheduled;
}

absl::Status Nimbus::Schedule(const std::vector<StoredTopology>& topologies) {
  absl::StatusOr<std::vector<v1::SupervisorInfo>> supervisors = store_->ListSupervisors();
  if (!supervisors.ok()) return supervisors.status();
  std::vector<SupervisorSlots> slots;
  std::map<std::string, std::string> hosts;
  for (const v1::SupervisorInfo& s : *supervisors) {
    slots.push_back(SupervisorSlots{s.supervisor_id(), {s.slot_ports().begin(), s.slot_ports().end()}});
    hosts[s.supervisor_id()] = s.hostname();
  }
  std::vector<TopologySchedulingInput> inputs;
  std::map<std::string, v1::Assignment> current;
  for (const StoredTopology& t : topologies) {
    TopologySchedulingInput in;
    in.id = t.id;
    in.num_workers = t.base.num_workers();
    in.schedulable = t.base.status() != v1::KILLED;
    for (const v1::ExecutorRange& e : t.base.executors()) {
      in.executors.push_back(ExecutorId{e.start_task(), e.end_task()});
    }
    absl::StatusOr<std::optional<v1::Assignment>> a = store_->GetAssignment(t.id);
    if (!a.ok()) return a.status();
    if (a->has_value()) {
      for (const v1::ExecutorAssignment& e : (*a)->executors()) {
        in.current[ExecutorId{e.start_task(), e.end_task()}] = WorkerSlot{e.node(), e.port()};
      }
      current[t.id] = **a;
    }
    inputs.push_back(std::move(in));
  }
  const int64_t now_secs = options_.clock->WallMillis() / 1000;
  for (const auto& [id, placement] : ScheduleCluster(inputs, slots)) {
    // Executors that stay on their slot keep their start time.
    std::map<std::pair<ExecutorId, WorkerSlot>, int64_t> started;
    for (const v1::ExecutorAssignment& e : current[id].executors()) {
      started[{ExecutorId{e.start_task(), e.end_task()}, WorkerSlot{e.node(), e.port()}}] =
          e.start_time_secs();
    }
    v1::Assignment next;
    for (const auto& [executor, slot] : placement) {
      v1::ExecutorAssignment* e = next.add_executors();
      e->set_start_task(executor.start);
      e->set_end_task(executor.end);
      e->set_node(slot.node);
      e->set_port(slot.port);
      auto it = started.find({executor, slot});
      e->set_start_time_secs(it != started.end() ? it->second : now_secs);
      (*next.mutable_node_host())[slot.node] = hosts[slot.node];
    }
    if (absl::Status s = store_->PutAssignment(id, next); !s.ok()) return s;
    spdlog::info("nimbus {}: assigned {} executors of {}", id_, next.executors_size(), id);
  }
  return absl::OkStatus();
}

}  // namespace tempest::nimbus
