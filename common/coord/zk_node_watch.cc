#include "common/coord/zk_node_watch.h"

#include "common/coord/zk_paths.h"
#include "common/core/status_macros.h"

namespace tempest::coord {

absl::StatusOr<std::unique_ptr<ZkNodeWatch>> ZkNodeWatch::Create(
    ZkSession& session, std::string path, Callback on_value, std::chrono::milliseconds op_timeout) {
  RETURN_IF_ERROR(ValidatePath(path));
  auto w = std::unique_ptr<ZkNodeWatch>(
      new ZkNodeWatch(session, std::move(path), std::move(on_value), op_timeout));
  ZkNodeWatch* self = w.get();
  w->subscription_ = session.Subscribe([self](const ZkSessionEvent& e) {
    if (e.state == ZkSessionState::kConnected) self->executor_->Post([self] { self->Arm(); });
  });
  w->executor_->Post([self] { self->Arm(); });
  return w;
}

ZkNodeWatch::ZkNodeWatch(ZkSession& session, std::string path, Callback on_value,
                         std::chrono::milliseconds op_timeout)
    : session_(session),
      path_(std::move(path)),
      on_value_(std::move(on_value)),
      op_timeout_(op_timeout) {}

ZkNodeWatch::~ZkNodeWatch() {
  session_.Unsubscribe(subscription_);
  executor_->Stop();
}

void ZkNodeWatch::Arm() {
  if (session_.state() != ZkSessionState::kConnected) return;  // re-armed on Connected
  const ZkCall call{op_timeout_, 0};
  // An exists watch covers creation, change and deletion, so one watch
  // suffices whether or not the node exists.
  auto stat = session_.ExistsAndWatch(
      path_,
      [this, weak = std::weak_ptr<SerialExecutor>(executor_)](const ZkWatchEvent& e) {
        // kSessionLost: the next kConnected event re-arms.
        if (e.type == ZkWatchEventType::kSessionLost) return;
        if (auto ex = weak.lock()) ex->Post([this] { Arm(); });
      },
      call);
  if (!stat.ok()) {
    executor_->PostAfter(std::chrono::milliseconds(250), [this] { Arm(); });
    return;
  }
  if (!stat->has_value()) {
    on_value_(std::nullopt);
    return;
  }
  auto node = session_.Get(path_, call);
  if (node.ok()) {
    on_value_(*node);
  } else if (absl::IsNotFound(node.status())) {
    on_value_(std::nullopt);  // deleted in between; the watch reports it too
  } else {
    executor_->PostAfter(std::chrono::milliseconds(250), [this] { Arm(); });
  }
}

}  // namespace tempest::coord
