#include "spout/kafka/pending_offsets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

namespace tempest::spout {
namespace {

TEST(PendingOffsetsTest, LowestIsTheFirstIncompleteOffset) {
  PendingOffsets p;
  EXPECT_FALSE(p.Lowest().has_value());
  for (int64_t o = 100; o < 105; ++o) ASSERT_TRUE(p.Add(o));
  EXPECT_EQ(p.Lowest(), 100);
  EXPECT_TRUE(p.Complete(101));
  EXPECT_TRUE(p.Complete(102));
  EXPECT_EQ(p.Lowest(), 100);  // 100 still holds the commit point back
  EXPECT_TRUE(p.Complete(100));
  EXPECT_EQ(p.Lowest(), 103);
  EXPECT_EQ(p.count(), 2);
}

TEST(PendingOffsetsTest, GapsCountAsComplete) {
  PendingOffsets p;
  p.Add(10);
  p.Add(15);  // 11..14 were compacted away
  p.Complete(10);
  EXPECT_EQ(p.Lowest(), 15);
  EXPECT_FALSE(p.IsPending(12));
}

TEST(PendingOffsetsTest, CompletedOffsetsCannotBecomePendingAgain) {
  PendingOffsets p;
  p.Add(1);
  p.Add(2);
  p.Complete(1);
  p.Complete(2);
  EXPECT_FALSE(p.Add(1));
  EXPECT_FALSE(p.Complete(2));
  EXPECT_TRUE(p.empty());
  EXPECT_TRUE(p.Add(3));
  EXPECT_TRUE(p.Add(3));  // a retry of a pending offset is a no-op
  EXPECT_EQ(p.count(), 1);
}

TEST(PendingOffsetsTest, DropBelowReportsLostPendingOffsets) {
  PendingOffsets p;
  for (int64_t o = 0; o < 10; ++o) p.Add(o);
  p.Complete(3);
  EXPECT_EQ(p.DropBelow(5), 4);  // 0,1,2,4
  EXPECT_EQ(p.Lowest(), 5);
}

TEST(PendingOffsetsTest, MatchesASetUnderRandomOperations) {
  std::mt19937_64 rng(42);
  PendingOffsets p;
  std::set<int64_t> model;
  int64_t next = 0;
  for (int step = 0; step < 200000; ++step) {
    if (model.size() < 500 && rng() % 2 == 0) {
      next += 1 + static_cast<int64_t>(rng() % 3);
      ASSERT_TRUE(p.Add(next));
      model.insert(next);
    } else if (!model.empty()) {
      auto it = model.begin();
      std::advance(it, static_cast<long>(rng() % model.size()));
      ASSERT_TRUE(p.Complete(*it));
      model.erase(it);
    }
    ASSERT_EQ(p.count(), static_cast<int64_t>(model.size()));
    if (model.empty()) {
      ASSERT_FALSE(p.Lowest().has_value());
    } else {
      ASSERT_EQ(p.Lowest(), *model.begin());
    }
  }
}

}  // namespace
}  // namespace tempest::spout
