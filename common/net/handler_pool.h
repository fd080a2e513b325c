#ifndef TEMPEST_COMMON_NET_HANDLER_POOL_H_
#define TEMPEST_COMMON_NET_HANDLER_POOL_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace tempest::net {

// A fixed number of threads running queued tasks, with a bounded queue: the
// HttpServer runs request handlers here (HttpServerOptions::handler_threads)
// so a slow handler (a submission waiting on ZooKeeper) occupies one thread
// while other requests are answered on the others.
//
// Thread-safety: TrySubmit and Stop may be called from any thread. Stop
// drops the tasks still queued (destroying them outside the lock) and joins
// the threads; the destructor calls it. Neither may run on a pool thread
// (HttpServer owns its pool and stops it from the thread that stops the
// server).
class HandlerPool {
 public:
  HandlerPool(size_t threads, size_t max_queued, const std::string& name);
  ~HandlerPool();

  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  // Queues `task`; false (and `task` untouched) when `max_queued` tasks are
  // already waiting or the pool is stopped.
  bool TrySubmit(std::function<void()>& task);
  void Stop();

 private:
  void Run();
  // A task to run, or nullopt once the pool is stopped; waits for either.
  std::optional<std::function<void()>> NextTask();
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopped_ || !queue_.empty(); }

  const size_t max_queued_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_HANDLER_POOL_H_
