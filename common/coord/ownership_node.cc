#include "common/coord/ownership_node.h"

#include "absl/strings/str_cat.h"
#include "common/coord/zk_paths.h"

namespace tempest::coord {

absl::StatusOr<std::unique_ptr<OwnershipNode>> OwnershipNode::Create(ZkSession& session,
                                                                     Options options) {
  if (auto s = ValidatePath(options.path); !s.ok()) return s;
  if (options.path == "/") return absl::InvalidArgumentError("ownership node cannot be /");
  auto node = std::unique_ptr<OwnershipNode>(new OwnershipNode(session, std::move(options)));
  OwnershipNode* self = node.get();
  // The listener runs on the session's dispatcher: it only enqueues.
  // Reconcile reads the state when it runs, so stale events cannot drop a
  // token acquired on a newer session.
  node->subscription_ = session.Subscribe(
      [self](const ZkSessionEvent&) { self->executor_->Post([self] { self->Reconcile(); }); });
  node->executor_->Post([self] { self->Reconcile(); });
  return node;
}

OwnershipNode::OwnershipNode(ZkSession& session, Options options)
    : session_(session), options_(std::move(options)) {}

OwnershipNode::~OwnershipNode() {
  session_.Unsubscribe(subscription_);
  executor_->Stop();
  auto held = token();
  if (held.has_value() && session_.session_id() == held->session_id) {
    // Version-checked and session-bound: never deletes a successor's node.
    (void)session_.Delete(held->path, held->version, ZkCall{options_.op_timeout, held->session_id});
  }
}

std::optional<FencingToken> OwnershipNode::token() const {
  std::lock_guard<std::mutex> lock(mu_);
  return token_;
}

bool OwnershipNode::WaitHeld(std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return token_.has_value(); });
}

void OwnershipNode::SetToken(std::optional<FencingToken> token) {
  bool changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    changed = token_.has_value() != token.has_value() ||
              (token.has_value() &&
               (token_->czxid != token->czxid || token_->session_id != token->session_id));
    token_ = std::move(token);
  }
  cv_.notify_all();
  if (changed && options_.on_change) options_.on_change(this->token());
}

void OwnershipNode::Reconcile() {
  const ZkSessionState state = session_.state();
  if (state != ZkSessionState::kConnected) {
    // Suspended: keep the token; writes under it cannot be sent anyway and the
    // session may come back. Lost (expiry or our own timer), closed, or a new
    // session still connecting: ownership is gone.
    if (state != ZkSessionState::kSuspended) SetToken(std::nullopt);
    return;  // the next session event re-runs us
  }
  const int64_t sid = session_.session_id();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (token_.has_value() && token_->session_id == sid) return;  // held under this session
  }
  SetToken(std::nullopt);
  const ZkCall call{options_.op_timeout, 0};
  tempest::v1::OwnerRecord record = options_.record;
  record.set_session_id(static_cast<uint64_t>(sid));
  ZkCreateOptions create;
  create.mode = ZkCreateMode::kEphemeral;
  create.create_parents = true;
  auto created = session_.Create(options_.path, record.SerializeAsString(), create,
                                 ZkCall{options_.op_timeout, sid});
  if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
    executor_->PostAfter(options_.retry_interval, [this] { Reconcile(); });
    return;
  }
  // Whoever created it, ephemeralOwner says who holds it (KAFKA-1387: after a
  // quick re-establish our own old node may still be there).
  auto current = session_.Get(options_.path, call);
  if (current.ok() && current->stat.ephemeral_owner == sid) {
    SetToken(FencingToken{options_.path, sid, current->stat.czxid, current->stat.version});
    return;
  }
  if (!current.ok() && !absl::IsNotFound(current.status())) {
    executor_->PostAfter(options_.retry_interval, [this] { Reconcile(); });
    return;
  }
  // Held by another session: wait for it to go.
  auto watched = session_.ExistsAndWatch(
      options_.path,
      [this, weak = std::weak_ptr<SerialExecutor>(executor_)](const ZkWatchEvent&) {
        if (auto ex = weak.lock()) ex->Post([this] { Reconcile(); });
      },
      call);
  if (!watched.ok()) {
    executor_->PostAfter(options_.retry_interval, [this] { Reconcile(); });
  } else if (!watched->has_value()) {
    executor_->Post([this] { Reconcile(); });
  }
}

}  // namespace tempest::coord
