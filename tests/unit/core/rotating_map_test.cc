#include "common/core/rotating_map.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

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

// RotatingIdMap: RotatingMap's semantics on one open-addressing table.

struct Pending {
  uint64_t id = 0;
  uint32_t tag = 0;
  friend bool operator==(const Pending&, const Pending&) = default;
};

TEST(RotatingIdMapTest, TwoBucketsExpireBetweenOneAndTwoTicks) {
  RotatingIdMap<Pending> map(2);
  map.Put(1, {10, 1});
  EXPECT_TRUE(map.Rotate().empty());
  map.Put(2, {20, 2});  // One tick younger than key 1.
  auto first = map.Rotate();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].first, 1u);
  EXPECT_EQ(first[0].second, (Pending{10, 1}));
  auto second = map.Rotate();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].first, 2u);
  EXPECT_TRUE(map.empty());
}

TEST(RotatingIdMapTest, EntryExpiresAfterNumBucketsRotations) {
  RotatingIdMap<Pending> map(3);
  map.Put(7, {70, 0});
  EXPECT_TRUE(map.Rotate().empty());
  EXPECT_TRUE(map.Rotate().empty());
  EXPECT_TRUE(map.Contains(7));
  EXPECT_EQ(map.Rotate().size(), 1u);
  EXPECT_FALSE(map.Contains(7));
}

TEST(RotatingIdMapTest, PutOfExistingKeyReplacesAndRestartsTimeout) {
  RotatingIdMap<Pending> map(2);
  map.Put(1, {10, 0});
  map.Rotate();
  map.Put(1, {11, 0});
  EXPECT_EQ(map.size(), 1u);
  EXPECT_TRUE(map.Rotate().empty());
  auto expired = map.Rotate();
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].second.id, 11u);
}

TEST(RotatingIdMapTest, TouchRestartsTimeoutAndRemoveTakesTheValue) {
  RotatingIdMap<Pending> map(2);
  map.Put(1, {10, 0});
  map.Put(2, {20, 0});
  map.Rotate();
  EXPECT_TRUE(map.Touch(1));
  EXPECT_FALSE(map.Touch(3));
  auto expired = map.Rotate();  // Key 2 expires; key 1 was touched.
  ASSERT_EQ(expired.size(), 1u);
  EXPECT_EQ(expired[0].first, 2u);
  EXPECT_EQ(map.Find(1)->id, 10u);
  EXPECT_EQ(map.Remove(1), (Pending{10, 0}));
  EXPECT_EQ(map.Remove(1), std::nullopt);
  EXPECT_EQ(map.Find(1), nullptr);
  EXPECT_TRUE(map.empty());
}

TEST(RotatingIdMapTest, GrowsPastItsInitialCapacityWithSequentialKeys) {
  RotatingIdMap<Pending> map(2);
  constexpr uint64_t kKeys = 100'000;
  for (uint64_t k = 0; k < kKeys; ++k) map.Put(k, {k * 3, 0});
  EXPECT_EQ(map.size(), kKeys);
  for (uint64_t k = 0; k < kKeys; k += 2) EXPECT_EQ(map.Remove(k)->id, k * 3);
  for (uint64_t k = 1; k < kKeys; k += 2) ASSERT_EQ(map.Find(k)->id, k * 3);
  map.Rotate();
  EXPECT_EQ(map.Rotate().size(), kKeys / 2);
  EXPECT_TRUE(map.empty());
}

// Random operations on RotatingIdMap and on RotatingMap (the reference) give
// the same results, including what each rotation expires.
TEST(RotatingIdMapTest, MatchesRotatingMapUnderRandomOperations) {
  std::mt19937_64 rng(33);
  for (int buckets : {2, 3}) {
    RotatingIdMap<Pending> map(buckets);
    RotatingMap<uint64_t, Pending> reference(buckets);
    std::vector<uint64_t> keys;
    for (int step = 0; step < 200'000; ++step) {
      const uint64_t r = rng();
      const int op = static_cast<int>(r % 100);
      // Few distinct keys for some steps, so that puts hit existing ones.
      const uint64_t key = !keys.empty() && op < 60 ? keys[(r >> 8) % keys.size()]
                                                    : ((r >> 7) % 4 == 0 ? (r >> 20) % 64 : rng());
      if (op < 40) {
        const Pending v{r, static_cast<uint32_t>(step)};
        map.Put(key, v);
        reference.Put(key, v);
        keys.push_back(key);
      } else if (op < 80) {
        ASSERT_EQ(map.Remove(key), reference.Remove(key));
      } else if (op < 95) {
        ASSERT_EQ(map.Touch(key), reference.Touch(key));
      } else if (op < 96) {
        std::vector<std::pair<uint64_t, Pending>> got = map.Rotate();
        auto expired = reference.Rotate();
        std::vector<std::pair<uint64_t, Pending>> want(expired.begin(), expired.end());
        auto by_key = [](const auto& a, const auto& b) { return a.first < b.first; };
        std::sort(got.begin(), got.end(), by_key);
        std::sort(want.begin(), want.end(), by_key);
        ASSERT_EQ(got, want);
      }
      ASSERT_EQ(map.size(), reference.size());
      if (keys.size() > 4096) keys.erase(keys.begin(), keys.begin() + 2048);
    }
  }
}

}  // namespace
}  // namespace tempest::core
