#include "spout/kafka/retry_schedule.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace tempest::spout {

std::chrono::milliseconds RetrySchedule::DelayAfter(int failures) const {
  const double exponent = std::max(0, failures - 1);
  const bool periodic = options_.retry_delay_period_ms >= 0 && failures >= 2;
  const double base = static_cast<double>(periodic ? options_.retry_delay_period_ms
                                                   : options_.retry_initial_delay_ms);
  const double raw = base * std::pow(std::max(options_.retry_delay_multiplier, 0.0), exponent);
  const double capped = std::min(raw, static_cast<double>(options_.retry_delay_max_ms));
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, capped)));
}

void RetrySchedule::Failed(int64_t offset, core::Clock::TimePoint now) {
  Record& r = records_[offset];
  if (r.due) due_.erase({*r.due, offset});
  r.failures += 1;
  // Past the limit the record is retried only because nothing may skip it:
  // at the slowest pace, whatever the multiplier would give.
  const std::chrono::milliseconds delay =
      RetryFurther(offset) ? DelayAfter(r.failures)
                           : std::chrono::milliseconds(options_.retry_delay_max_ms);
  r.due = now + delay;
  due_.insert({*r.due, offset});
}

bool RetrySchedule::RetryFurther(int64_t offset) const {
  if (options_.retry_limit <= 0) return true;
  return Failures(offset) < options_.retry_limit;
}

std::optional<int64_t> RetrySchedule::NextDue(core::Clock::TimePoint now) const {
  // Among due records, storm-kafka retries the earliest-due first.
  if (due_.empty() || due_.begin()->first > now) return std::nullopt;
  return due_.begin()->second;
}

void RetrySchedule::Retrying(int64_t offset) {
  auto it = records_.find(offset);
  if (it == records_.end() || !it->second.due) return;
  due_.erase({*it->second.due, offset});
  it->second.due.reset();
}

void RetrySchedule::Forget(int64_t offset) {
  auto it = records_.find(offset);
  if (it == records_.end()) return;
  if (it->second.due) due_.erase({*it->second.due, offset});
  records_.erase(it);
}

std::vector<int64_t> RetrySchedule::ClearBefore(int64_t offset) {
  std::vector<int64_t> dropped;
  for (auto it = records_.begin(); it != records_.end() && it->first < offset;) {
    if (it->second.due) due_.erase({*it->second.due, it->first});
    dropped.push_back(it->first);
    it = records_.erase(it);
  }
  return dropped;
}

bool RetrySchedule::IsScheduled(int64_t offset) const {
  auto it = records_.find(offset);
  return it != records_.end() && it->second.due.has_value();
}

int RetrySchedule::Failures(int64_t offset) const {
  auto it = records_.find(offset);
  return it == records_.end() ? 0 : it->second.failures;
}

std::optional<RetrySchedule::Worst> RetrySchedule::WorstOffender() const {
  std::optional<Worst> worst;
  for (const auto& [offset, r] : records_) {
    if (worst.has_value() && r.failures <= worst->failures) continue;
    worst = Worst{.offset = offset, .failures = r.failures};
  }
  if (worst.has_value()) {
    worst->limit_reached = !RetryFurther(worst->offset);
    worst->delay = worst->limit_reached ? std::chrono::milliseconds(options_.retry_delay_max_ms)
                                        : DelayAfter(worst->failures);
  }
  return worst;
}

void RepeatedFailureReporter::OnFailure(core::Clock::TimePoint now) {
  ++failures_since_;
  if (!window_start_.has_value()) window_start_ = now;
}

bool RepeatedFailureReporter::Due(core::Clock::TimePoint now) const {
  return failures_since_ > 0 && window_start_.has_value() && now - *window_start_ >= interval_;
}

std::optional<std::string> RepeatedFailureReporter::Report(core::Clock::TimePoint now,
                                                           const Summary& summary) {
  const int64_t failures = failures_since_;
  const auto window =
      std::chrono::duration_cast<std::chrono::seconds>(now - window_start_.value_or(now));
  failures_since_ = 0;
  window_start_ = now;
  if (summary.worst.failures < 2) return std::nullopt;
  ++reports_;
  const RetrySchedule::Worst& w = summary.worst;
  std::string line = absl::StrCat(
      failures, " failed deliveries in the last ", window.count(), " s; ",
      summary.failing_offsets, summary.failing_offsets == 1 ? " offset" : " offsets",
      " failing; worst: ", summary.worst_partition, " offset ", w.offset, " failed ", w.failures,
      " times, next retry delay ", w.delay.count(), " ms");
  if (w.limit_reached && summary.dead_letter) {
    absl::StrAppend(&line, "; retryLimit ", summary.retry_limit,
                    " reached: it goes to the dead-letter topic");
  } else if (w.limit_reached) {
    absl::StrAppend(&line, "; retryLimit ", summary.retry_limit,
                    " reached and no deadLetterTopic is set: commits of ", summary.worst_partition,
                    " stay at or below offset ", w.offset,
                    " until it succeeds (set deadLetterTopic to move past it)");
  }
  return line;
}

}  // namespace tempest::spout
