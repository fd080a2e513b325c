#include "worker/spsc_ring.h"

#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace tempest::worker {
namespace {

TEST(SpscRingTest, CapacityRoundsUpToPowerOfTwo) {
  EXPECT_EQ(SpscRing<int>(5).capacity(), 8u);
  EXPECT_EQ(SpscRing<int>(8).capacity(), 8u);
  EXPECT_EQ(SpscRing<int>(0).capacity(), 2u);
}

// Slots are constructed by the first write that reaches them and destroyed
// with the ring, each exactly once: a value that counts its live copies
// shows none leaked or destroyed twice, whether the ring was left part-way
// through its first lap or after several.
TEST(SpscRingTest, SlotsAreBuiltOnFirstUseAndDestroyedOnce) {
  auto live = std::make_shared<int>(0);
  for (int pushes : {0, 3, 8, 21}) {
    {
      SpscRing<std::shared_ptr<int>> ring(8);
      for (int i = 0; i < pushes; ++i) {
        ASSERT_TRUE(ring.TryPush(std::shared_ptr<int>(live)));
        std::shared_ptr<int> out;
        if (i % 2 == 1 || ring.FreeSlots() == 0) {
          while (ring.TryPop(out)) out.reset();
        }
      }
      EXPECT_GE(live.use_count(), 1);
    }
    EXPECT_EQ(live.use_count(), 1) << pushes << " pushes left copies behind";
  }
}

TEST(SpscRingTest, FifoAcrossWrapAround) {
  SpscRing<int> ring(4);
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(ring.TryPush(next_in++));
    int out[4];
    ASSERT_EQ(ring.PopBatch(out, 4), 3u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(out[i], next_out++);
  }
  EXPECT_TRUE(ring.empty());
}

TEST(SpscRingTest, FullRingRejectsWithoutConsumingItem) {
  SpscRing<std::unique_ptr<int>> ring(2);
  ASSERT_TRUE(ring.TryPush(std::make_unique<int>(1)));
  ASSERT_TRUE(ring.TryPush(std::make_unique<int>(2)));
  auto third = std::make_unique<int>(3);
  EXPECT_FALSE(ring.TryPush(std::move(third)));
  ASSERT_NE(third, nullptr);  // Not moved from on failure.
  std::unique_ptr<int> out;
  ASSERT_TRUE(ring.TryPop(out));
  EXPECT_EQ(*out, 1);
  EXPECT_TRUE(ring.TryPush(std::move(third)));
  EXPECT_EQ(ring.size(), 2u);
}

TEST(SpscRingTest, TryPushBatchTakesThePrefixThatFits) {
  SpscRing<int> ring(4);
  std::vector<int> items = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(ring.TryPushBatch(items.data(), items.size()), 4u);
  EXPECT_EQ(ring.TryPushBatch(items.data() + 4, 2), 0u);
  int out[8];
  EXPECT_EQ(ring.PopBatch(out, 8), 4u);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[3], 4);
  EXPECT_EQ(ring.TryPushBatch(items.data() + 4, 2), 2u);
  EXPECT_EQ(ring.PopBatch(out, 8), 2u);
  EXPECT_EQ(out[0], 5);
  EXPECT_EQ(out[1], 6);
}

TEST(SpscRingTest, StagedItemsInvisibleUntilPublished) {
  SpscRing<int> ring(8);
  ASSERT_TRUE(ring.TryStage(1));
  ASSERT_TRUE(ring.TryStage(2));
  EXPECT_EQ(ring.staged(), 2u);
  EXPECT_TRUE(ring.ConsumerEmpty());
  int out[4];
  EXPECT_EQ(ring.PopBatch(out, 4), 0u);
  ring.Publish();
  EXPECT_EQ(ring.staged(), 0u);
  EXPECT_FALSE(ring.ConsumerEmpty());
  EXPECT_EQ(ring.PopBatch(out, 4), 2u);
  EXPECT_EQ(out[1], 2);
}

TEST(SpscRingTest, ConsumeBatchVisitsInPlace) {
  SpscRing<int> ring(8);
  for (int i = 1; i <= 5; ++i) ASSERT_TRUE(ring.TryPush(int{i}));
  int sum = 0;
  EXPECT_EQ(ring.ConsumeBatch(3, [&](int& v) { sum += v; }), 3u);
  EXPECT_EQ(sum, 6);
  EXPECT_EQ(ring.size(), 2u);
}

// Two threads, random batch sizes on both sides, a ring much smaller than the
// stream: every item arrives once, in order.
TEST(SpscRingTest, TwoThreadsTransferInOrder) {
  constexpr uint64_t kItems = 2'000'000;
  SpscRing<uint64_t> ring(64);
  std::thread producer([&] {
    std::mt19937 rng(1);
    std::vector<uint64_t> batch;
    uint64_t next = 0;
    while (next < kItems) {
      batch.clear();
      const uint64_t n = std::min<uint64_t>(1 + rng() % 100, kItems - next);
      for (uint64_t i = 0; i < n; ++i) batch.push_back(next + i);
      size_t done = 0;
      while (done < batch.size()) {
        done += ring.TryPushBatch(batch.data() + done, batch.size() - done);
        if (done < batch.size()) std::this_thread::yield();
      }
      next += n;
    }
  });
  std::mt19937 rng(2);
  uint64_t expected = 0;
  bool in_order = true;
  std::vector<uint64_t> out(128);
  while (expected < kItems) {
    const size_t got = ring.PopBatch(out.data(), 1 + rng() % 128);
    for (size_t i = 0; i < got; ++i) in_order &= (out[i] == expected++);
    if (got == 0) std::this_thread::yield();
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(expected, kItems);
  EXPECT_TRUE(ring.empty());
}

}  // namespace
}  // namespace tempest::worker
