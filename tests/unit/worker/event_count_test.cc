#include "worker/event_count.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "worker/wait_strategy.h"

namespace tempest::worker {
namespace {

using std::chrono::milliseconds;
using tempest::testing::Eventually;

TEST(EventCountTest, NotifyWithoutWaiterIssuesNoWake) {
  EventCount event;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(event.Notify());
  EXPECT_EQ(event.wakes(), 0u);
  EXPECT_EQ(event.parks(), 0u);
}

TEST(EventCountTest, CancelledWaitIssuesNoWake) {
  EventCount event;
  const EventCount::Key key = event.PrepareWait();
  event.CancelWait(key);
  EXPECT_FALSE(event.Notify());
  EXPECT_EQ(event.wakes(), 0u);
}

TEST(EventCountTest, ParkedWaiterIsWokenByNotify) {
  EventCount event;
  std::atomic<bool> flag{false};
  std::atomic<bool> done{false};
  WaitStrategy strategy(WaitOptions{.spin_iterations = 0, .yield_iterations = 0});
  std::thread waiter([&] {
    EXPECT_TRUE(strategy.Await(event, [&] { return flag.load(std::memory_order_acquire); }));
    done = true;
  });
  ASSERT_TRUE(Eventually(milliseconds(10'000), [&] { return event.parks() >= 1; }));
  EXPECT_FALSE(done.load());
  flag.store(true, std::memory_order_release);
  // The waiter is parked, so this Notify() is the one that wakes it.
  EXPECT_TRUE(event.Notify());
  waiter.join();
  EXPECT_TRUE(done.load());
  EXPECT_GE(event.wakes(), 1u);
}

TEST(EventCountTest, AwaitReturnsFalseAtDeadline) {
  EventCount event;
  WaitStrategy strategy(WaitOptions{.spin_iterations = 4, .yield_iterations = 1});
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(20);
  EXPECT_FALSE(strategy.Await(
      event, [] { return false; }, deadline));
  EXPECT_GE(std::chrono::steady_clock::now(), deadline);
}

TEST(EventCountTest, AwaitReturnsAtOnceWhenReady) {
  EventCount event;
  WaitStrategy strategy;
  EXPECT_TRUE(strategy.Await(event, [] { return true; }));
  EXPECT_EQ(event.parks(), 0u);
}

}  // namespace
}  // namespace tempest::worker
