#ifndef TEMPEST_STUDY_ZK_DUTY_CYCLE_H_
#define TEMPEST_STUDY_ZK_DUTY_CYCLE_H_

#include <chrono>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/zk_ensemble.h"

namespace tempest::study {

// ZooKeeper overloaded: every server of `ensemble` is stopped (SIGSTOP) for
// `paused` of each `period` and continued (SIGCONT) for the rest, all
// together, so the ensemble serves only a fraction of the time while its
// members never see each other missing. A request waits for the next
// running window: every write takes up to `paused` longer, without a
// connection or session being lost as long as `paused` stays below the
// clients' read timeout (2/3 of their session timeout) and the followers'
// sync limit. Starts on construction; Stop (or the destructor) continues
// every server and joins the thread. Owned by the main thread; its own
// thread signals the servers.
class ZkDutyCycle {
 public:
  ZkDutyCycle(coord::ZkEnsemble& ensemble, std::chrono::milliseconds period,
              std::chrono::milliseconds paused);
  ~ZkDutyCycle();
  ZkDutyCycle(const ZkDutyCycle&) = delete;
  ZkDutyCycle& operator=(const ZkDutyCycle&) = delete;

  void Stop();
  int cycles() const;  // pauses made so far

 private:
  void Loop();
  // Waits until `until` or a Stop, whichever comes first.
  void WaitUntil(std::chrono::steady_clock::time_point until) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  coord::ZkEnsemble& ensemble_;
  const std::chrono::milliseconds period_;
  const std::chrono::milliseconds paused_;
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int cycles_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_ZK_DUTY_CYCLE_H_
