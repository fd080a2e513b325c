#include "study/zk_duty_cycle.h"

namespace tempest::study {

ZkDutyCycle::ZkDutyCycle(coord::ZkEnsemble& ensemble, std::chrono::milliseconds period,
                         std::chrono::milliseconds paused)
    : ensemble_(ensemble), period_(period), paused_(paused) {
  thread_ = std::thread([this] { Loop(); });
}

ZkDutyCycle::~ZkDutyCycle() { Stop(); }

void ZkDutyCycle::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void ZkDutyCycle::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < ensemble_.size(); ++i) ensemble_.Pause(i);
    ++cycles_;
    cv_.wait_until(lock, start + paused_, [this] { return stop_; });
    // Continued on every path out, Stop included.
    for (int i = 0; i < ensemble_.size(); ++i) ensemble_.Resume(i);
    cv_.wait_until(lock, start + period_, [this] { return stop_; });
  }
}

}  // namespace tempest::study
