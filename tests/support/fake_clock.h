#ifndef TEMPEST_TESTS_SUPPORT_FAKE_CLOCK_H_
#define TEMPEST_TESTS_SUPPORT_FAKE_CLOCK_H_

#include <atomic>
#include <chrono>

#include "common/core/clock.h"

namespace tempest::testing {

// A Clock that only moves when the test says so. Thread-safe.
class FakeClock final : public core::Clock {
 public:
  explicit FakeClock(int64_t start_wall_ms = 1'700'000'000'000) : wall_ms_(start_wall_ms) {}

  TimePoint Now() const override { return TimePoint(Duration(now_ns_.load())); }
  int64_t WallMillis() const override { return wall_ms_.load(); }

  void Advance(Duration d) {
    now_ns_.fetch_add(d.count());
    wall_ms_.fetch_add(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  }

 private:
  std::atomic<int64_t> now_ns_{1'000'000'000};
  std::atomic<int64_t> wall_ms_;
};

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_FAKE_CLOCK_H_
