#include "spout/kafka/retry_schedule.h"

#include <gtest/gtest.h>

#include "tests/support/fake_clock.h"

namespace tempest::spout {
namespace {

using std::chrono::milliseconds;

TEST(RetryScheduleTest, BacksOffExponentiallyUpToTheCap) {
  RetrySchedule r({.retry_initial_delay_ms = 100, .retry_delay_multiplier = 2.0,
                   .retry_delay_max_ms = 500, .retry_limit = -1});
  EXPECT_EQ(r.DelayAfter(1), milliseconds(100));
  EXPECT_EQ(r.DelayAfter(2), milliseconds(200));
  EXPECT_EQ(r.DelayAfter(3), milliseconds(400));
  EXPECT_EQ(r.DelayAfter(4), milliseconds(500));
  EXPECT_EQ(r.DelayAfter(30), milliseconds(500));
}

TEST(RetryScheduleTest, OffsetBecomesDueAfterItsDelay) {
  testing::FakeClock clock;
  RetrySchedule r({.retry_initial_delay_ms = 100, .retry_delay_multiplier = 2.0,
                   .retry_delay_max_ms = 10'000, .retry_limit = -1});
  r.Failed(7, clock.Now());
  EXPECT_TRUE(r.IsScheduled(7));
  EXPECT_FALSE(r.NextDue(clock.Now()).has_value());
  clock.Advance(milliseconds(99));
  EXPECT_FALSE(r.NextDue(clock.Now()).has_value());
  clock.Advance(milliseconds(1));
  EXPECT_EQ(r.NextDue(clock.Now()), 7);
  r.Retrying(7);
  EXPECT_FALSE(r.NextDue(clock.Now()).has_value());
  r.Failed(7, clock.Now());  // second failure: 200 ms
  EXPECT_EQ(r.Failures(7), 2);
  clock.Advance(milliseconds(150));
  EXPECT_FALSE(r.NextDue(clock.Now()).has_value());
  clock.Advance(milliseconds(50));
  EXPECT_EQ(r.NextDue(clock.Now()), 7);
  r.Forget(7);
  EXPECT_FALSE(r.IsScheduled(7));
  EXPECT_EQ(r.Failures(7), 0);
}

TEST(RetryScheduleTest, EarliestDueComesFirst) {
  testing::FakeClock clock;
  RetrySchedule r({.retry_initial_delay_ms = 10, .retry_delay_multiplier = 1.0,
                   .retry_delay_max_ms = 10, .retry_limit = -1});
  r.Failed(50, clock.Now());
  clock.Advance(milliseconds(1));
  r.Failed(20, clock.Now());
  clock.Advance(milliseconds(20));
  EXPECT_EQ(r.NextDue(clock.Now()), 50);
}

TEST(RetryScheduleTest, LimitStopsFurtherRetries) {
  testing::FakeClock clock;
  RetrySchedule limited({.retry_limit = 2});
  limited.Failed(1, clock.Now());
  EXPECT_TRUE(limited.RetryFurther(1));
  limited.Failed(1, clock.Now());
  EXPECT_FALSE(limited.RetryFurther(1));
  RetrySchedule unlimited({.retry_limit = 0});
  for (int i = 0; i < 100; ++i) unlimited.Failed(1, clock.Now());
  EXPECT_TRUE(unlimited.RetryFurther(1));
}

TEST(RetryScheduleTest, ClearBeforeDropsOldRecords) {
  testing::FakeClock clock;
  RetrySchedule r({});
  for (int64_t o : {3, 5, 9}) r.Failed(o, clock.Now());
  EXPECT_EQ(r.ClearBefore(6), (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(r.scheduled_count(), 1u);
  EXPECT_EQ(r.NextDue(clock.Now()), 9);
}

}  // namespace
}  // namespace tempest::spout
