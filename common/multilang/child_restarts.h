#ifndef TEMPEST_COMMON_MULTILANG_CHILD_RESTARTS_H_
#define TEMPEST_COMMON_MULTILANG_CHILD_RESTARTS_H_

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "common/core/rate_limited_log.h"

namespace tempest::multilang {

// Paces the restarts of a multilang child and rate-limits the warnings about
// what it writes, the same way for ShellBolt and ShellSpout.
//
// A child that fails soon after starting without finishing any input is
// restarted ever more slowly (a broken script must not keep the executor busy
// restarting it); one that ran for a while is restarted at once, and one that
// finished inputs (Progressed) after a short fixed pause. A failed restart
// attempt backs off at least a second. Owned by one component; lives on its
// executor thread.
class ChildRestarts {
 public:
  using SteadyClock = std::chrono::steady_clock;

  static constexpr std::chrono::milliseconds kMaxBackoff{10000};
  static constexpr std::chrono::seconds kStableChildAge{5};
  static constexpr std::chrono::milliseconds kProgressBackoff{100};
  static constexpr int kLoggedWarnings = 20;

  // The child (re)started at `now`.
  void Started(SteadyClock::time_point now) {
    started_at_ = now;
    progressed_ = false;
  }
  // The running child finished an input (acked or failed it).
  void Progressed() { progressed_ = true; }
  // The running child failed at `now`; schedules its restart.
  void Failed(SteadyClock::time_point now) {
    ++restarts_;
    if (now - started_at_ >= kStableChildAge) {
      backoff_ = std::chrono::milliseconds(0);
    } else if (progressed_) {
      backoff_ = kProgressBackoff;
    } else {
      backoff_ = std::min(kMaxBackoff, std::max(std::chrono::milliseconds(250), backoff_ * 2));
    }
    next_restart_ = now + backoff_;
  }
  // Starting a child failed at `now` (e.g. the command does not exist).
  void StartFailed(SteadyClock::time_point now) {
    backoff_ = std::min(kMaxBackoff, std::max(std::chrono::milliseconds(1000), backoff_ * 2));
    next_restart_ = now + backoff_;
  }
  bool RestartDue(SteadyClock::time_point now) const { return now >= next_restart_; }
  std::chrono::milliseconds backoff() const { return backoff_; }
  int64_t restarts() const { return restarts_; }

  // Counts one protocol warning; true for at most kLoggedWarnings per 10 s,
  // so a chatty child cannot flood the log (nor the component's errors).
  // `*held` (if non-null) gets the warnings held back since the last one.
  bool ShouldReportWarning(uint64_t* held = nullptr) {
    ++warnings_;
    return warnings_log_.Allow(held);
  }

 private:
  SteadyClock::time_point started_at_{};
  SteadyClock::time_point next_restart_{};
  std::chrono::milliseconds backoff_{0};
  int64_t restarts_ = 0;
  int64_t warnings_ = 0;
  core::RateLimitedLog warnings_log_{kLoggedWarnings, std::chrono::seconds(10)};
  bool progressed_ = false;
};

}  // namespace tempest::multilang

#endif  // TEMPEST_COMMON_MULTILANG_CHILD_RESTARTS_H_
