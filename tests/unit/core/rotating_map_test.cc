#include "common/core/rotating_map.h"

#include <string>

#include "gtest/gtest.h"

namespace tempest::core {
namespace {

TEST(RotatingMapTest, EntryExpiresAfterNumBucketsRotations) {
  RotatingMap<int, std::string> map(3);
  map.Put(1, "one");
  EXPECT_TRUE(map.Rotate().empty());
  EXPECT_TRUE(map.Rotate().empty());
  EXPECT_TRUE(map.Contains(1));
  auto expired = map.Rotate();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired.at(1), "one");
  EXPECT_FALSE(map.Contains(1));
  EXPECT_TRUE(map.empty());
}

TEST(RotatingMapTest, TwoBucketsExpireBetweenOneAndTwoTicks) {
  RotatingMap<int, int> map(2);
  map.Put(1, 10);
  EXPECT_TRUE(map.Rotate().empty());
  map.Put(2, 20);  // Put after the first tick: one tick younger than key 1.
  auto first = map.Rotate();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(first.contains(1));
  auto second = map.Rotate();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_TRUE(second.contains(2));
}

TEST(RotatingMapTest, RemoveReturnsValueFromAnyBucket) {
  RotatingMap<int, int> map(3);
  map.Put(1, 10);
  map.Rotate();
  map.Put(2, 20);
  map.Rotate();
  map.Put(3, 30);
  EXPECT_EQ(map.size(), 3u);
  EXPECT_EQ(map.Remove(1), 10);
  EXPECT_EQ(map.Remove(2), 20);
  EXPECT_EQ(map.Remove(2), std::nullopt);
  EXPECT_TRUE(map.Erase(3));
  EXPECT_FALSE(map.Erase(3));
  EXPECT_TRUE(map.empty());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(map.Rotate().empty());
}

TEST(RotatingMapTest, PutOfExistingKeyRestartsTimeout) {
  RotatingMap<int, int> map(2);
  map.Put(1, 10);
  map.Rotate();
  map.Put(1, 11);  // Moves the key to the newest bucket.
  EXPECT_EQ(map.size(), 1u);
  EXPECT_TRUE(map.Rotate().empty());
  auto expired = map.Rotate();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired.at(1), 11);
}

TEST(RotatingMapTest, TouchRestartsTimeoutAndKeepsValue) {
  RotatingMap<int, int> map(2);
  map.Put(1, 10);
  map.Rotate();
  EXPECT_TRUE(map.Touch(1));
  EXPECT_FALSE(map.Touch(2));
  EXPECT_TRUE(map.Rotate().empty());
  EXPECT_EQ(*map.Find(1), 10);
  EXPECT_EQ(map.Rotate().size(), 1u);
}

TEST(RotatingMapTest, FindOrInsertFindsInOlderBucketWithoutMovingIt) {
  RotatingMap<int, int> map(2);
  map.Put(1, 10);
  map.Rotate();
  auto [value, inserted] = map.FindOrInsert(1);
  EXPECT_FALSE(inserted);
  EXPECT_EQ(*value, 10);
  *value = 12;
  auto [fresh, fresh_inserted] = map.FindOrInsert(2);
  EXPECT_TRUE(fresh_inserted);
  EXPECT_EQ(*fresh, 0);
  auto expired = map.Rotate();  // Key 1 keeps its original timeout.
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired.at(1), 12);
  EXPECT_TRUE(map.Contains(2));
}

TEST(RotatingMapTest, UpsertUpdatesInPlaceAndErasesOnRequest) {
  RotatingMap<int, int> map(2);
  map.Put(1, 10);
  map.Rotate();
  EXPECT_FALSE(map.Upsert(1, [](int& v) {
    v += 1;
    return false;
  }));
  EXPECT_EQ(*map.Find(1), 11);
  EXPECT_FALSE(map.Upsert(2, [](int& v) {
    EXPECT_EQ(v, 0);  // Inserted default-constructed.
    v = 20;
    return false;
  }));
  EXPECT_TRUE(map.Upsert(1, [](int& v) { return v == 11; }));
  EXPECT_FALSE(map.Contains(1));
  auto expired = map.Rotate();  // Key 1 is gone; key 2 went to the newest bucket.
  EXPECT_TRUE(expired.empty());
  EXPECT_EQ(map.Rotate().at(2), 20);
}

TEST(RotatingMapTest, ForEachVisitsEveryBucket) {
  RotatingMap<int, int> map(3);
  map.Put(1, 1);
  map.Rotate();
  map.Put(2, 2);
  map.Rotate();
  map.Put(3, 3);
  int sum = 0;
  map.ForEach([&](int key, int value) { sum += key * value; });
  EXPECT_EQ(sum, 1 + 4 + 9);
}

}  // namespace
}  // namespace tempest::core
