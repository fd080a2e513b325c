#include "worker/receive_queue.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/eventually.h"

namespace tempest::worker {
namespace {

using std::chrono::milliseconds;
using tempest::testing::Eventually;

constexpr milliseconds kPatience(10'000);

struct Item {
  uint32_t producer = 0;
  uint64_t seq = 0;
};

std::unique_ptr<ReceiveQueue<Item>> MakeQueue(size_t capacity, size_t batch,
                                              size_t max_producers = 8) {
  ReceiveQueueOptions options;
  options.ring_capacity = capacity;
  options.batch_size = batch;
  options.max_producers = max_producers;
  auto queue = ReceiveQueue<Item>::Create(options);
  EXPECT_TRUE(queue.ok()) << queue.status();
  return *std::move(queue);
}

TEST(ReceiveQueueTest, CreateRejectsBadOptions) {
  ReceiveQueueOptions options;
  options.ring_capacity = 1;
  EXPECT_EQ(ReceiveQueue<Item>::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.ring_capacity = 8;
  options.batch_size = 0;
  EXPECT_EQ(ReceiveQueue<Item>::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ReceiveQueueTest, RegisterProducerFailsBeyondMax) {
  auto queue = MakeQueue(8, 4, 2);
  EXPECT_TRUE(queue->RegisterProducer().ok());
  EXPECT_TRUE(queue->RegisterProducer().ok());
  EXPECT_EQ(queue->RegisterProducer().status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(ReceiveQueueTest, ItemsBecomeVisibleAtBatchSizeOrFlush) {
  auto queue = MakeQueue(64, 4);
  auto* producer = *queue->RegisterProducer();
  Item out[16];
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(producer->Push({0, i}).ok());
  EXPECT_EQ(producer->staged(), 3u);
  EXPECT_EQ(queue->TryPopBatch(out, 16), 0u);
  ASSERT_TRUE(producer->Push({0, 3}).ok());  // Fourth item completes the batch.
  EXPECT_EQ(queue->TryPopBatch(out, 16), 4u);
  ASSERT_TRUE(producer->Push({0, 4}).ok());
  ASSERT_TRUE(producer->Flush().ok());
  ASSERT_EQ(queue->TryPopBatch(out, 16), 1u);
  EXPECT_EQ(out[0].seq, 4u);
}

TEST(ReceiveQueueTest, TryDrainVisitsProducersRoundRobin) {
  auto queue = MakeQueue(64, 1);
  auto* a = *queue->RegisterProducer();
  auto* b = *queue->RegisterProducer();
  for (uint64_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(a->Push({0, i}).ok());
    ASSERT_TRUE(b->Push({1, i}).ok());
  }
  // With max < one ring's contents, successive calls start at different rings.
  Item out[5];
  ASSERT_EQ(queue->TryPopBatch(out, 5), 5u);
  const uint32_t first = out[0].producer;
  ASSERT_EQ(queue->TryPopBatch(out, 5), 5u);
  EXPECT_NE(out[0].producer, first);
}

// Several producers, tiny rings (so producers block constantly), random
// batch sizes: every item arrives exactly once and each producer's items
// arrive in the order pushed.
TEST(ReceiveQueueTest, NothingDroppedAndFifoPerProducerUnderContention) {
  constexpr uint32_t kProducers = 3;
  constexpr uint64_t kPerProducer = 300'000;
  auto queue = MakeQueue(16, 8);
  std::vector<ReceiveQueue<Item>::Producer*> handles;
  for (uint32_t p = 0; p < kProducers; ++p) handles.push_back(*queue->RegisterProducer());
  std::vector<std::thread> threads;
  for (uint32_t p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      std::mt19937 rng(100 + p);
      for (uint64_t i = 0; i < kPerProducer; ++i) {
        ASSERT_TRUE(handles[p]->Push({p, i}).ok());
        if (rng() % 50 == 0) {
          ASSERT_TRUE(handles[p]->Flush().ok());
        }
      }
      ASSERT_TRUE(handles[p]->Flush().ok());
    });
  }
  std::vector<uint64_t> next(kProducers, 0);
  uint64_t received = 0;
  bool in_order = true;
  std::mt19937 rng(7);
  Item out[64];
  while (received < kProducers * kPerProducer) {
    const size_t got = queue->PopBatch(out, 1 + rng() % 64);
    ASSERT_GT(got, 0u);
    for (size_t i = 0; i < got; ++i) {
      in_order &= (out[i].seq == next[out[i].producer]);
      next[out[i].producer] = out[i].seq + 1;
    }
    received += got;
  }
  for (auto& t : threads) t.join();
  EXPECT_TRUE(in_order);
  for (uint32_t p = 0; p < kProducers; ++p) EXPECT_EQ(next[p], kPerProducer);
  EXPECT_EQ(queue->TryPopBatch(out, 64), 0u);
}

TEST(ReceiveQueueTest, BlockedProducerResumesWhenConsumerDrains) {
  ReceiveQueueOptions options;
  options.ring_capacity = 4;
  options.batch_size = 2;
  options.producer_wait = WaitOptions{.spin_iterations = 0, .yield_iterations = 0};
  auto queue = *ReceiveQueue<Item>::Create(options);
  auto* producer = *queue->RegisterProducer();
  std::atomic<uint64_t> pushed{0};
  std::thread thread([&] {
    for (uint64_t i = 0; i < 10; ++i) {
      ASSERT_TRUE(producer->Push({0, i}).ok());
      pushed = i + 1;
    }
    ASSERT_TRUE(producer->Flush().ok());
  });
  // The ring holds 4; the fifth push must park.
  ASSERT_TRUE(Eventually(kPatience, [&] { return queue->Stats().producer_parks >= 1; }));
  EXPECT_EQ(pushed.load(), 4u);
  Item out[16];
  uint64_t received = 0;
  while (received < 10) {
    const size_t got = queue->PopBatch(out, 16);
    for (size_t i = 0; i < got; ++i) EXPECT_EQ(out[i].seq, received + i);
    received += got;
  }
  thread.join();
  EXPECT_EQ(pushed.load(), 10u);
  EXPECT_GE(queue->Stats().producer_parks, 1u);
}

// Wake-early: with the consumer parked, the first item of a batch is
// published at once (its wake-up overlaps the rest of the batch); with the
// consumer awake, items wait for the batch.
TEST(ReceiveQueueTest, ParkedConsumerIsWokenByFirstItemAwakeOneByBatch) {
  ReceiveQueueOptions options;
  options.batch_size = 4;
  options.consumer_wait = WaitOptions{.spin_iterations = 0, .yield_iterations = 0};
  auto queue = *ReceiveQueue<Item>::Create(options);
  auto* producer = *queue->RegisterProducer();
  std::atomic<size_t> got{0};
  std::thread consumer([&] {
    Item out[16];
    got = queue->PopBatch(out, 16);
  });
  ASSERT_TRUE(Eventually(kPatience, [&] { return queue->Stats().consumer_parks >= 1; }));
  ASSERT_TRUE(producer->Push({0, 0}).ok());
  EXPECT_EQ(producer->staged(), 0u);  // published at once
  consumer.join();
  EXPECT_EQ(got.load(), 1u);
  EXPECT_EQ(queue->Stats().consumer_wakes, 1u);
  // Nobody parked now: items wait for a whole batch (4 halved by the wake).
  const size_t limit = producer->batch_limit();
  EXPECT_EQ(limit, 2u);
  for (uint64_t i = 1; i < limit; ++i) ASSERT_TRUE(producer->Push({0, i}).ok());
  EXPECT_EQ(producer->staged(), limit - 1);
  Item out[16];
  EXPECT_EQ(queue->TryPopBatch(out, 16), 0u);
  ASSERT_TRUE(producer->Push({0, limit}).ok());
  EXPECT_EQ(queue->TryPopBatch(out, 16), limit);
  EXPECT_EQ(queue->Stats().consumer_wakes, 1u);
}

// Each publish notifies at most once, so a parked consumer gets at most one
// wake per published batch; while it stays awake batches grow back to the cap.
TEST(ReceiveQueueTest, WakesAtMostOncePerBatch) {
  constexpr uint64_t kItems = 200'000;
  constexpr size_t kBatch = 100;
  ReceiveQueueOptions options;
  options.ring_capacity = 1024;
  options.batch_size = kBatch;
  options.consumer_wait = WaitOptions{.spin_iterations = 0, .yield_iterations = 0};
  auto queue = *ReceiveQueue<Item>::Create(options);
  auto* producer = *queue->RegisterProducer();
  std::thread thread([&] {
    for (uint64_t i = 0; i < kItems; ++i) ASSERT_TRUE(producer->Push({0, i}).ok());
    ASSERT_TRUE(producer->Flush().ok());
  });
  uint64_t received = 0;
  Item out[256];
  while (received < kItems) received += queue->PopBatch(out, 256);
  thread.join();
  EXPECT_EQ(received, kItems);
  const ReceiveQueueStats stats = queue->Stats();
  // Each publish notifies at most once.
  EXPECT_LE(stats.consumer_wakes, stats.producer_publishes);
  EXPECT_GE(stats.producer_publishes, kItems / kBatch);
  EXPECT_LE(stats.producer_publishes, kItems);
}

// Parks the consumer in PopBatch on a thread, pushes one item from
// `producer` (published at once, waking it), and returns once the consumer
// has it.
void PublishToParkedConsumer(ReceiveQueue<Item>& queue, ReceiveQueue<Item>::Producer& producer,
                             uint64_t& seq) {
  const uint64_t parks = queue.Stats().consumer_parks;
  std::atomic<size_t> got{0};
  std::thread consumer([&] {
    Item out[256];
    got = queue.PopBatch(out, 256);
  });
  ASSERT_TRUE(Eventually(kPatience, [&] { return queue.Stats().consumer_parks > parks; }));
  ASSERT_TRUE(producer.Push({0, seq++}).ok());
  consumer.join();
  EXPECT_EQ(got.load(), 1u);
}

// AIMD: a publish that wakes a parked consumer halves the producer's batch
// (down to batch_size/8); publishes that find it awake grow the batch by
// batch_size/16 per publish back up to batch_size.
TEST(ReceiveQueueTest, BatchHalvesOnWakeAndGrowsWhileConsumerIsAwake) {
  ReceiveQueueOptions options;
  options.ring_capacity = 1024;
  options.batch_size = 64;
  options.consumer_wait = WaitOptions{.spin_iterations = 0, .yield_iterations = 0};
  auto queue = *ReceiveQueue<Item>::Create(options);
  auto* producer = *queue->RegisterProducer();
  EXPECT_EQ(producer->batch_limit(), 64u);  // starts at the cap
  uint64_t seq = 0;
  for (size_t expected : {32u, 16u, 8u, 8u}) {
    PublishToParkedConsumer(*queue, *producer, seq);
    EXPECT_EQ(producer->batch_limit(), expected);
  }
  // Nobody parked: each publish adds 64/16 = 4.
  Item out[256];
  for (size_t expected : {12u, 16u, 20u}) {
    ASSERT_TRUE(producer->Push({0, seq++}).ok());
    ASSERT_TRUE(producer->Flush().ok());
    EXPECT_EQ(producer->batch_limit(), expected);
  }
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(producer->Push({0, seq++}).ok());
    ASSERT_TRUE(producer->Flush().ok());
    while (queue->TryPopBatch(out, 256) > 0) {
    }
  }
  EXPECT_EQ(producer->batch_limit(), 64u);  // capped
  // A batch is still published whole at the limit, not before.
  for (int i = 0; i < 63; ++i) ASSERT_TRUE(producer->Push({0, seq++}).ok());
  EXPECT_EQ(producer->staged(), 63u);
  ASSERT_TRUE(producer->Push({0, seq++}).ok());
  EXPECT_EQ(producer->staged(), 0u);
  EXPECT_EQ(queue->TryPopBatch(out, 256), 64u);
}

// The cap is the ring when batch_size exceeds it.
TEST(ReceiveQueueTest, BatchCapIsAtMostTheRing) {
  auto queue = MakeQueue(16, 1000);
  auto* producer = *queue->RegisterProducer();
  EXPECT_EQ(producer->batch_limit(), 16u);
}

TEST(ReceiveQueueTest, PopBatchUntilReturnsZeroAtDeadline) {
  auto queue = MakeQueue(8, 1);
  ASSERT_TRUE(queue->RegisterProducer().ok());
  Item out[4];
  EXPECT_EQ(queue->PopBatchUntil(out, 4, std::chrono::steady_clock::now() + milliseconds(10)), 0u);
  EXPECT_FALSE(queue->closed());
}

TEST(ReceiveQueueTest, CloseDrainsPublishedItemsThenReturnsZero) {
  auto queue = MakeQueue(8, 1);
  auto* producer = *queue->RegisterProducer();
  ASSERT_TRUE(producer->Push({0, 1}).ok());
  ASSERT_TRUE(producer->Push({0, 2}).ok());
  queue->Close();
  EXPECT_EQ(producer->Push({0, 3}).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(producer->Flush().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(queue->RegisterProducer().status().code(), absl::StatusCode::kFailedPrecondition);
  Item out[4];
  ASSERT_EQ(queue->PopBatch(out, 4), 2u);
  EXPECT_EQ(out[1].seq, 2u);
  EXPECT_EQ(queue->PopBatch(out, 4), 0u);
}

TEST(ReceiveQueueTest, CloseWakesBlockedConsumer) {
  ReceiveQueueOptions options;
  options.consumer_wait = WaitOptions{.spin_iterations = 0, .yield_iterations = 0};
  auto queue = *ReceiveQueue<Item>::Create(options);
  ASSERT_TRUE(queue->RegisterProducer().ok());
  std::atomic<int> result{-1};
  std::thread consumer([&] {
    Item out[4];
    result = static_cast<int>(queue->PopBatch(out, 4));
  });
  ASSERT_TRUE(Eventually(kPatience, [&] { return queue->Stats().consumer_parks >= 1; }));
  queue->Close();
  consumer.join();
  EXPECT_EQ(result.load(), 0);
}

TEST(ReceiveQueueTest, CloseReleasesBlockedProducerWithError) {
  ReceiveQueueOptions options;
  options.ring_capacity = 2;
  options.batch_size = 1;
  options.producer_wait = WaitOptions{.spin_iterations = 0, .yield_iterations = 0};
  auto queue = *ReceiveQueue<Item>::Create(options);
  auto* producer = *queue->RegisterProducer();
  std::atomic<int> code{-1};
  std::thread thread([&] {
    absl::Status status;
    for (uint64_t i = 0; status.ok(); ++i) status = producer->Push({0, i});
    code = static_cast<int>(status.code());
  });
  ASSERT_TRUE(Eventually(kPatience, [&] { return queue->Stats().producer_parks >= 1; }));
  queue->Close();
  thread.join();
  EXPECT_EQ(code.load(), static_cast<int>(absl::StatusCode::kFailedPrecondition));
  Item out[4];
  EXPECT_EQ(queue->PopBatch(out, 4), 2u);  // What was published before the close.
}

TEST(ReceiveQueueTest, CarriesMoveOnlyItemsByPointer) {
  ReceiveQueueOptions options;
  options.batch_size = 2;
  auto queue = *ReceiveQueue<std::unique_ptr<Item>>::Create(options);
  auto* producer = *queue->RegisterProducer();
  ASSERT_TRUE(producer->Push(std::make_unique<Item>(Item{0, 41})).ok());
  ASSERT_TRUE(producer->Push(std::make_unique<Item>(Item{0, 42})).ok());
  std::vector<uint64_t> seen;
  EXPECT_EQ(queue->TryDrain(8, [&](std::unique_ptr<Item>& item) { seen.push_back(item->seq); }),
            2u);
  EXPECT_EQ(seen, (std::vector<uint64_t>{41, 42}));
}

}  // namespace
}  // namespace tempest::worker
