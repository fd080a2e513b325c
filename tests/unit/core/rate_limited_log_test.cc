#include "common/core/rate_limited_log.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/fake_clock.h"

namespace tempest::core {
namespace {

using std::chrono::seconds;

TEST(RateLimitedLogTest, AllowsABurstPerIntervalAndReportsWhatItHeldBack) {
  testing::FakeClock clock;
  RateLimitedLog log(3, seconds(10), clock);
  uint64_t held = 99;
  EXPECT_TRUE(log.Allow(&held));
  EXPECT_EQ(held, 0u);
  EXPECT_TRUE(log.Allow());
  EXPECT_TRUE(log.Allow());
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(log.Allow());
  EXPECT_EQ(log.suppressed(), 1000u);

  clock.Advance(seconds(9));
  EXPECT_FALSE(log.Allow());  // the window is not over yet
  clock.Advance(seconds(1));
  EXPECT_TRUE(log.Allow(&held));
  EXPECT_EQ(held, 1001u);  // every line held back, reported once
  EXPECT_EQ(log.suppressed(), 0u);
  EXPECT_TRUE(log.Allow(&held));
  EXPECT_EQ(held, 0u);
}

TEST(RateLimitedLogTest, OneLinePerIntervalWhileAProblemGoesOn) {
  testing::FakeClock clock;
  RateLimitedLog log(1, seconds(10), clock);
  int written = 0;
  uint64_t reported = 0;
  // A problem repeating every 100 ms for a minute: one line per 10 s, never
  // silenced, and the held-back counts add up to every occurrence.
  for (int i = 0; i < 600; ++i) {
    uint64_t held = 0;
    if (log.Allow(&held)) {
      ++written;
      reported += held + 1;
    }
    clock.Advance(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(written, 6);
  EXPECT_EQ(reported + log.suppressed(), 600u);
}

TEST(RateLimitedLogTest, ResetLetsTheFirstLineOfTheNextEpisodeThrough) {
  testing::FakeClock clock;
  RateLimitedLog log(1, std::chrono::minutes(10), clock);
  EXPECT_TRUE(log.Allow());
  EXPECT_FALSE(log.Allow());
  log.Reset();  // the problem ended
  clock.Advance(seconds(1));
  uint64_t held = 0;
  EXPECT_TRUE(log.Allow(&held));
  EXPECT_EQ(held, 1u);
  EXPECT_FALSE(log.Allow());
}

TEST(RateLimitedLogTest, ABurstBelowOneMeansOne) {
  testing::FakeClock clock;
  RateLimitedLog log(0, seconds(1), clock);
  EXPECT_TRUE(log.Allow());
  EXPECT_FALSE(log.Allow());
}

TEST(RateLimitedLogTest, ThreadsShareOneBudget) {
  testing::FakeClock clock;
  RateLimitedLog log(5, std::chrono::hours(1), clock);
  std::atomic<int> allowed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (log.Allow()) allowed.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(allowed.load(), 5);
  EXPECT_EQ(log.suppressed(), 3995u);
}

}  // namespace
}  // namespace tempest::core
