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
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_ || queue_.size() >= max_queued_) return false;
    queue_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void HandlerPool::Stop() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    dropped.swap(queue_);
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void HandlerPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stopped_ || !queue_.empty(); });
      if (stopped_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace tempest::net
