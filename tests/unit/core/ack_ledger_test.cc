#include "common/core/ack_ledger.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"

namespace tempest::core {
namespace {

constexpr AckResult kPending{};
AckResult Completed(int32_t task) { return {AckOutcome::kCompleted, task}; }
AckResult Failed(int32_t task) { return {AckOutcome::kFailed, task}; }

TEST(AckLedgerTest, CompletesWhenAllEdgesAcked) {
  AckLedger ledger;
  // Spout emits edges e1, e2; bolt A acks e1 and emits e3 anchored to it.
  const uint64_t e1 = 0x1111, e2 = 0x2222, e3 = 0x4444;
  EXPECT_EQ(ledger.Init(7, e1 ^ e2, 3), kPending);
  EXPECT_EQ(ledger.Ack(7, e1 ^ e3), kPending);
  EXPECT_EQ(ledger.Ack(7, e2), kPending);
  EXPECT_EQ(ledger.size(), 1u);
  EXPECT_EQ(ledger.Ack(7, e3), Completed(3));
  EXPECT_EQ(ledger.size(), 0u);
}

TEST(AckLedgerTest, InitWithZeroCompletesImmediately) {
  AckLedger ledger;
  EXPECT_EQ(ledger.Init(1, 0, 5), Completed(5));
  EXPECT_EQ(ledger.size(), 0u);
}

// A bolt's ack that carries the init (a spout tuple that stayed in its
// worker) sends init ^ ack as one __ack_init: for a one-hop tree that is 0.
TEST(AckLedgerTest, AnAckCarryingTheInitCompletesAOneHopTree) {
  AckLedger ledger;
  const uint64_t e1 = 0x1111;
  EXPECT_EQ(ledger.Init(4, e1 ^ e1, 2), Completed(2));
  EXPECT_EQ(ledger.size(), 0u);
  EXPECT_EQ(ledger.Ack(4, 0x55), kPending);  // a later stray ack opens a fresh entry
  EXPECT_EQ(ledger.size(), 1u);
}

// The same with a second branch whose ack arrived first: the zero-valued
// init must settle the existing entry, not bypass it.
TEST(AckLedgerTest, AnInitOfZeroSettlesAnEntryThatAcksOpened) {
  AckLedger ledger;
  const uint64_t e1 = 0x1111, e2 = 0x2222;
  EXPECT_EQ(ledger.Ack(6, e2), kPending);
  // Bolt A carried the init e1 ^ e2 and acks e1 and a child e3 it emitted.
  const uint64_t e3 = 0x4444;
  EXPECT_EQ(ledger.Init(6, (e1 ^ e2) ^ (e1 ^ e3), 8), kPending);
  EXPECT_EQ(ledger.Init(6, 0, 8), kPending);  // an init of 0 changes no XOR
  EXPECT_EQ(ledger.Ack(6, e3), Completed(8));
  EXPECT_EQ(ledger.size(), 0u);
}

TEST(AckLedgerTest, AckBeforeInitCompletesWhenInitArrives) {
  AckLedger ledger;
  EXPECT_EQ(ledger.Ack(9, 0xAA), kPending);
  EXPECT_EQ(ledger.Ack(9, 0xBB), kPending);  // No spout task yet: nothing to report.
  EXPECT_EQ(ledger.size(), 1u);
  EXPECT_EQ(ledger.Init(9, 0xAA ^ 0xBB, 4), Completed(4));
  EXPECT_EQ(ledger.size(), 0u);
}

TEST(AckLedgerTest, AcksCancellingToZeroBeforeInitDoNotComplete) {
  AckLedger ledger;
  EXPECT_EQ(ledger.Ack(9, 0xAA), kPending);
  EXPECT_EQ(ledger.Ack(9, 0xAA), kPending);  // Value 0, but the init is missing.
  EXPECT_EQ(ledger.Init(9, 0xCC, 4), kPending);
  EXPECT_EQ(ledger.Ack(9, 0xCC), Completed(4));
}

TEST(AckLedgerTest, FailReportsToSpout) {
  AckLedger ledger;
  EXPECT_EQ(ledger.Init(1, 0x10, 2), kPending);
  EXPECT_EQ(ledger.Fail(1), Failed(2));
  EXPECT_EQ(ledger.size(), 0u);
}

TEST(AckLedgerTest, FailBeforeInitFailsWhenInitArrives) {
  AckLedger ledger;
  EXPECT_EQ(ledger.Fail(1), kPending);
  EXPECT_EQ(ledger.Init(1, 0x10, 2), Failed(2));
  EXPECT_EQ(ledger.size(), 0u);
}

TEST(AckLedgerTest, ZeroValueWinsOverFailedLikeStorm) {
  AckLedger ledger;
  EXPECT_EQ(ledger.Fail(1), kPending);
  EXPECT_EQ(ledger.Ack(1, 0x10), kPending);
  EXPECT_EQ(ledger.Init(1, 0x10, 2), Completed(2));
}

TEST(AckLedgerTest, RotateExpiresUnfinishedTreesAsFailed) {
  AckLedger ledger(3);
  EXPECT_EQ(ledger.Init(1, 0x10, 2), kPending);
  EXPECT_EQ(ledger.Ack(2, 0x20), kPending);  // Init never arrives.
  EXPECT_TRUE(ledger.Rotate().empty());
  EXPECT_TRUE(ledger.Rotate().empty());
  auto expired = ledger.Rotate();
  ASSERT_EQ(expired.size(), 2u);
  std::sort(expired.begin(), expired.end(),
            [](const ExpiredRoot& a, const ExpiredRoot& b) { return a.root < b.root; });
  EXPECT_EQ(expired[0].root, 1u);
  EXPECT_EQ(expired[0].spout_task, 2);
  EXPECT_EQ(expired[1].root, 2u);
  EXPECT_EQ(expired[1].spout_task, AckLedger::kUnknownTask);
  EXPECT_EQ(ledger.size(), 0u);
  // A late ack for an expired root starts a fresh entry and never completes.
  EXPECT_EQ(ledger.Ack(1, 0x10), kPending);
}

TEST(AckLedgerTest, ResetTimeoutRestartsExpiry) {
  AckLedger ledger(2);
  EXPECT_EQ(ledger.Init(1, 0x10, 2), kPending);
  EXPECT_TRUE(ledger.Rotate().empty());
  EXPECT_EQ(ledger.ResetTimeout(1), 2);
  EXPECT_EQ(ledger.ResetTimeout(99), std::nullopt);
  EXPECT_TRUE(ledger.Rotate().empty());
  EXPECT_EQ(ledger.Ack(1, 0x10), Completed(2));
}

// Builds random trees (random fan-out, random depth) the way spouts and bolts
// assign edge ids, shuffles every message across all trees, and checks each
// tree completes exactly once, on its last message, at its own spout task.
TEST(AckLedgerTest, RandomTreesInRandomOrderCompleteExactlyOnce) {
  std::mt19937_64 rng(20261130);
  struct Message {
    enum Kind { kInit, kAck } kind;
    uint64_t root;
    uint64_t value;
    int32_t task;
  };
  std::vector<Message> messages;
  absl::flat_hash_map<uint64_t, int32_t> spout_of;
  absl::flat_hash_map<uint64_t, int> message_count;
  constexpr int kTrees = 2000;
  for (int t = 0; t < kTrees; ++t) {
    const uint64_t root = rng();
    const int32_t task = static_cast<int32_t>(rng() % 16);
    spout_of[root] = task;
    // Each pending edge gets acked by a "bolt" that emits 0..3 children.
    std::vector<uint64_t> frontier;
    uint64_t init = 0;
    const int fan_out = static_cast<int>(rng() % 4);  // 0 → immediate completion.
    for (int i = 0; i < fan_out; ++i) {
      frontier.push_back(rng());
      init ^= frontier.back();
    }
    messages.push_back({Message::kInit, root, init, task});
    int budget = 40;
    while (!frontier.empty()) {
      const uint64_t edge = frontier.back();
      frontier.pop_back();
      uint64_t ack = edge;
      const int children = budget-- > 0 ? static_cast<int>(rng() % 4) : 0;
      for (int c = 0; c < children; ++c) {
        frontier.push_back(rng());
        ack ^= frontier.back();
      }
      messages.push_back({Message::kAck, root, ack, -1});
    }
  }
  for (const Message& m : messages) ++message_count[m.root];
  std::shuffle(messages.begin(), messages.end(), rng);

  AckLedger ledger;
  absl::flat_hash_map<uint64_t, int> completions;
  absl::flat_hash_map<uint64_t, int> seen;
  for (const Message& m : messages) {
    const int nth = ++seen[m.root];
    const AckResult r = m.kind == Message::kInit ? ledger.Init(m.root, m.value, m.task)
                                                 : ledger.Ack(m.root, m.value);
    if (r.outcome == AckOutcome::kCompleted) {
      ++completions[m.root];
      EXPECT_EQ(r.spout_task, spout_of[m.root]);
      EXPECT_EQ(nth, message_count[m.root]) << "completed before its last message";
    } else {
      EXPECT_EQ(r.outcome, AckOutcome::kPending);
    }
  }
  EXPECT_EQ(completions.size(), static_cast<size_t>(kTrees));
  for (const auto& [root, n] : completions) EXPECT_EQ(n, 1) << root;
  EXPECT_EQ(ledger.size(), 0u);
}

// Many trees created across several ticks, with sequential roots so the
// table's probe runs cluster and rotation-time erasure has to shift entries:
// each rotation expires exactly the trees created `buckets` ticks earlier, and
// every survivor can still be found and completed.
TEST(AckLedgerTest, RotationExpiresExactlyTheOldTreesAmongMany) {
  AckLedger ledger(3);
  constexpr uint64_t kPerTick = 3000;
  for (uint64_t tick = 0; tick < 3; ++tick) {
    for (uint64_t i = 0; i < kPerTick; ++i) {
      const uint64_t root = tick * kPerTick + i;
      ASSERT_EQ(ledger.Init(root, root + 1, static_cast<int32_t>(tick)), kPending);
    }
    if (tick < 2) {
      EXPECT_TRUE(ledger.Rotate().empty());
    }
  }
  EXPECT_EQ(ledger.size(), 3 * kPerTick);
  auto expired = ledger.Rotate();  // Third rotation since tick 0's trees.
  ASSERT_EQ(expired.size(), kPerTick);
  std::sort(expired.begin(), expired.end(),
            [](const ExpiredRoot& a, const ExpiredRoot& b) { return a.root < b.root; });
  for (uint64_t i = 0; i < kPerTick; ++i) {
    EXPECT_EQ(expired[i].root, i);
    EXPECT_EQ(expired[i].spout_task, 0);
  }
  EXPECT_EQ(ledger.size(), 2 * kPerTick);
  for (uint64_t root = kPerTick; root < 3 * kPerTick; ++root) {
    ASSERT_EQ(ledger.Ack(root, root + 1), Completed(static_cast<int32_t>(root / kPerTick))) << root;
  }
  EXPECT_EQ(ledger.size(), 0u);
  EXPECT_TRUE(ledger.Rotate().empty());
}

// Interleaves random inits, acks and ticks on a table that grows from its
// initial size, checking sizes, completions and expiries against a reference
// model (root -> remaining XOR and creation tick).
TEST(AckLedgerTest, MatchesReferenceModelUnderChurnAndTicks) {
  std::mt19937_64 rng(99);
  AckLedger ledger(3);
  struct Tree {
    uint64_t value;
    int tick;
  };
  absl::flat_hash_map<uint64_t, Tree> model;
  std::vector<uint64_t> roots;
  int tick = 0;
  size_t total_expired = 0;
  for (int step = 1; step <= 300'000; ++step) {
    if (step % 20'000 == 0) {
      ++tick;
      absl::flat_hash_map<uint64_t, Tree> expected;
      for (const auto& [root, tree] : model) {
        if (tick - tree.tick >= 3) expected[root] = tree;
      }
      const auto expired = ledger.Rotate();
      ASSERT_EQ(expired.size(), expected.size()) << "tick " << tick;
      total_expired += expired.size();
      for (const ExpiredRoot& e : expired) {
        ASSERT_TRUE(expected.contains(e.root)) << e.root;
        model.erase(e.root);
      }
      roots.clear();
      for (const auto& [root, tree] : model) roots.push_back(root);
    } else if (roots.empty() || rng() % 3 != 0) {
      const uint64_t root = rng() % 1'000'000;  // Small range: dense clusters.
      if (model.contains(root)) continue;
      const uint64_t value = rng() | 1;
      ASSERT_EQ(ledger.Init(root, value, 1), kPending);
      model[root] = Tree{value, tick};
      roots.push_back(root);
    } else {
      const size_t pick = rng() % roots.size();
      const uint64_t root = roots[pick];
      ASSERT_EQ(ledger.Ack(root, model[root].value), Completed(1)) << root;
      model.erase(root);
      roots[pick] = roots.back();
      roots.pop_back();
    }
    ASSERT_EQ(ledger.size(), model.size());
  }
  EXPECT_GT(total_expired, 1000u);  // The ticks really expired trees.
  for (const auto& [root, tree] : model) ASSERT_EQ(ledger.Ack(root, tree.value), Completed(1));
  EXPECT_EQ(ledger.size(), 0u);
}

TEST(AckLedgerTest, PrefetchChangesNothing) {
  AckLedger ledger;
  ledger.Prefetch(5);  // Absent root, empty table.
  EXPECT_EQ(ledger.Init(5, 0x10, 2), kPending);
  ledger.Prefetch(5);
  ledger.Prefetch(6);
  EXPECT_EQ(ledger.size(), 1u);
  EXPECT_EQ(ledger.Ack(5, 0x10), Completed(2));
  EXPECT_EQ(ledger.size(), 0u);
}

}  // namespace
}  // namespace tempest::core
