#include "spout/retry_schedule.h"

#include <algorithm>
#include <cmath>

namespace tempest::spout {

std::chrono::milliseconds RetrySchedule::DelayAfter(int failures) const {
  const double exponent = std::max(0, failures - 1);
  const double raw = static_cast<double>(options_.retry_initial_delay_ms) *
                     std::pow(std::max(options_.retry_delay_multiplier, 0.0), exponent);
  const double capped = std::min(raw, static_cast<double>(options_.retry_delay_max_ms));
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, capped)));
}

void RetrySchedule::Failed(int64_t offset, core::Clock::TimePoint now) {
  Record& r = records_[offset];
  if (r.due) due_.erase({*r.due, offset});
  r.failures += 1;
  r.due = now + DelayAfter(r.failures);
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

}  // namespace tempest::spout
