#include "common/coord/leader_election.h"

#include <algorithm>

#include "absl/time/time.h"
#include "common/coord/zk_paths.h"
#include "common/core/status_macros.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::coord {
namespace {
constexpr char kPrefix[] = "n_";
}  // namespace

absl::StatusOr<std::unique_ptr<LeaderElection>> LeaderElection::Create(ZkSession& session,
                                                                       Options options) {
  RETURN_IF_ERROR(ValidatePath(options.path));
  if (options.participant_id.empty()) {
    return absl::InvalidArgumentError("participant_id must not be empty");
  }
  auto e = std::unique_ptr<LeaderElection>(new LeaderElection(session, std::move(options)));
  LeaderElection* self = e.get();
  // Reconcile reads the state when it runs, so a burst of events cannot make
  // leadership flap on stale information.
  e->subscription_ = session.Subscribe(
      [self](const ZkSessionEvent&) { self->executor_->Post([self] { self->Reconcile(); }); });
  e->executor_->Post([self] { self->Reconcile(); });
  return e;
}

LeaderElection::LeaderElection(ZkSession& session, Options options)
    : session_(session), options_(std::move(options)) {}

LeaderElection::~LeaderElection() {
  session_.Unsubscribe(subscription_);
  executor_->Stop();
  if (!my_node_.empty() && session_.session_id() == my_session_) {
    // Best effort, so the next participant leads at once; should it fail,
    // the node is ephemeral and leaves with the session anyway.
    (void)session_.Delete(my_node_, -1, ZkCall{options_.op_timeout, my_session_});
  }
  leader_ = false;
}

void LeaderElection::SetLeader(bool leader) {
  if (leader_.exchange(leader) != leader && options_.on_change) options_.on_change(leader);
}

void LeaderElection::FinishRound() {
  absl::MutexLock lock(&round_mu_);
  ++rounds_;
  round_done_.SignalAll();
}

bool LeaderElection::AwaitRound(core::Clock::TimePoint deadline) const {
  absl::MutexLock lock(&round_mu_);
  const uint64_t seen = rounds_;
  while (rounds_ == seen) {
    const core::Clock::Duration left = deadline - options_.clock->Now();
    if (left <= core::Clock::Duration::zero()) break;
    // Times out on the real clock after `left`; a spurious wake re-reads it.
    if (round_done_.WaitWithTimeout(&round_mu_, absl::FromChrono(left))) break;
  }
  return IsLeader();
}

bool LeaderElection::Join(int64_t sid) {
  tempest::v1::ElectionParticipant me;
  me.set_participant_id(options_.participant_id);
  me.set_host(options_.host);
  me.set_port(options_.port);
  ZkCreateOptions create;
  create.mode = ZkCreateMode::kEphemeralSequential;
  create.create_parents = true;
  auto created = session_.Create(JoinPath(options_.path, kPrefix), me.SerializeAsString(), create,
                                 ZkCall{options_.op_timeout, sid});
  if (!created.ok()) return false;
  my_node_ = *created;
  my_session_ = sid;
  return true;
}

void LeaderElection::Reconcile() {
  if (session_.state() != ZkSessionState::kConnected) {
    // Suspended or Lost: we cannot be sure our node still exists.
    SetLeader(false);
    FinishRound();
    return;
  }
  const int64_t sid = session_.session_id();
  const ZkCall call{options_.op_timeout, 0};
  auto retry = [this] { executor_->PostAfter(options_.retry_interval, [this] { Reconcile(); }); };
  if (my_node_.empty() || my_session_ != sid) {
    SetLeader(false);
    if (!Join(sid)) return retry();
  }
  auto children = session_.Children(options_.path, call);
  if (!children.ok()) return retry();
  std::vector<std::string> names;
  for (auto& c : *children) {
    if (c.rfind(kPrefix, 0) == 0) names.push_back(c);
  }
  SortBySequence(names);
  const std::string mine = BaseName(my_node_);
  auto it = std::find(names.begin(), names.end(), mine);
  if (it == names.end()) {
    // Our node is gone (deleted by someone, or the session ended): re-join.
    my_node_.clear();
    SetLeader(false);
    executor_->Post([this] { Reconcile(); });
    return;
  }
  if (it == names.begin()) {
    SetLeader(true);
    FinishRound();
    return;
  }
  SetLeader(false);
  const std::string predecessor = JoinPath(options_.path, *(it - 1));
  auto watched = session_.ExistsAndWatch(
      predecessor,
      [this, weak = std::weak_ptr<SerialExecutor>(executor_)](const ZkWatchEvent&) {
        if (auto ex = weak.lock()) ex->Post([this] { Reconcile(); });
      },
      call);
  if (!watched.ok()) return retry();
  if (!watched->has_value()) {
    // The predecessor left meanwhile: the next round decides.
    executor_->Post([this] { Reconcile(); });
    return;
  }
  FinishRound();
}

absl::StatusOr<std::string> LeaderElection::CurrentLeader() const {
  const ZkCall call{options_.op_timeout, 0};
  ASSIGN_OR_RETURN(std::vector<std::string> children, session_.Children(options_.path, call));
  std::vector<std::string> names;
  for (auto& c : children) {
    if (c.rfind(kPrefix, 0) == 0) names.push_back(c);
  }
  SortBySequence(names);
  for (const auto& name : names) {
    auto node = session_.Get(JoinPath(options_.path, name), call);
    if (absl::IsNotFound(node.status())) continue;  // left meanwhile; the next one leads
    RETURN_IF_ERROR(node.status());
    tempest::v1::ElectionParticipant p;
    if (!p.ParseFromString(node->data)) {
      return absl::DataLossError("election node holds no ElectionParticipant");
    }
    return p.participant_id();
  }
  return absl::NotFoundError("no election participants");
}

}  // namespace tempest::coord
