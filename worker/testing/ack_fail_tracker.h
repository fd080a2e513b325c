#ifndef TEMPEST_WORKER_TESTING_ACK_FAIL_TRACKER_H_
#define TEMPEST_WORKER_TESTING_ACK_FAIL_TRACKER_H_

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/api/value.h"

namespace tempest::worker::testing {

// Records which spout message ids were acked and failed (Storm's
// AckFailMapTracker / AckTracker). Test spouts report into it from their
// executor thread; the test reads it from its own. Thread-safe.
class AckFailTracker {
 public:
  void OnAck(const api::Value& id) {
    absl::MutexLock lock(&mu_);
    acked_.push_back(id);
  }
  void OnFail(const api::Value& id) {
    absl::MutexLock lock(&mu_);
    failed_.push_back(id);
  }
  std::vector<api::Value> acked() const {
    absl::MutexLock lock(&mu_);
    return acked_;
  }
  std::vector<api::Value> failed() const {
    absl::MutexLock lock(&mu_);
    return failed_;
  }
  size_t num_acked() const {
    absl::MutexLock lock(&mu_);
    return acked_.size();
  }
  size_t num_failed() const {
    absl::MutexLock lock(&mu_);
    return failed_.size();
  }
  bool IsAcked(const api::Value& id) const { return Contains(acked(), id); }
  bool IsFailed(const api::Value& id) const { return Contains(failed(), id); }

 private:
  static bool Contains(const std::vector<api::Value>& v, const api::Value& id) {
    for (const api::Value& x : v) {
      if (x == id) return true;
    }
    return false;
  }
  mutable absl::Mutex mu_;
  std::vector<api::Value> acked_ ABSL_GUARDED_BY(mu_);
  std::vector<api::Value> failed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tempest::worker::testing

#endif  // TEMPEST_WORKER_TESTING_ACK_FAIL_TRACKER_H_
