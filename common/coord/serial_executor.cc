#include "common/coord/serial_executor.h"

#include "absl/time/time.h"

namespace tempest::coord {

SerialExecutor::SerialExecutor() : thread_([this] { Loop(); }) {}
SerialExecutor::~SerialExecutor() { Stop(); }

void SerialExecutor::Post(std::function<void()> task) {
  PostAfter(std::chrono::milliseconds(0), std::move(task));
}

void SerialExecutor::PostAfter(std::chrono::milliseconds delay, std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (stop_) return;
    tasks_.emplace(std::chrono::steady_clock::now() + delay, std::move(task));
  }
  cv_.Signal();
}

void SerialExecutor::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    tasks_.clear();
  }
  cv_.Signal();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void SerialExecutor::Loop() {
  // Held except while a task runs.
  mu_.Lock();
  while (!stop_) {
    if (tasks_.empty()) {
      cv_.Wait(&mu_);
      continue;
    }
    auto it = tasks_.begin();
    // Due times are on the steady clock; the wait is the time left on it.
    const auto now = std::chrono::steady_clock::now();
    if (it->first > now) {
      cv_.WaitWithTimeout(&mu_, absl::FromChrono(it->first - now));
      continue;
    }
    auto task = std::move(it->second);
    tasks_.erase(it);
    mu_.Unlock();
    task();
    mu_.Lock();
  }
  mu_.Unlock();
}

}  // namespace tempest::coord
