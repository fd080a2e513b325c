#ifndef TEMPEST_COMMON_NET_HANDLER_POOL_H_
#define TEMPEST_COMMON_NET_HANDLER_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopped_ = false;                     // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_HANDLER_POOL_H_
