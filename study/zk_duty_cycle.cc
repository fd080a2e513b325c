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
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

int ZkDutyCycle::cycles() const {
  absl::MutexLock lock(&mu_);
  return cycles_;
}

void ZkDutyCycle::WaitUntil(std::chrono::steady_clock::time_point until) {
  // A timeout on the steady clock, not a deadline on the wall clock.
  mu_.AwaitWithTimeout(absl::Condition(&stop_),
                       absl::FromChrono(until - std::chrono::steady_clock::now()));
}

void ZkDutyCycle::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < ensemble_.size(); ++i) ensemble_.Pause(i);
    ++cycles_;
    WaitUntil(start + paused_);
    // Continued on every path out, Stop included.
    for (int i = 0; i < ensemble_.size(); ++i) ensemble_.Resume(i);
    WaitUntil(start + period_);
  }
}

}  // namespace tempest::study
