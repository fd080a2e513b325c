#include "common/net/handler_pool.h"

#include <pthread.h>

#include <utility>

namespace tempest::net {

HandlerPool::HandlerPool(size_t threads, size_t max_queued, const std::string& name)
    : max_queued_(max_queued) {
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) {
    threads_.emplace_back([this, name] {
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      Run();
    });
  }
}

HandlerPool::~HandlerPool() { Stop(); }

bool HandlerPool::TrySubmit(std::function<void()>& task) {
  // Unlocking wakes a thread waiting in NextTask.
  absl::MutexLock lock(&mu_);
  if (stopped_ || queue_.size() >= max_queued_) return false;
  queue_.push_back(std::move(task));
  return true;
}

void HandlerPool::Stop() {
  std::deque<std::function<void()>> dropped;
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    dropped.swap(queue_);
  }
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

std::optional<std::function<void()>> HandlerPool::NextTask() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(this, &HandlerPool::HasWork));
  if (stopped_) return std::nullopt;
  std::function<void()> task = std::move(queue_.front());
  queue_.pop_front();
  return task;
}

void HandlerPool::Run() {
  while (std::optional<std::function<void()>> task = NextTask()) (*task)();
}

}  // namespace tempest::net
