#include "common/core/clock.h"

namespace tempest::core {

// common/core reads no clock directly except here: this is the one adapter
// from the OS clocks to the Clock interface everything else takes.
Clock::TimePoint SteadyClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::steady_clock::now());
}

int64_t SteadyClock::WallMillis() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Clock& RealClock() {
  static SteadyClock clock;
  return clock;
}

}  // namespace tempest::core
