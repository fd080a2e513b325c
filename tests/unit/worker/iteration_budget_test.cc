#include "worker/iteration_budget.h"

#include <chrono>

#include "gtest/gtest.h"

namespace tempest::worker {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

// Runs `iterations` full batches of items that each take `per_item`.
void RunBatches(IterationBudget& b, std::chrono::nanoseconds per_item, int iterations) {
  for (int i = 0; i < iterations; ++i) b.Observe(b.size(), per_item * b.size());
}

TEST(IterationBudgetTest, AFastExecutorReachesItsFullBatchInAFewIterations) {
  IterationBudget b(256);
  EXPECT_EQ(b.size(), 1u);
  RunBatches(b, microseconds(1), 8);
  EXPECT_EQ(b.size(), 256u);
  RunBatches(b, microseconds(1), 100);
  EXPECT_EQ(b.size(), 256u);  // never beyond the configured batch
}

TEST(IterationBudgetTest, ASlowBoltGetsBatchesThatFitTheTarget) {
  IterationBudget b(256);
  RunBatches(b, microseconds(1), 10);
  ASSERT_EQ(b.size(), 256u);
  // 40 ms a tuple: one batch of 256 took 10 s; the next fits in 200 ms.
  b.Observe(256, milliseconds(40) * 256);
  EXPECT_EQ(b.size(), 5u);
  RunBatches(b, milliseconds(40), 20);
  EXPECT_LE(b.size() * 40, 200u);
  EXPECT_GE(b.size(), 2u);
}

TEST(IterationBudgetTest, ATupleSlowerThanTheTargetMeansOneAtATime) {
  IterationBudget b(256);
  b.Observe(1, milliseconds(1500));
  EXPECT_EQ(b.size(), 1u);
  RunBatches(b, milliseconds(1500), 5);
  EXPECT_EQ(b.size(), 1u);
}

TEST(IterationBudgetTest, APartialBatchShrinksButDoesNotGrowIt) {
  IterationBudget b(256);
  RunBatches(b, microseconds(1), 10);
  ASSERT_EQ(b.size(), 256u);
  // Three items in a second: 256 of them would take over a minute.
  b.Observe(3, milliseconds(1000));
  EXPECT_EQ(b.size(), 1u);
  // A short queue that was fast says little about a full batch: no growth.
  b.Observe(1, microseconds(0));
  EXPECT_EQ(b.size(), 2u);  // a full batch of one, below the clock's resolution
  b.Observe(1, microseconds(10));
  EXPECT_EQ(b.size(), 2u);
  b.Observe(0, milliseconds(5000));  // nothing handled: nothing learnt
  EXPECT_EQ(b.size(), 2u);
}

TEST(IterationBudgetTest, TheCoarseClockMovesForward) {
  const auto a = IterationBudget::CoarseNow();
  const auto b = IterationBudget::CoarseNow();
  EXPECT_GT(a.count(), 0);
  EXPECT_GE(b, a);
}

}  // namespace
}  // namespace tempest::worker
