#ifndef TEMPEST_COMMON_COORD_ZK_NODE_WATCH_H_
#define TEMPEST_COMMON_COORD_ZK_NODE_WATCH_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/coord/serial_executor.h"
#include "common/coord/zk_session.h"

namespace tempest::coord {

// Re-arm helper for ZooKeeper's one-shot watches: keeps a watch on one node
// and calls `on_value` with the node's current value (nullopt when absent)
// at start, after every change, creation or deletion, and after every
// reconnect or new session (watches do not survive an expiry, and changes
// made meanwhile are not replayed, so it re-reads). Level-triggered: the
// same value may be reported more than once.
//
// Owns a SerialExecutor thread where reads and on_value run. The ZkSession
// must outlive it.
class ZkNodeWatch {
 public:
  using Callback = std::function<void(const std::optional<ZkNode>&)>;

  static absl::StatusOr<std::unique_ptr<ZkNodeWatch>> Create(
      ZkSession& session, std::string path, Callback on_value,
      std::chrono::milliseconds op_timeout = std::chrono::milliseconds(5000));
  ~ZkNodeWatch();

 private:
  ZkNodeWatch(ZkSession& session, std::string path, Callback on_value,
              std::chrono::milliseconds op_timeout);
  void Arm();

  ZkSession& session_;
  std::string path_;
  Callback on_value_;
  std::chrono::milliseconds op_timeout_;
  int subscription_ = 0;
  // Shared with pending watch callbacks (weakly), which may fire after we
  // are gone; a stopped executor ignores their posts.
  std::shared_ptr<SerialExecutor> executor_ = std::make_shared<SerialExecutor>();
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_NODE_WATCH_H_
