#ifndef TEMPEST_SPOUT_RETRY_SCHEDULE_H_
#define TEMPEST_SPOUT_RETRY_SCHEDULE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/core/clock.h"

namespace tempest::spout {

// storm-kafka's retry settings (SpoutConfig), same names. The member
// defaults are storm-kafka's (immediate retries, forever); tempest.KafkaSpout
// starts from TempestRetryDefaults() instead.
struct RetryOptions {
  int64_t retry_initial_delay_ms = 0;
  double retry_delay_multiplier = 1.0;
  int64_t retry_delay_max_ms = 60'000;
  int retry_limit = -1;  // <= 0: unlimited
  // >= 0: storm-kafka-client's KafkaSpoutRetryExponentialBackoff, where only
  // the first failure waits retry_initial_delay_ms and failure n >= 2 waits
  // retry_delay_period_ms × multiplier^(n-1). -1: failure n waits
  // retry_initial_delay_ms × multiplier^(n-1).
  int64_t retry_delay_period_ms = -1;
};

// storm-kafka-client's default retry service: the first retry at once, then
// 4, 8, 16 ms ... doubling to at most 10 s, with no limit.
inline constexpr RetryOptions KafkaClientRetryDefaults() {
  return RetryOptions{.retry_initial_delay_ms = 0,
                      .retry_delay_multiplier = 2.0,
                      .retry_delay_max_ms = 10'000,
                      .retry_limit = -1,
                      .retry_delay_period_ms = 2};
}

// storm-kafka's SpoutConfig defaults, kept for org.apache.storm.kafka.KafkaSpout:
// a failed tuple is emitted again at once, forever.
inline constexpr RetryOptions StormKafkaRetryDefaults() { return RetryOptions{}; }

// tempest.KafkaSpout's defaults: 100 ms after the first failure, doubling up
// to 10 s; after 10 failed deliveries (about 33 s) a record goes to the
// dead-letter topic if one is set, else it keeps being retried every 10 s and
// is reported as stalling its partition's commits.
inline constexpr RetryOptions TempestRetryDefaults() {
  return RetryOptions{.retry_initial_delay_ms = 100,
                      .retry_delay_multiplier = 2.0,
                      .retry_delay_max_ms = 10'000,
                      .retry_limit = 10};
}

// When each failed offset of one partition may be emitted again: exponential
// backoff per offset, min(initial * multiplier^(n-1), max) after the n-th
// failure, and the maximum once the retry limit is used up (the record is
// then kept only because nothing may skip it). Owned by one partition's
// manager; single-threaded (the spout's executor thread).
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
  // Offsets with at least one failure that are not yet acked or forgotten.
  size_t failing_count() const { return records_.size(); }
  // The backoff after the `failures`-th failure (the schedule's formula).
  std::chrono::milliseconds DelayAfter(int failures) const;

  // The offset that failed most often (the lowest of equals), with its
  // failure count and the delay it was given after its last failure; nullopt
  // when nothing is failing. O(failing offsets).
  struct Worst {
    int64_t offset = -1;
    int failures = 0;
    std::chrono::milliseconds delay{0};
    bool limit_reached = false;  // no retries left under retryLimit
  };
  std::optional<Worst> WorstOffender() const;

 private:
  struct Record {
    int failures = 0;
    std::optional<core::Clock::TimePoint> due;  // nullopt: in flight again
  };
  RetryOptions options_;
  std::map<int64_t, Record> records_;
  std::set<std::pair<core::Clock::TimePoint, int64_t>> due_;
};

// Turns a spout task's failures into at most one log line per interval, so a
// record that keeps failing stays visible for as long as it fails (never
// silenced after a first few lines) without flooding the log. Pure logic
// driven by the caller's clock; single-threaded (the spout's executor).
class RepeatedFailureReporter {
 public:
  // What the spout task knows at report time, summed over its partitions.
  struct Summary {
    int64_t failing_offsets = 0;  // offsets failed at least once, not yet done
    std::string worst_partition;  // "topic/partition" of the worst offender
    RetrySchedule::Worst worst;
    bool dead_letter = false;  // a dead-letter topic is configured
    int retry_limit = -1;      // as configured (<= 0: unlimited)
  };

  explicit RepeatedFailureReporter(std::chrono::milliseconds interval = std::chrono::seconds(10))
      : interval_(interval) {}

  // One delivery failed at `now`.
  void OnFailure(core::Clock::TimePoint now);
  // Whether a report should be built now: failures were recorded since the
  // last report and an interval has passed since it (or since the first
  // failure, for the first report).
  bool Due(core::Clock::TimePoint now) const;
  // The line for `summary` (nullopt when no offset failed twice: single
  // failures are ordinary at-least-once replays, counted in metrics) and a
  // new interval starts. Call when Due.
  std::optional<std::string> Report(core::Clock::TimePoint now, const Summary& summary);

  int64_t reports() const { return reports_; }

 private:
  std::chrono::milliseconds interval_;
  int64_t failures_since_ = 0;
  std::optional<core::Clock::TimePoint> window_start_;
  int64_t reports_ = 0;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_RETRY_SCHEDULE_H_
