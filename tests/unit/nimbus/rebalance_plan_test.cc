// A rebalance planned as a change of the placement before it: executors stay
// on their slots, split or merged ranges stay with their tasks, new workers
// take a balanced share, fewer workers give up the emptiest slots.

#include "nimbus/rebalance_plan.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "gtest/gtest.h"

namespace tempest::nimbus {
namespace {

const WorkerSlot kA0{"a", 6700};
const WorkerSlot kA1{"a", 6701};
const WorkerSlot kB0{"b", 6700};
const WorkerSlot kB1{"b", 6701};
const WorkerSlot kC0{"c", 6700};

std::vector<ExecutorId> Executors(int n) {
  std::vector<ExecutorId> out;
  for (int i = 1; i <= n; ++i) out.push_back(ExecutorId{i, i});
  return out;
}

std::vector<ExecutorId> ExecutorsOf(const ExecutorSlots& placement) {
  std::vector<ExecutorId> out;
  for (const auto& [e, s] : placement) out.push_back(e);
  return out;
}

std::map<WorkerSlot, int> Counts(const ExecutorSlots& placement) {
  std::map<WorkerSlot, int> out;
  for (const auto& [e, s] : placement) ++out[s];
  return out;
}

// Seven single-task executors dealt by the even scheduler over two slots:
// a:6700 runs 1, 3, 5, 7 and b:6700 runs 2, 4, 6.
ExecutorSlots SevenOnTwo() {
  return ScheduleTopologyEvenly(Executors(7), 2, {}, {kA0, kA1, kB0, kB1});
}

TEST(RebalancePlanTest, WithoutAPreviousPlacementItIsTheEvenScheduler) {
  const std::vector<WorkerSlot> free = {kA0, kA1, kB0, kB1, kC0};
  for (int workers = 1; workers <= 6; ++workers) {
    EXPECT_EQ(PlanRebalance(Executors(9), workers, {}, free),
              ScheduleTopologyEvenly(Executors(9), workers, {}, free))
        << workers << " workers";
  }
  EXPECT_TRUE(PlanRebalance(Executors(3), 2, {}, {}).empty());
}

TEST(RebalancePlanTest, AnUnchangedRequestChangesNothing) {
  const ExecutorSlots before = SevenOnTwo();
  ASSERT_EQ(Counts(before), (std::map<WorkerSlot, int>{{kA0, 4}, {kB0, 3}}));
  // Free slots are there, but two workers are all it asks for.
  EXPECT_EQ(PlanRebalance(Executors(7), 2, before, {kA1, kB1, kC0}), before);
  EXPECT_EQ(DiffPlacements(before, before), (PlacementDiff{.kept = 7}));
}

TEST(RebalancePlanTest, ASplitKeepsEveryOtherExecutorAndBothHalvesInTheirWorker) {
  // spout [1], identity [2-3] (one executor of two tasks), sink [4], ackers
  // [5] and [6]; identity goes from 1 executor to 2 on the same 2 workers.
  const ExecutorSlots before = {{{1, 1}, kA0}, {{2, 3}, kB0}, {{4, 4}, kA0},
                                {{5, 5}, kB0}, {{6, 6}, kA0}};
  const std::vector<ExecutorId> after = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}};
  const ExecutorSlots plan = PlanRebalance(after, 2, before, {kA1, kB1});
  const ExecutorSlots expected = {{{1, 1}, kA0}, {{2, 2}, kB0}, {{3, 3}, kB0},
                                  {{4, 4}, kA0}, {{5, 5}, kB0}, {{6, 6}, kA0}};
  EXPECT_EQ(plan, expected);
  EXPECT_EQ(DiffPlacements(before, plan), (PlacementDiff{.kept = 4, .started = 2, .stopped = 1}));
}

TEST(RebalancePlanTest, AMergedRangeGoesToTheSlotThatRanMostOfItsTasks) {
  const ExecutorSlots before = {{{1, 1}, kA0}, {{2, 2}, kB0}, {{3, 3}, kA0},
                                {{4, 4}, kB0}, {{5, 5}, kA0}};
  // 2..5 become one executor: tasks 3 and 5 ran on a, 2 and 4 on b; the
  // tie goes to the slot with fewer executors: b, where nothing stayed.
  EXPECT_EQ(PlanRebalance({{1, 1}, {2, 5}}, 2, before, {}),
            (ExecutorSlots{{{1, 1}, kA0}, {{2, 5}, kB0}}));
  // 2..4: two of its three tasks ran on b.
  EXPECT_EQ(PlanRebalance({{1, 1}, {2, 4}, {5, 5}}, 2, before, {}),
            (ExecutorSlots{{{1, 1}, kA0}, {{2, 4}, kB0}, {{5, 5}, kA0}}));
}

TEST(RebalancePlanTest, ARangeWhoseTasksRanNowhereGoesToTheLeastLoadedSlot) {
  // Tasks 3 and 4 ran on a slot that died (not in the previous placement).
  const ExecutorSlots before = {{{1, 1}, kA0}, {{2, 2}, kA0}, {{5, 5}, kB0}};
  const ExecutorSlots plan = PlanRebalance({{1, 1}, {2, 2}, {3, 4}, {5, 5}}, 2, before, {});
  EXPECT_EQ(plan.at({3, 4}), kB0);
  EXPECT_EQ(plan.at({1, 1}), kA0);
}

TEST(RebalancePlanTest, TwoToThreeWorkersStartsOneSlotAndMovesOnlyWhatBalances) {
  const ExecutorSlots before = SevenOnTwo();
  const ExecutorSlots plan = PlanRebalance(Executors(7), 3, before, {kA1, kB1, kC0});
  // 4 + 3 over three slots is 2 + 3 + 2: two moves, both from the fuller
  // slot a:6700 (its highest start tasks), to the first free slot in
  // SortSlots order.
  const ExecutorSlots expected = {{{1, 1}, kA0}, {{2, 2}, kB0}, {{3, 3}, kA0}, {{4, 4}, kB0},
                                  {{5, 5}, kA1}, {{6, 6}, kB0}, {{7, 7}, kA1}};
  EXPECT_EQ(plan, expected);
  EXPECT_EQ(DiffPlacements(before, plan), (PlacementDiff{.kept = 5, .moved = 2}));
}

TEST(RebalancePlanTest, GrowingMovesTheFewestExecutorsThatBalance) {
  // 12 executors on 2 slots (6 + 6) to 4 slots: 3 each, so 6 moves and no
  // executor moves between the two old slots.
  const ExecutorSlots before = ScheduleTopologyEvenly(Executors(12), 2, {}, {kA0, kB0});
  const ExecutorSlots plan = PlanRebalance(Executors(12), 4, before, {kA1, kB1, kC0});
  EXPECT_EQ(DiffPlacements(before, plan), (PlacementDiff{.kept = 6, .moved = 6}));
  for (const auto& [slot, n] : Counts(plan)) EXPECT_EQ(n, 3) << slot.node << ":" << slot.port;
  for (const auto& [e, slot] : plan) {
    if (slot == kA0 || slot == kB0) {
      EXPECT_EQ(before.at(e), slot);
    }
  }
}

TEST(RebalancePlanTest, GrowingMovesBoltsFirstSoTheOldWorkersOnlyLoseBolts) {
  // Spout [1], bolts [2]..[6], acker [7]: a:6700 runs 1, 3, 5, 7 and b:6700
  // runs 2, 4, 6. Without preference the acker [7] and bolt [5] would move.
  const ExecutorSlots before = SevenOnTwo();
  const std::set<ExecutorId> bolts = {{2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}};
  const ExecutorSlots plan = PlanRebalance(Executors(7), 3, before, {kA1, kB1, kC0}, bolts);
  const ExecutorSlots expected = {{{1, 1}, kA0}, {{2, 2}, kB0}, {{3, 3}, kA1}, {{4, 4}, kB0},
                                  {{5, 5}, kA1}, {{6, 6}, kB0}, {{7, 7}, kA0}};
  EXPECT_EQ(plan, expected);
  EXPECT_EQ(DiffPlacements(before, plan), (PlacementDiff{.kept = 5, .moved = 2}));
  EXPECT_EQ(PlanRebalance(Executors(7), 3, before, {kC0, kB1, kA1}, bolts), plan);
}

TEST(RebalancePlanTest, BoltsMoveFromASlotThatIsNotTheFullestWhenItHasNone) {
  // a:6700 runs spouts [1]..[4], b:6700 bolts [5]..[8]; 8 over 3 is 3 + 3 + 2.
  const ExecutorSlots before = {{{1, 1}, kA0}, {{2, 2}, kA0}, {{3, 3}, kA0}, {{4, 4}, kA0},
                                {{5, 5}, kB0}, {{6, 6}, kB0}, {{7, 7}, kB0}, {{8, 8}, kB0}};
  const std::set<ExecutorId> bolts = {{5, 5}, {6, 6}, {7, 7}, {8, 8}};
  const ExecutorSlots plan = PlanRebalance(Executors(8), 3, before, {kA1}, bolts);
  // Both bolts b can give move; the balance still needs one of a's spouts,
  // which goes to the new slot rather than to b (b only loses bolts).
  EXPECT_EQ(plan.at({7, 7}), kA1);
  EXPECT_EQ(plan.at({8, 8}), kA1);
  EXPECT_EQ(plan.at({4, 4}), kA1);
  EXPECT_EQ(Counts(plan), (std::map<WorkerSlot, int>{{kA0, 3}, {kA1, 3}, {kB0, 2}}));
  for (const auto& [e, slot] : plan) {
    if (slot != kA1) {
      EXPECT_EQ(before.at(e), slot);
    }
  }
}

TEST(RebalancePlanTest, WithoutBoltsToMoveTheBalanceStillHolds) {
  // a:6700 runs spouts and an acker only; b:6700 a single bolt it cannot give.
  const ExecutorSlots before = {{{1, 1}, kA0}, {{2, 2}, kA0}, {{3, 3}, kA0}, {{4, 4}, kB0}};
  const ExecutorSlots plan = PlanRebalance(Executors(4), 3, before, {kA1}, {{4, 4}});
  const ExecutorSlots expected = {{{1, 1}, kA0}, {{2, 2}, kA0}, {{3, 3}, kA1}, {{4, 4}, kB0}};
  EXPECT_EQ(plan, expected);
}

TEST(RebalancePlanTest, GrowingTakesOnlyTheFreeSlotsThereAre) {
  const ExecutorSlots before = SevenOnTwo();
  const ExecutorSlots plan = PlanRebalance(Executors(7), 5, before, {kC0});
  EXPECT_EQ(Counts(plan), (std::map<WorkerSlot, int>{{kA0, 2}, {kB0, 3}, {kC0, 2}}));
  EXPECT_EQ(PlanRebalance(Executors(7), 5, before, {}), before);
}

TEST(RebalancePlanTest, BalancingMovesNewRangesBeforeExecutorsThatStayed) {
  // One worker with [1] and [2-3]; [2-3] splits and a second worker is
  // asked for: the new [3] takes the new slot, [1] is not touched.
  const ExecutorSlots before = {{{1, 1}, kA0}, {{2, 3}, kA0}};
  const ExecutorSlots plan = PlanRebalance({{1, 1}, {2, 2}, {3, 3}}, 2, before, {kB0});
  EXPECT_EQ(plan, (ExecutorSlots{{{1, 1}, kA0}, {{2, 2}, kA0}, {{3, 3}, kB0}}));
  EXPECT_EQ(DiffPlacements(before, plan), (PlacementDiff{.kept = 1, .started = 2, .stopped = 1}));
}

TEST(RebalancePlanTest, ThreeToTwoWorkersGivesUpTheSlotWithFewestExecutors) {
  // Even placement over three slots: a:6700 {1, 4, 7}, b:6700 {2, 5},
  // a:6701 {3, 6}. b:6700 and a:6701 tie; a:6701 is last in SortSlots
  // order (node a runs two of the three), so a and b keep one worker each.
  const ExecutorSlots before = ScheduleTopologyEvenly(Executors(7), 3, {}, {kA0, kA1, kB0, kB1});
  ASSERT_EQ(Counts(before), (std::map<WorkerSlot, int>{{kA0, 3}, {kA1, 2}, {kB0, 2}}));
  const ExecutorSlots plan = PlanRebalance(Executors(7), 2, before, {kB1});
  // 3 goes to the least loaded b:6700, then 6 to a:6700 (a tie: first in order).
  const ExecutorSlots expected = {{{1, 1}, kA0}, {{2, 2}, kB0}, {{3, 3}, kB0}, {{4, 4}, kA0},
                                  {{5, 5}, kB0}, {{6, 6}, kA0}, {{7, 7}, kA0}};
  EXPECT_EQ(plan, expected);
  EXPECT_EQ(DiffPlacements(before, plan), (PlacementDiff{.kept = 5, .moved = 2}));
}

TEST(RebalancePlanTest, ShrinkingGivesUpTheEmptiestSlotsWhateverTheirOrder) {
  // c:6700 runs one executor, a:6700 three, b:6700 two: one slot to give up.
  const ExecutorSlots before = {{{1, 1}, kA0}, {{2, 2}, kA0}, {{3, 3}, kA0},
                                {{4, 4}, kB0}, {{5, 5}, kB0}, {{6, 6}, kC0}};
  const ExecutorSlots plan = PlanRebalance(Executors(6), 2, before, {});
  EXPECT_EQ(Counts(plan), (std::map<WorkerSlot, int>{{kA0, 3}, {kB0, 3}}));
  EXPECT_EQ(plan.at({6, 6}), kB0);
  // Down to one worker: everything on the fullest slot.
  EXPECT_EQ(Counts(PlanRebalance(Executors(6), 1, before, {})),
            (std::map<WorkerSlot, int>{{kA0, 6}}));
}

TEST(RebalancePlanTest, FourToTwoWorkersWithAMergeKeepsWhatItCan) {
  // gen [1], [2]; sink [3], [4], [5]; ackers [6], [7] on four slots; then
  // two workers and one sink executor [3-5].
  const ExecutorSlots before =
      ScheduleTopologyEvenly(Executors(7), 4, {}, {kA0, kA1, kB0, kB1});
  const std::vector<ExecutorId> after = {{1, 1}, {2, 2}, {3, 5}, {6, 6}, {7, 7}};
  const ExecutorSlots plan = PlanRebalance(after, 2, before, {});
  EXPECT_EQ(ExecutorsOf(plan), after);
  EXPECT_EQ(Counts(plan).size(), 2u);
  const PlacementDiff diff = DiffPlacements(before, plan);
  EXPECT_EQ(diff.started, 1);
  EXPECT_EQ(diff.stopped, 3);
  // The two kept slots keep what they ran; only the given-up slots' move.
  EXPECT_EQ(diff.kept + diff.moved, 4);
  for (const auto& [e, slot] : plan) {
    auto it = before.find(e);
    if (it != before.end() && Counts(plan).contains(it->second)) {
      EXPECT_EQ(slot, it->second);
    }
  }
}

TEST(RebalancePlanTest, TheSameInputsGiveTheSamePlanInAnyOrder) {
  const ExecutorSlots before = ScheduleTopologyEvenly(Executors(11), 3, {}, {kA0, kB0, kC0});
  std::vector<ExecutorId> after = {{1, 2}, {3, 3}, {4, 7}, {8, 8}, {9, 9}, {10, 11}};
  std::vector<WorkerSlot> free = {kA1, kB1, {"d", 6700}, {"d", 6701}};
  const ExecutorSlots first = PlanRebalance(after, 5, before, free);
  EXPECT_EQ(ExecutorsOf(first), after);
  EXPECT_EQ(Counts(first).size(), 5u);
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    std::shuffle(after.begin(), after.end(), rng);
    std::shuffle(free.begin(), free.end(), rng);
    EXPECT_EQ(PlanRebalance(after, 5, before, free), first);
  }
}

TEST(RebalancePlanTest, DiffCountsKeptMovedStartedAndStopped) {
  const ExecutorSlots before = {{{1, 1}, kA0}, {{2, 2}, kA0}, {{3, 4}, kB0}};
  const ExecutorSlots after = {{{1, 1}, kA0}, {{2, 2}, kB0}, {{3, 3}, kB0}, {{4, 4}, kB0}};
  EXPECT_EQ(DiffPlacements(before, after),
            (PlacementDiff{.kept = 1, .moved = 1, .started = 2, .stopped = 1}));
  EXPECT_EQ(DiffPlacements({}, after), (PlacementDiff{.started = 4}));
  EXPECT_EQ(DiffPlacements(before, {}), (PlacementDiff{.stopped = 3}));
}

}  // namespace
}  // namespace tempest::nimbus
