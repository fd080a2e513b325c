#include "common/core/rate_limited_log.h"

namespace tempest::core {

bool RateLimitedLog::Allow(uint64_t* suppressed) {
  const Clock::TimePoint now = clock_->Now();
  absl::MutexLock lock(&mu_);
  if (in_window_ == 0 || now - window_start_ >= interval_) {
    window_start_ = now;
    in_window_ = 0;
  }
  if (in_window_ >= burst_) {
    ++suppressed_;
    return false;
  }
  ++in_window_;
  if (suppressed != nullptr) *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

uint64_t RateLimitedLog::suppressed() const {
  absl::MutexLock lock(&mu_);
  return suppressed_;
}

void RateLimitedLog::Reset() {
  absl::MutexLock lock(&mu_);
  in_window_ = 0;
}

}  // namespace tempest::core
