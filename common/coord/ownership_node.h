#ifndef TEMPEST_COMMON_COORD_OWNERSHIP_NODE_H_
#define TEMPEST_COMMON_COORD_OWNERSHIP_NODE_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "common/coord/serial_executor.h"
#include "common/coord/zk_session.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::coord {

// Proof of holding an ownership node. Writes made under it are bound to
// `session_id` (ZkCall::require_session_id) and check the node's `version`
// inside the same multi (see versioned_cas.h), so they fail once the node or
// the session is gone. `czxid` (the node's creation zxid) grows with every
// new owner and can serve as a monotonic token towards other systems.
struct FencingToken {
  std::string path;
  int64_t session_id = 0;
  int64_t czxid = 0;
  int32_t version = 0;
};

// Holds (or keeps contending for) one ephemeral ownership node. The node's
// ephemeralOwner is the authority: a node left by our own session (e.g. after
// a quick reconnect) is adopted, one owned by another session is waited for
// with an exists watch. Ownership is dropped when the session is Lost (server
// expiry or our local timer) and re-acquired on the next session.
//
// Owns a SerialExecutor thread, where all ZooKeeper calls and `on_change`
// run. token()/WaitHeld() are thread-safe. Destroying it deletes the node if
// held. The ZkSession must outlive it.
class OwnershipNode {
 public:
  struct Options {
    std::string path;                 // e.g. /tempest/owners/topic/partition_3
    tempest::v1::OwnerRecord record;  // payload; session_id is filled in
    std::chrono::milliseconds op_timeout{5000};
    std::chrono::milliseconds retry_interval{250};
    // Called on the recipe thread with the new token (nullopt: lost).
    std::function<void(const std::optional<FencingToken>&)> on_change;
  };

  // Starts contending at once.
  static absl::StatusOr<std::unique_ptr<OwnershipNode>> Create(ZkSession& session, Options options);
  ~OwnershipNode();

  std::optional<FencingToken> token() const;
  // Waits until held (true) or the timeout (false).
  bool WaitHeld(std::chrono::milliseconds timeout) const;

 private:
  OwnershipNode(ZkSession& session, Options options);
  void Reconcile();
  void SetToken(std::optional<FencingToken> token);

  ZkSession& session_;
  Options options_;
  int subscription_ = 0;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::optional<FencingToken> token_;
  bool reconcile_queued_ = false;  // guarded by mu_
  // Shared with pending watch callbacks (weakly), which may fire after we
  // are gone; a stopped executor ignores their posts.
  std::shared_ptr<SerialExecutor> executor_ = std::make_shared<SerialExecutor>();
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_OWNERSHIP_NODE_H_
