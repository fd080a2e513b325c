#ifndef TEMPEST_COMMON_CORE_CLOCK_H_
#define TEMPEST_COMMON_CORE_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace tempest::core {

// A source of time. Code that decides anything based on time takes a Clock&
// so tests can drive it with a fake. Thread-safe: implementations must allow
// concurrent calls.
class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;

  virtual ~Clock() = default;
  // Monotonic time, for deadlines and intervals.
  virtual TimePoint Now() const = 0;
  // Wall-clock milliseconds since the Unix epoch, for records humans read.
  virtual int64_t WallMillis() const = 0;
};

// The real clock. Stateless; use Clock::Real() rather than constructing one.
class SteadyClock final : public Clock {
 public:
  TimePoint Now() const override;
  int64_t WallMillis() const override;
};

// The process-wide real clock.
Clock& RealClock();

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_CLOCK_H_
