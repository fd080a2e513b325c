#ifndef TEMPEST_COMMON_COORD_ZK_WATCH_REGISTRY_H_
#define TEMPEST_COMMON_COORD_ZK_WATCH_REGISTRY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/zk_session.h"

namespace tempest::coord {

// The one-shot watch callbacks of one ZkSession, by path. A callback is
// registered before its request is sent (so an early event finds it) and
// removed again if the request did not set a watch. Thread-safe: callers
// register from any thread; Fire and DropAll run on the dispatcher thread
// and call the callbacks outside the lock.
class ZkWatchRegistry {
 public:
  enum class Kind { kData, kChild };

  uint64_t Register(Kind kind, const std::string& path, ZkWatchFn fn);
  void Unregister(Kind kind, const std::string& path, uint64_t id);
  // Runs (and forgets) the callbacks a server event triggers: created and
  // changed fire data watches, children fire child watches, deleted fires both.
  void Fire(const ZkWatchEvent& event);
  // The session that held the watches ended: each callback gets kSessionLost.
  void DropAll();

 private:
  struct Registration {
    uint64_t id;
    ZkWatchFn fn;
  };
  using ByPath = std::map<std::string, std::vector<Registration>>;
  ByPath& WatchesOf(Kind kind) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return kind == Kind::kData ? data_ : child_;
  }

  absl::Mutex mu_;
  ByPath data_ ABSL_GUARDED_BY(mu_);
  ByPath child_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_WATCH_REGISTRY_H_
