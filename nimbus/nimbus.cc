#include "nimbus/nimbus.h"

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/coord/zk_acl_check.h"
#include "common/core/status_macros.h"
#include "common/net/event_loop.h"
#include "common/net/http_server.h"
#include "spdlog/spdlog.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {
namespace {

// Wrong credentials fail here, once; no credentials are said out loud.
absl::Status CheckZooKeeperAccess(coord::ZkSession& session, const NimbusOptions& options) {
  RETURN_IF_ERROR(session.VerifyAccess(options.root.empty() ? "/" : options.root));
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
  for (const std::string& path : {paths.Storms(), paths.Assignments(), paths.Supervisors(),
                                  paths.Nimbuses(), paths.WorkerBeats(), paths.Errors(),
                                  paths.Blobs(), paths.Credentials(), paths.WorkerFailures()}) {
    RETURN_IF_ERROR(session.EnsurePath(path));
  }
  return coord::EnsureClusterTreeOwned(
      session, paths, [](const std::string& line) { spdlog::warn("nimbus: {}", line); });
}

}  // namespace

Nimbus::Nimbus(NimbusOptions options) : options_(std::move(options)), cache_(options_.liveness) {}

absl::StatusOr<std::unique_ptr<Nimbus>> Nimbus::Create(NimbusOptions options) {
  if (options.registry == nullptr) {
    return absl::InvalidArgumentError("nimbus needs a component registry");
  }
  std::unique_ptr<Nimbus> n(new Nimbus(std::move(options)));
  RETURN_IF_ERROR(n->Start());
  return n;
}

absl::Status Nimbus::Start() {
  // The REST port opens before the election exists, and writes run on the
  // control thread: it waits here until Start is over, so a write never
  // finds this nimbus half started.
  auto started = std::make_shared<absl::Notification>();
  control_->Post([started] { started->WaitForNotification(); });
  absl::Status s = StartServing();
  started->Notify();
  return s;
}

absl::Status Nimbus::StartServing() {
  launch_time_secs_ = options_.clock->WallMillis() / 1000;
  RETURN_IF_ERROR(ConnectZooKeeper());
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
  ASSIGN_OR_RETURN(lag_cache_, KafkaLagCache::Create(std::move(lo)));
  // Before the REST port opens: a cluster tree that is not ours is refused here.
  RETURN_IF_ERROR(EnsureClusterDirectories(*session_, store_->paths()));
  RETURN_IF_ERROR(StartHttp());
  port_ = http_->port();
  id_ = absl::StrCat(AdvertisedHost(), ":", port_);

  RemoveStaleNodesOfThisId();
  RETURN_IF_ERROR(Register());
  RETURN_IF_ERROR(JoinElection());
  ScheduleNextRound();
  return absl::OkStatus();
}

absl::Status Nimbus::ConnectZooKeeper() {
  coord::ZkSession::Options zo;
  zo.connect_string = options_.zk_connect;
  zo.config = options_.zk;
  zo.clock = options_.clock;
  ASSIGN_OR_RETURN(session_, coord::ZkSession::Create(std::move(zo)));
  if (absl::Status s = session_->WaitConnected(options_.zk.connection_timeout); !s.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach ZooKeeper at ", options_.zk_connect, ": ", s.message()));
  }
  return CheckZooKeeperAccess(*session_, options_);
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
  const core::Clock::TimePoint deadline = LeadershipDeadline();
  return OnControl<std::string>([this, request, deadline]() -> absl::StatusOr<std::string> {
    RETURN_IF_ERROR(CheckLeader(deadline));
    absl::StatusOr<std::string> id = store_->Submit(request);
    if (id.ok()) {
      spdlog::info("nimbus {}: submitted {}", id_, *id);
      ReconcileAfter("a submission");
    }
    return id;
  });
}

absl::StatusOr<v1::StormBase> Nimbus::Activate(const std::string& id) {
  const core::Clock::TimePoint deadline = LeadershipDeadline();
  return OnControl<v1::StormBase>([this, id, deadline]() -> absl::StatusOr<v1::StormBase> {
    RETURN_IF_ERROR(CheckLeader(deadline));
    return store_->Transition(id, TopologyEvent::kActivate);
  });
}

absl::StatusOr<v1::StormBase> Nimbus::Deactivate(const std::string& id) {
  const core::Clock::TimePoint deadline = LeadershipDeadline();
  return OnControl<v1::StormBase>([this, id, deadline]() -> absl::StatusOr<v1::StormBase> {
    RETURN_IF_ERROR(CheckLeader(deadline));
    return store_->Transition(id, TopologyEvent::kDeactivate);
  });
}

absl::StatusOr<v1::StormBase> Nimbus::Kill(const std::string& id, std::optional<int> wait_secs) {
  const core::Clock::TimePoint deadline = LeadershipDeadline();
  return OnControl<v1::StormBase>([this, id, wait_secs,
                                   deadline]() -> absl::StatusOr<v1::StormBase> {
    RETURN_IF_ERROR(CheckLeader(deadline));
    absl::StatusOr<v1::StormBase> base = store_->Transition(id, TopologyEvent::kKill, wait_secs);
    if (base.ok()) {
      spdlog::info("nimbus {}: killed {} (removal in {}s)", id_, id, base->kill_wait_secs());
      // A zero wait removes it in this round already.
      ReconcileAfter("a kill");
    }
    return base;
  });
}

absl::StatusOr<v1::StormBase> Nimbus::Rebalance(const std::string& id,
                                                const RebalanceRequest& request) {
  const core::Clock::TimePoint deadline = LeadershipDeadline();
  return OnControl<v1::StormBase>([this, id, request, deadline]() -> absl::StatusOr<v1::StormBase> {
    RETURN_IF_ERROR(CheckLeader(deadline));
    absl::StatusOr<v1::StormBase> base = store_->Rebalance(id, request);
    if (base.ok()) {
      spdlog::info("nimbus {}: rebalancing {} in {}s (workers {}, {} executor changes)", id_, id,
                   base->rebalance_at_secs() - options_.clock->WallMillis() / 1000,
                   request.num_workers.value_or(base->num_workers()), request.executors.size());
      ReconcileAfter("a rebalance request");
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

absl::StatusOr<std::vector<spout::SpoutLagTarget>> Nimbus::KafkaSpouts(
    const StoredTopology& topology) {
  return lag_cache_->Targets(topology);
}

absl::StatusOr<std::vector<NimbusPeer>> Nimbus::Nimbuses() {
  ASSIGN_OR_RETURN(std::vector<std::string> ids, session_->Children(store_->paths().Nimbuses()));
  std::sort(ids.begin(), ids.end());
  absl::StatusOr<std::string> leader = Leader();
  std::vector<NimbusPeer> out;
  for (const std::string& id : ids) {
    absl::StatusOr<coord::ZkNode> node = session_->Get(store_->paths().Nimbus(id));
    if (absl::IsNotFound(node.status())) continue;
    RETURN_IF_ERROR(node.status());
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
    RETURN_IF_ERROR(Reconcile());
    return true;
  });
  return done.status();
}

}  // namespace tempest::nimbus
