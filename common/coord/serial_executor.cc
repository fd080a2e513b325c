#include "common/coord/serial_executor.h"

namespace tempest::coord {

SerialExecutor::SerialExecutor() : thread_([this] { Loop(); }) {}
SerialExecutor::~SerialExecutor() { Stop(); }

void SerialExecutor::Post(std::function<void()> task) {
  PostAfter(std::chrono::milliseconds(0), std::move(task));
}

void SerialExecutor::PostAfter(std::chrono::milliseconds delay, std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    tasks_.emplace(std::chrono::steady_clock::now() + delay, std::move(task));
  }
  cv_.notify_one();
}

void SerialExecutor::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    tasks_.clear();
  }
  cv_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void SerialExecutor::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (tasks_.empty()) {
      cv_.wait(lock);
      continue;
    }
    auto it = tasks_.begin();
    if (it->first > std::chrono::steady_clock::now()) {
      cv_.wait_until(lock, it->first);
      continue;
    }
    auto task = std::move(it->second);
    tasks_.erase(it);
    lock.unlock();
    task();
    lock.lock();
  }
}

}  // namespace tempest::coord
