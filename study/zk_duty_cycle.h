#ifndef TEMPEST_STUDY_ZK_DUTY_CYCLE_H_
#define TEMPEST_STUDY_ZK_DUTY_CYCLE_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

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
  int cycles() const { return cycles_; }  // after Stop: pauses made

 private:
  void Loop();

  coord::ZkEnsemble& ensemble_;
  const std::chrono::milliseconds period_;
  const std::chrono::milliseconds paused_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  int cycles_ = 0;
  std::thread thread_;
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_ZK_DUTY_CYCLE_H_
