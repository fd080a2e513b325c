#ifndef TEMPEST_COMMON_CORE_RATE_LIMITED_LOG_H_
#define TEMPEST_COMMON_CORE_RATE_LIMITED_LOG_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

#include "common/core/clock.h"

namespace tempest::core {

// The one throttle for log lines (and reported errors) that can repeat
// without bound: a peer's bad frames, a broker that keeps refusing fetches,
// a component failing every tuple. At most `burst` lines per `interval` of
// `clock`; the lines held back are counted and the next line allowed says
// how many, so a problem that goes on stays visible without flooding the
// log.
//
//   core::RateLimitedLog fetch_errors_{1, std::chrono::seconds(10)};
//   uint64_t held = 0;
//   if (fetch_errors_.Allow(&held)) spdlog::warn("... ({} similar held back)", ..., held);
//
// A window opens with the first line allowed and lasts `interval`; Reset()
// ends an episode, so the first line of the next one is written at once.
// Thread-safe (a mutex: only paths that are about to log call it). The clock
// must outlive the object.
class RateLimitedLog {
 public:
  RateLimitedLog(int burst, Clock::Duration interval, const Clock& clock = RealClock())
      : burst_(burst < 1 ? 1 : burst), interval_(interval), clock_(&clock) {}

  RateLimitedLog(const RateLimitedLog&) = delete;
  RateLimitedLog& operator=(const RateLimitedLog&) = delete;

  // True if a line may be written now; then `*suppressed` (if non-null) is
  // the number of lines held back since the previous allowed one. False
  // counts one more held-back line.
  bool Allow(uint64_t* suppressed = nullptr);

  // Lines held back since the last allowed one (not yet reported).
  uint64_t suppressed() const;

  // Ends the current episode: the next Allow() opens a new window. The held
  // back count is kept for that next line.
  void Reset();

 private:
  const int burst_;
  const Clock::Duration interval_;
  const Clock* const clock_;
  mutable absl::Mutex mu_;
  Clock::TimePoint window_start_ ABSL_GUARDED_BY(mu_) = {};
  int in_window_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_RATE_LIMITED_LOG_H_
