#ifndef TEMPEST_SPOUT_RETRY_SCHEDULE_H_
#define TEMPEST_SPOUT_RETRY_SCHEDULE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "common/core/clock.h"

namespace tempest::spout {

// storm-kafka's retry settings (SpoutConfig), same names and defaults.
struct RetryOptions {
  int64_t retry_initial_delay_ms = 0;
  double retry_delay_multiplier = 1.0;
  int64_t retry_delay_max_ms = 60'000;
  int retry_limit = -1;  // <= 0: unlimited
};

// When each failed offset of one partition may be emitted again: exponential
// backoff per offset, min(initial * multiplier^(n-1), max) after the n-th
// failure. Owned by one partition's manager; single-threaded (the spout's
// executor thread).
class RetrySchedule {
 public:
  explicit RetrySchedule(RetryOptions options) : options_(options) {}

  // Records a failure of `offset` at `now` and schedules its next attempt.
  void Failed(int64_t offset, core::Clock::TimePoint now);
  // Whether another attempt is allowed after the failures recorded so far.
  bool RetryFurther(int64_t offset) const;
  // The smallest-due offset whose time has come, if any; it stays scheduled
  // until Acked/Retried/Forget.
  std::optional<int64_t> NextDue(core::Clock::TimePoint now) const;
  // The offset is being re-emitted: it leaves the due queue but keeps its
  // failure count for the next backoff.
  void Retrying(int64_t offset);
  // The offset completed (or was given up): forget it.
  void Forget(int64_t offset);
  // Drops every record below `offset` (retention removed them); returns them.
  std::vector<int64_t> ClearBefore(int64_t offset);

  bool IsScheduled(int64_t offset) const;
  int Failures(int64_t offset) const;
  size_t scheduled_count() const { return due_.size(); }
  std::chrono::milliseconds DelayAfter(int failures) const;

 private:
  struct Record {
    int failures = 0;
    std::optional<core::Clock::TimePoint> due;  // nullopt: in flight again
  };
  RetryOptions options_;
  std::map<int64_t, Record> records_;
  std::set<std::pair<core::Clock::TimePoint, int64_t>> due_;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_RETRY_SCHEDULE_H_
