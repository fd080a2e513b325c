#ifndef TEMPEST_COMMON_NET_RATE_LIMITED_LOG_H_
#define TEMPEST_COMMON_NET_RATE_LIMITED_LOG_H_

#include <chrono>
#include <cstdint>
#include <mutex>

namespace tempest::net {

// Decides whether an error line may be written now: at most `burst` lines per
// `interval`; the rest are counted and reported with the next line allowed.
// Used where a peer controls how often an error happens (accept failures,
// malformed frames), so a flood of bad input cannot flood the log.
//
// Thread-safe (a mutex; only error paths call it).
class RateLimitedLog {
 public:
  RateLimitedLog(int burst, std::chrono::milliseconds interval) : burst_(burst), interval_(interval) {}

  // True if a line may be written; then `*suppressed` (if non-null) is the
  // number of lines withheld since the previous allowed one.
  bool Allow(uint64_t* suppressed = nullptr);

 private:
  const int burst_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point window_start_{};  // guarded by mu_
  int in_window_ = 0;                                     // guarded by mu_
  uint64_t suppressed_ = 0;                               // guarded by mu_
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_RATE_LIMITED_LOG_H_
