#include "common/net/rate_limited_log.h"

namespace tempest::net {

bool RateLimitedLog::Allow(uint64_t* suppressed) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
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

}  // namespace tempest::net
