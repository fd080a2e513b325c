#ifndef TEMPEST_COMMON_COORD_SERIAL_EXECUTOR_H_
#define TEMPEST_COMMON_COORD_SERIAL_EXECUTOR_H_

#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tempest::coord {

// One thread running posted tasks in order; delayed tasks run when due.
// Recipes use it as their owner thread: ZooKeeper callbacks post to it and
// it makes the (blocking, deadline-bounded) ZooKeeper calls.
// Owns its thread; thread-safe; Stop() (or the destructor) drops pending
// tasks and joins. Do not call Stop() from a task.
class SerialExecutor {
 public:
  SerialExecutor();
  ~SerialExecutor();
  void Post(std::function<void()> task);
  void PostAfter(std::chrono::milliseconds delay, std::function<void()> task);
  void Stop();

 private:
  void Loop();
  using TimePoint = std::chrono::steady_clock::time_point;
  absl::Mutex mu_;
  absl::CondVar cv_;
  std::multimap<TimePoint, std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_SERIAL_EXECUTOR_H_
