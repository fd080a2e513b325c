#include "nimbus/nimbus.h"

#include <cerrno>
#include <future>
#include <map>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"
#include "common/coord/cluster_zk_config.h"
#include "common/coord/zk_acl_check.h"
#include "common/core/config/config_keys.h"
#include "common/net/event_loop.h"
#include "common/net/http_server.h"
#include "common/net/transport_secret.h"
#include "nimbus/even_scheduler.h"
#include "nimbus/rest_api.h"
#include "nimbus/transport_secrets.h"
#include "spdlog/spdlog.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {
namespace {

constexpr std::string_view kVersion = "tempest-0.1.0";

absl::StatusOr<std::chrono::seconds> PositiveSecs(const api::Config& config, std::string_view key,
                                                  int64_t fallback, bool allow_zero) {
  const int64_t v = config.GetInt(key, fallback);
  if (v < 0 || (v == 0 && !allow_zero) || v > int64_t{86400} * 365) {
    return absl::InvalidArgumentError(
        absl::StrCat(api::Sv(key), " must be a positive number of seconds, not ", v));
  }
  return std::chrono::seconds(v);
}

// An integer key checked against its range (core::CheckConfigValue).
absl::StatusOr<int64_t> RangedInt(const api::Config& config, std::string_view key,
                                  int64_t fallback) {
  const api::Value* v = config.Find(key);
  if (v == nullptr) return fallback;
  if (absl::Status s = core::CheckConfigValue(key, *v); !s.ok()) return s;
  return v->CoerceInt();
}

// The REST limits of `o` from their tempest.api.* keys.
absl::Status ReadApiLimits(const api::Config& config, NimbusOptions& o) {
  absl::StatusOr<int64_t> body = RangedInt(config, "tempest.api.max.body.bytes",
                                           static_cast<int64_t>(o.api_max_body_bytes));
  if (!body.ok()) return body.status();
  absl::StatusOr<int64_t> head = RangedInt(config, "tempest.api.max.header.bytes",
                                           static_cast<int64_t>(o.api_max_header_bytes));
  if (!head.ok()) return head.status();
  absl::StatusOr<int64_t> secs = RangedInt(config, "tempest.api.request.timeout.secs", 30);
  if (!secs.ok()) return secs.status();
  o.api_max_body_bytes = static_cast<size_t>(*body);
  o.api_max_header_bytes = static_cast<size_t>(*head);
  o.api_request_timeout = std::chrono::seconds(*secs);
  return absl::OkStatus();
}

// Wrong credentials fail here, once; no credentials are said out loud.
absl::Status CheckZooKeeperAccess(coord::ZkSession& session, const NimbusOptions& options) {
  if (absl::Status s = session.VerifyAccess(options.root.empty() ? "/" : options.root); !s.ok()) {
    return s;
  }
  if (!options.zk.auth.enabled()) {
    spdlog::warn(
        "nimbus: ZooKeeper digest auth is not configured (storm.zookeeper.auth.scheme / "
        "storm.zookeeper.auth.payload or tempest.zookeeper.auth.file): every znode, including "
        "each topology's transport secret, can be read and written by any ZooKeeper client "
        "(docs/security.md)");
  }
  return absl::OkStatus();
}

// Creates nimbus's directories and checks that the cluster tree is owned:
// nodes another client made first would walk around every ACL below them.
absl::Status EnsureClusterDirectories(coord::ZkSession& session, const coord::ClusterPaths& paths) {
  // errors, blobs and credentials too: a worker's identity may add children
  // only to its own topology's nodes, never create these.
  for (const std::string& path :
       {paths.Storms(), paths.Assignments(), paths.Supervisors(), paths.Nimbuses(),
        paths.WorkerBeats(), paths.Errors(), paths.Blobs(), paths.Credentials(),
        paths.WorkerFailures()}) {
    if (absl::Status s = session.EnsurePath(path); !s.ok()) return s;
  }
  return coord::EnsureClusterTreeOwned(
      session, paths, [](const std::string& line) { spdlog::warn("nimbus: {}", line); });
}

std::string SlotName(const WorkerSlot& slot) { return absl::StrCat(slot.node, ":", slot.port); }

// The assignment of topology `id` the scheduler placed as `placed`:
// executors that stay on their slot keep their start time, and the secret
// is the one ReplacementTransportSecret settles on (kept by reassignment,
// rebalance and another leader).
absl::StatusOr<v1::Assignment> NextAssignment(const std::string& id,
                                              const std::string& cluster_secret,
                                              const ExecutorSlots& placed,
                                              const v1::Assignment* stored,
                                              const std::map<std::string, std::string>& hosts,
                                              int64_t now_secs) {
  std::map<std::pair<ExecutorId, WorkerSlot>, int64_t> started;
  if (stored != nullptr) {
    for (const v1::ExecutorAssignment& e : stored->executors()) {
      started[{ExecutorId{e.start_task(), e.end_task()}, WorkerSlot{e.node(), e.port()}}] =
          e.start_time_secs();
    }
  }
  v1::Assignment next;
  for (const auto& [executor, slot] : placed) {
    v1::ExecutorAssignment* e = next.add_executors();
    e->set_start_task(executor.start);
    e->set_end_task(executor.end);
    e->set_node(slot.node);
    e->set_port(slot.port);
    auto st = started.find({executor, slot});
    e->set_start_time_secs(st != started.end() ? st->second : now_secs);
    auto host = hosts.find(slot.node);
    (*next.mutable_node_host())[slot.node] = host != hosts.end() ? host->second : "";
  }
  if (stored != nullptr) next.set_transport_secret(stored->transport_secret());
  absl::StatusOr<std::optional<std::string>> secret =
      ReplacementTransportSecret(cluster_secret, id, next.transport_secret());
  if (!secret.ok()) return secret.status();
  if (secret->has_value()) next.set_transport_secret(**secret);
  return next;
}

}  // namespace

absl::StatusOr<NimbusOptions> NimbusOptions::FromConfig(const api::Config& config) {
  NimbusOptions o;
  o.config = config;
  absl::StatusOr<coord::ClusterZkConfig> zk = coord::ClusterZkConfig::FromConfig(config);
  if (!zk.ok()) return zk.status();
  o.zk_connect = zk->connect;
  o.root = zk->root;
  o.zk = zk->client;
  // A nimbus given its host's name serves (and registers itself) there
  // rather than on loopback, where no other host could reach it.
  o.bind_host = config.GetString(
      "ui.host", config.GetString(api::kStormLocalHostname, "127.0.0.1"));
  if (o.bind_host.empty()) o.bind_host = "127.0.0.1";
  if (o.bind_host == "0.0.0.0" || o.bind_host == "::") {
    o.advertise_host = config.GetString(api::kStormLocalHostname, "");
  }
  const int64_t port = config.GetInt("ui.port", 8080);
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("ui.port must be 0..65535, not ", port));
  }
  o.port = static_cast<int>(port);
  const int64_t monitor = config.GetInt(api::kNimbusMonitorFreqSecs, 10);
  if (monitor > 0) o.monitor_interval = std::chrono::seconds(monitor);
  absl::StatusOr<std::chrono::seconds> task_timeout =
      PositiveSecs(config, api::kNimbusTaskTimeoutSecs, 30, false);
  if (!task_timeout.ok()) return task_timeout.status();
  absl::StatusOr<std::chrono::seconds> task_launch =
      PositiveSecs(config, api::kNimbusTaskLaunchSecs, 120, true);
  if (!task_launch.ok()) return task_launch.status();
  absl::StatusOr<std::chrono::seconds> supervisor_timeout =
      PositiveSecs(config, api::kNimbusSupervisorTimeoutSecs, 60, false);
  if (!supervisor_timeout.ok()) return supervisor_timeout.status();
  o.liveness = LivenessTimeouts{*task_timeout, *task_launch, *supervisor_timeout};
  absl::StatusOr<net::HttpAuthPolicy> auth = net::HttpAuthPolicyFromConfig(config);
  if (!auth.ok()) return auth.status();
  o.api_auth = *std::move(auth);
  if (absl::Status s = ReadApiLimits(config, o); !s.ok()) return s;
  if (const std::string file = config.GetString(net::kClusterSecretFileKey, ""); !file.empty()) {
    absl::StatusOr<std::string> secret = net::LoadClusterSecret(file);
    if (!secret.ok()) return secret.status();
    o.cluster_secret = *std::move(secret);
  }
  return o;
}

Nimbus::Nimbus(NimbusOptions options)
    : options_(std::move(options)), cache_(options_.liveness) {}

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
  if (absl::Status s = CheckZooKeeperAccess(*session_, options_); !s.ok()) return s;
  if (!options_.api_auth.enabled()) {
    spdlog::warn(
        "nimbus: the REST API has no token (tempest.api.token.file): anyone who can reach "
        "ui.port can submit, kill and rebalance topologies (docs/security.md)");
  }
  store_ = std::make_unique<TopologyStore>(*session_, options_.root, *options_.registry,
                                           *options_.clock);
  KafkaLagCache::Options lo;
  lo.zk_connect = options_.zk_connect;
  lo.zk = options_.zk;
  lo.session = session_.get();  // declared before lag_cache_: outlives its thread
  lo.clock = options_.clock;
  absl::StatusOr<std::unique_ptr<KafkaLagCache>> lag_cache = KafkaLagCache::Create(std::move(lo));
  if (!lag_cache.ok()) return lag_cache.status();
  lag_cache_ = *std::move(lag_cache);
  // Before the REST port opens: a cluster tree that is not ours is refused here.
  if (absl::Status s = EnsureClusterDirectories(*session_, store_->paths()); !s.ok()) return s;

  absl::StatusOr<std::unique_ptr<net::EventLoop>> loop = net::EventLoop::Create("nimbus-http");
  if (!loop.ok()) return loop.status();
  loop_ = *std::move(loop);
  absl::StatusOr<net::HttpRouter> router = MakeNimbusRouter(*this);
  if (!router.ok()) return router.status();
  net::HttpServerOptions ho;
  ho.bind_address = options_.bind_host;
  ho.port = options_.port;
  ho.body_limit_bytes = options_.api_max_body_bytes;
  ho.header_limit_bytes = options_.api_max_header_bytes;
  ho.request_timeout = options_.api_request_timeout;
  // Handlers run on a small pool, so a submission waiting on ZooKeeper (up
  // to op_timeout) holds one thread while reads are answered on the others.
  // Reads are thread-safe (TopologyStore, ZkSession); writes still run one
  // at a time on the control thread.
  ho.handler_threads = 4;
  if (absl::Status s = net::ApplyApiLimits(options_.config, ho); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<net::HttpServer>> http =
      net::HttpServer::Create(*loop_, std::move(ho), *std::move(router));
  if (!http.ok()) {
    // Name the keys: the port is the one setting a user picks and the first
    // thing another program on the machine may hold.
    return absl::Status(http.status().code(),
                        absl::StrCat("the REST API and web UI (ui.host ", options_.bind_host,
                                     ", ui.port ", options_.port, "): ", http.status().message(),
                                     absl::IsUnavailable(http.status())
                                         ? "; another process holds the port: stop it or set "
                                           "another ui.port (-c ui.port=N)"
                                         : ""));
  }
  http_ = *std::move(http);
  port_ = http_->port();
  id_ = absl::StrCat(AdvertisedHost(), ":", port_);

  RemoveStaleNodesOfThisId();
  if (absl::Status s = Register(); !s.ok()) return s;

  coord::LeaderElection::Options eo;
  eo.path = store_->paths().Leader();
  eo.participant_id = id_;
  eo.host = AdvertisedHost();
  eo.port = port_;
  eo.op_timeout = options_.op_timeout;
  std::weak_ptr<coord::SerialExecutor> weak = control_;
  eo.on_change = [this, weak](bool leader) {
    spdlog::info("nimbus {}: {}", id_, leader ? "gained leadership" : "is not the leader");
    if (auto control = weak.lock()) {
      control->Post([this, leader] {
        if (stopping_) return;
        // Storm's HeartbeatCache starts empty on a new leader: everyone
        // gets a full timeout, whatever an earlier term remembered.
        if (leader) cache_.Clear();
        (void)Reconcile();
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
  // Joins the lag measurer before the session it reads through closes.
  lag_cache_.reset();
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
  // Just started (or re-joined): the election has not settled while no
  // leader is known yet or our own node leads without the election having
  // told us. Wait for it (bounded) rather than refuse a write this nimbus is
  // about to be allowed to make.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while ((!leader.ok() || *leader == id_) && !IsLeader() &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
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

absl::StatusOr<v1::StormBase> Nimbus::Rebalance(const std::string& id,
                                                const RebalanceRequest& request) {
  return OnControl<v1::StormBase>([this, id, request]() -> absl::StatusOr<v1::StormBase> {
    if (absl::Status s = CheckLeader(); !s.ok()) return s;
    absl::StatusOr<v1::StormBase> base = store_->Rebalance(id, request);
    if (base.ok()) {
      spdlog::info("nimbus {}: rebalancing {} in {}s (workers {}, {} executor changes)", id_, id,
                   base->rebalance_at_secs() - options_.clock->WallMillis() / 1000,
                   request.num_workers.value_or(base->num_workers()), request.executors.size());
      (void)Reconcile();
    }
    return base;
  });
}

absl::StatusOr<std::vector<StoredBeat>> Nimbus::WorkerBeats(const std::string& id) {
  return store_->ListWorkerBeats(id);
}

absl::StatusOr<std::vector<StoredError>> Nimbus::Errors(const std::string& id) {
  return store_->ListErrors(id);
}

absl::StatusOr<std::vector<StoredWorkerFailure>> Nimbus::WorkerFailures(const std::string& id) {
  return store_->ListWorkerFailures(id);
}

bool Nimbus::ZooKeeperReachable() const {
  const coord::ZkSessionState state = session_->state();
  return state == coord::ZkSessionState::kConnected || state == coord::ZkSessionState::kReadOnly;
}

absl::StatusOr<std::vector<StoredTopology>> Nimbus::Topologies() { return store_->List(); }

absl::StatusOr<StoredTopology> Nimbus::Topology(const std::string& id) { return store_->Get(id); }

absl::StatusOr<std::optional<v1::Assignment>> Nimbus::AssignmentOf(const std::string& id) {
  return store_->GetAssignment(id);
}

absl::StatusOr<std::vector<v1::SupervisorInfo>> Nimbus::Supervisors() {
  return store_->ListSupervisors();
}

absl::StatusOr<std::vector<spout::SpoutLag>> Nimbus::KafkaLag(const StoredTopology& topology) {
  return lag_cache_->Get(topology);
}

absl::StatusOr<std::vector<NimbusPeer>> Nimbus::Nimbuses() {
  absl::StatusOr<std::vector<std::string>> ids = session_->Children(store_->paths().Nimbuses());
  if (!ids.ok()) return ids.status();
  std::sort(ids->begin(), ids->end());
  absl::StatusOr<std::string> leader = Leader();
  std::vector<NimbusPeer> out;
  for (const std::string& id : *ids) {
    absl::StatusOr<coord::ZkNode> node =
        session_->Get(store_->paths().Nimbus(id));
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
  if (options_.bind_host.empty() || options_.bind_host == "0.0.0.0" ||
      options_.bind_host == "::") {
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
      spdlog::info("nimbus {}: removed election node {} left by an earlier session of this id",
                   id_, path);
    } else if (!absl::IsNotFound(s)) {
      spdlog::warn("nimbus {}: cannot remove stale election node {}: {}", id_, path,
                   std::string(s.message()));
    }
  }
}

absl::Status Nimbus::Register() {
  const std::string path = store_->paths().Nimbus(id_);
  absl::StatusOr<std::optional<coord::ZkStat>> exists = session_->Exists(path);
  if (!exists.ok()) return exists.status();
  // A node left by an earlier session of ours goes with that session; the
  // next round re-creates it.
  if (exists->has_value()) return absl::OkStatus();
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

void Nimbus::WatchSupervisors() {
  if (supervisors_watched_.exchange(true)) return;
  std::weak_ptr<coord::SerialExecutor> weak = control_;
  // A supervisor that vanishes (or appears) is handled at once, not at the
  // next monitor round. The watch runs on the session's dispatcher thread,
  // so it only posts.
  absl::StatusOr<std::vector<std::string>> children = session_->ChildrenAndWatch(
      store_->paths().Supervisors(), [this, weak](const coord::ZkWatchEvent& event) {
        supervisors_watched_ = false;
        if (event.type == coord::ZkWatchEventType::kSessionLost) return;
        if (auto control = weak.lock()) {
          control->Post([this] {
            if (!stopping_) (void)Reconcile();
          });
        }
      });
  if (!children.ok()) supervisors_watched_ = false;
}

absl::Status Nimbus::Reconcile() {
  if (absl::Status s = Register(); !s.ok()) return s;
  if (!IsLeader()) return absl::OkStatus();
  WatchSupervisors();
  absl::StatusOr<std::vector<StoredTopology>> topologies = store_->List();
  if (!topologies.ok()) return topologies.status();
  const int64_t now_secs = options_.clock->WallMillis() / 1000;
  std::vector<StoredTopology> remaining;
  std::set<std::string> scratch;
  for (StoredTopology& t : *topologies) {
    if (t.base.status() == v1::KILLED && t.base.remove_at_secs() <= now_secs) {
      if (absl::Status s = store_->Remove(t.id); !s.ok()) return s;
      cache_.ForgetTopology(t.id);
      spdlog::info("nimbus {}: removed {}", id_, t.id);
      continue;
    }
    if (t.base.status() == v1::REBALANCING && t.base.rebalance_at_secs() <= now_secs) {
      absl::StatusOr<v1::StormBase> done = FinishRebalance(t.base);
      if (!done.ok()) {
        // Validated when requested, so this means a damaged record: give
        // up the rebalance rather than retry it every round forever.
        spdlog::error("nimbus {}: cannot rebalance {}: {}; restoring its status", id_, t.id,
                      std::string(done.status().message()));
        v1::StormBase restored = t.base;
        restored.set_status(t.base.prev_status() == v1::INACTIVE ? v1::INACTIVE : v1::ACTIVE);
        restored.set_rebalance_at_secs(0);
        restored.set_rebalance_num_workers(0);
        done = restored;
      }
      absl::Status s = store_->Update(t.id, *done, t.version);
      if (s.ok()) {
        t.base = *std::move(done);
        scratch.insert(t.id);
        spdlog::info("nimbus {}: rebalanced {}: {} workers, {} executors", id_, t.id,
                     t.base.num_workers(), t.base.num_executors());
      } else if (absl::IsNotFound(s)) {
        continue;
      } else if (!absl::IsAborted(s)) {
        return s;
      }  // Aborted: changed meanwhile (e.g. killed); the next round decides.
    }
    remaining.push_back(std::move(t));
  }
  std::map<std::string, v1::Assignment> assignments;
  std::map<std::string, std::vector<StoredBeat>> beats;
  absl::Status scheduled = Schedule(remaining, scratch, &assignments, &beats);
  if (scheduled.ok()) {
    if (absl::Status s = CleanWorkerBeats(remaining, assignments, beats); !s.ok()) {
      spdlog::warn("nimbus {}: cleaning workerbeats: {}", id_, std::string(s.message()));
    }
    // Every round feeds the statistics windows, so they fill whether or not
    // anyone reads the REST pages.
    const int64_t now_secs = options_.clock->WallMillis() / 1000;
    std::vector<std::string> live;
    for (const StoredTopology& t : remaining) {
      live.push_back(t.id);
      auto a = assignments.find(t.id);
      auto b = beats.find(t.id);
      if (b == beats.end()) continue;
      stats_history_.RecordTopology(
          t, a != assignments.end() ? std::optional<v1::Assignment>(a->second) : std::nullopt,
          b->second, now_secs);
    }
    stats_history_.Retain(live);
  }
  // A kill or rebalance whose wait ends before the next periodic round
  // gets its own.
  for (const StoredTopology& t : remaining) {
    int64_t due = 0;
    if (t.base.status() == v1::KILLED) {
      due = t.base.remove_at_secs();
    } else if (t.base.status() == v1::REBALANCING) {
      due = t.base.rebalance_at_secs();
    } else {
      continue;
    }
    const auto delay = std::chrono::seconds(std::max<int64_t>(0, due - now_secs));
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

absl::Status Nimbus::Schedule(const std::vector<StoredTopology>& topologies,
                              const std::set<std::string>& scratch,
                              std::map<std::string, v1::Assignment>* final_assignments,
                              std::map<std::string, std::vector<StoredBeat>>* beats_out) {
  absl::StatusOr<std::vector<v1::SupervisorInfo>> supervisors = store_->ListSupervisors();
  if (!supervisors.ok()) return supervisors.status();
  const core::Clock::TimePoint now = options_.clock->Now();
  const int64_t now_secs = options_.clock->WallMillis() / 1000;
  std::map<std::string, int64_t> present;
  for (const v1::SupervisorInfo& s : *supervisors) present[s.supervisor_id()] = s.time_secs();
  const std::set<std::string> alive_supervisors = cache_.UpdateSupervisors(present, now);
  std::map<std::string, std::string> hosts;
  for (const v1::SupervisorInfo& s : *supervisors) hosts[s.supervisor_id()] = s.hostname();

  std::vector<TopologySchedulingInput> inputs;
  std::map<std::string, v1::Assignment> current;
  // Storm's dead ports: a slot with a dead executor is not offered to
  // anyone in this round, so its executors land on another slot.
  std::set<WorkerSlot> dead_slots;
  for (const StoredTopology& t : topologies) {
    TopologySchedulingInput in;
    in.id = t.id;
    in.num_workers = t.base.num_workers();
    in.schedulable = t.base.status() != v1::KILLED;
    for (const v1::ExecutorRange& e : t.base.executors()) {
      in.executors.push_back(ExecutorId{e.start_task(), e.end_task()});
    }
    absl::StatusOr<std::optional<v1::Assignment>> a = store_->GetAssignment(t.id);
    if (absl::IsDataLoss(a.status())) {
      spdlog::warn("nimbus {}: {}; rescheduling it", id_, std::string(a.status().message()));
      a = std::optional<v1::Assignment>();
    }
    if (!a.ok()) return a.status();
    absl::StatusOr<std::vector<StoredBeat>> beats = store_->ListWorkerBeats(t.id);
    if (!beats.ok()) return beats.status();
    // Rebalance: the old assignment is ignored, so all its slots are free
    // and every executor is placed again.
    if (a->has_value()) {
      current[t.id] = **a;
      if (!scratch.contains(t.id)) {
        for (const v1::ExecutorAssignment& e : (*a)->executors()) {
          in.current[ExecutorId{e.start_task(), e.end_task()}] = WorkerSlot{e.node(), e.port()};
        }
        if (in.schedulable) FindDeadSlots(t.id, **a, *beats, now, now_secs, &dead_slots);
      }
    }
    (*beats_out)[t.id] = *std::move(beats);
    inputs.push_back(std::move(in));
  }

  std::vector<SupervisorSlots> slots;
  for (const v1::SupervisorInfo& s : *supervisors) {
    if (!alive_supervisors.contains(s.supervisor_id())) continue;
    SupervisorSlots ss{s.supervisor_id(), {}};
    for (int port : s.slot_ports()) {
      if (!dead_slots.contains(WorkerSlot{s.supervisor_id(), port})) ss.ports.push_back(port);
    }
    slots.push_back(std::move(ss));
  }
  for (const auto& [id, when] : present) {
    if (!alive_supervisors.contains(id)) {
      spdlog::warn("nimbus {}: supervisor {} has not beaten for {}s; its slots are freed", id_, id,
                   options_.liveness.supervisor_timeout.count());
    }
  }
  return WriteAssignments(topologies, current, ScheduleCluster(inputs, slots), hosts, now_secs,
                          final_assignments);
}

void Nimbus::FindDeadSlots(const std::string& topology_id, const v1::Assignment& assignment,
                           const std::vector<StoredBeat>& beats, core::Clock::TimePoint now,
                           int64_t now_secs, std::set<WorkerSlot>* dead_slots) {
  std::vector<AssignedExecutor> assigned;
  for (const v1::ExecutorAssignment& e : assignment.executors()) {
    assigned.push_back(AssignedExecutor{ExecutorId{e.start_task(), e.end_task()},
                                        WorkerSlot{e.node(), e.port()}, e.start_time_secs()});
  }
  std::map<WorkerSlot, BeatView> views;
  for (const StoredBeat& b : beats) {
    if (!b.parsed || b.slot.port == 0) continue;
    BeatView& v = views[b.slot];
    v.content = b.data;
    for (const v1::ExecutorRange& r : b.beat.executors()) {
      v.executors.insert(ExecutorId{r.start_task(), r.end_task()});
    }
  }
  const std::set<ExecutorId> dead =
      cache_.UpdateTopology(topology_id, assigned, views, now, now_secs);
  for (const AssignedExecutor& e : assigned) {
    if (!dead.contains(e.executor)) continue;
    if (dead_slots->insert(e.slot).second) {
      spdlog::warn("nimbus {}: {} on {}: no heartbeat change for {}s; its executors are dead", id_,
                   topology_id, SlotName(e.slot), options_.liveness.task_timeout.count());
    }
  }
}

absl::Status Nimbus::WriteAssignments(const std::vector<StoredTopology>& topologies,
                                      const std::map<std::string, v1::Assignment>& current,
                                      const std::map<std::string, ExecutorSlots>& changed,
                                      const std::map<std::string, std::string>& hosts,
                                      int64_t now_secs,
                                      std::map<std::string, v1::Assignment>* final_assignments) {
  for (const StoredTopology& t : topologies) {
    auto it = current.find(t.id);
    const v1::Assignment* stored = it != current.end() ? &it->second : nullptr;
    auto ch = changed.find(t.id);
    if (ch == changed.end()) {
      if (stored == nullptr) continue;
      v1::Assignment kept = *stored;
      absl::StatusOr<std::optional<std::string>> secret = ReplacementTransportSecret(
          options_.cluster_secret, t.id, kept.transport_secret());
      if (!secret.ok()) return secret.status();
      if (secret->has_value() && t.base.status() != v1::KILLED) {
        // Written before secrets existed, or before the cluster secret file
        // was set: its workers restart with the new secret.
        if (!kept.transport_secret().empty()) {
          spdlog::warn("nimbus {}: {}'s transport secret now derives from {}", id_, t.id,
                       net::kClusterSecretFileKey);
        }
        kept.set_transport_secret(**secret);
        if (absl::Status s = store_->PutAssignment(t.id, kept); !s.ok()) return s;
      }
      (*final_assignments)[t.id] = std::move(kept);
      continue;
    }
    absl::StatusOr<v1::Assignment> next =
        NextAssignment(t.id, options_.cluster_secret, ch->second, stored, hosts, now_secs);
    if (!next.ok()) return next.status();
    if (absl::Status s = store_->PutAssignment(t.id, *next); !s.ok()) return s;
    spdlog::info("nimbus {}: assigned {} of {} executors of {}", id_, next->executors_size(),
                 t.base.num_executors(), t.id);
    (*final_assignments)[t.id] = *std::move(next);
  }
  return absl::OkStatus();
}

absl::Status Nimbus::CleanWorkerBeats(
    const std::vector<StoredTopology>& topologies,
    const std::map<std::string, v1::Assignment>& assignments,
    const std::map<std::string, std::vector<StoredBeat>>& beats) {
  std::set<std::string> known;
  for (const StoredTopology& t : topologies) known.insert(t.id);
  absl::StatusOr<std::vector<std::string>> dirs = store_->WorkerBeatTopologies();
  if (!dirs.ok()) return dirs.status();
  // Beats of topologies that no longer exist (removed while a worker was
  // still writing, or by an older nimbus).
  for (const std::string& id : *dirs) {
    if (known.contains(id)) continue;
    if (absl::Status s = store_->RemoveWorkerBeats(id); !s.ok()) return s;
    spdlog::info("nimbus {}: removed the workerbeats of {}", id_, id);
  }
  // The same for published errors (a worker may write one while its
  // topology is being removed).
  absl::StatusOr<std::vector<std::string>> error_dirs = store_->ErrorTopologies();
  if (!error_dirs.ok()) return error_dirs.status();
  for (const std::string& id : *error_dirs) {
    if (known.contains(id)) continue;
    if (absl::Status s = store_->RemoveErrors(id); !s.ok()) return s;
    spdlog::info("nimbus {}: removed the errors of {}", id_, id);
  }
  // And the supervisors' records of failed workers.
  absl::StatusOr<std::vector<std::string>> failure_dirs = store_->WorkerFailureTopologies();
  if (!failure_dirs.ok()) return failure_dirs.status();
  for (const std::string& id : *failure_dirs) {
    if (known.contains(id)) continue;
    if (absl::Status s = store_->RemoveWorkerFailures(id); !s.ok()) return s;
  }
  // Beats of slots the topology no longer has.
  for (const auto& [id, list] : beats) {
    std::set<WorkerSlot> slots;
    if (auto a = assignments.find(id); a != assignments.end()) {
      for (const v1::ExecutorAssignment& e : a->second.executors()) {
        slots.insert(WorkerSlot{e.node(), e.port()});
      }
    }
    for (const StoredBeat& b : list) {
      if (b.slot.port != 0 && slots.contains(b.slot)) continue;
      if (absl::Status s = store_->DeleteWorkerBeat(id, b.name); !s.ok()) return s;
      spdlog::info("nimbus {}: removed the stale beat {} of {}", id_, b.name, id);
    }
  }
  return absl::OkStatus();
}

}  // namespace tempest::nimbus
