// Storm's even scheduler (EvenScheduler.sortSlots / scheduleTopology and the
// mkAssignments pass around it) as documented in storm-server.

#include "nimbus/even_scheduler.h"

#include <set>

#include "gtest/gtest.h"
#include "nimbus/rebalance_plan.h"

namespace tempest::nimbus {
namespace {

std::vector<ExecutorId> Executors(int n) {
  std::vector<ExecutorId> out;
  for (int i = 1; i <= n; ++i) out.push_back(ExecutorId{i, i});
  return out;
}

TopologySchedulingInput Topo(std::string id, std::vector<ExecutorId> executors, int workers,
                             ExecutorSlots current = {}) {
  TopologySchedulingInput t;
  t.id = std::move(id);
  t.executors = std::move(executors);
  t.num_workers = workers;
  t.current = std::move(current);
  return t;
}

std::set<WorkerSlot> SlotsOf(const ExecutorSlots& a) {
  std::set<WorkerSlot> out;
  for (const auto& [e, s] : a) out.insert(s);
  return out;
}

// The example in EvenScheduler.sortSlots's own comment.
TEST(EvenSchedulerTest, SortSlotsInterleavesNodesWithMostFreeSlotsFirst) {
  std::vector<WorkerSlot> slots = {
      {"supervisor1", 6700}, {"supervisor1", 6701}, {"supervisor2", 6700},
      {"supervisor2", 6701}, {"supervisor2", 6702}, {"supervisor3", 6700},
      {"supervisor3", 6703}, {"supervisor3", 6702}, {"supervisor3", 6701}};
  const std::vector<WorkerSlot> expected = {
      {"supervisor3", 6700}, {"supervisor2", 6700}, {"supervisor1", 6700},
      {"supervisor3", 6701}, {"supervisor2", 6701}, {"supervisor1", 6701},
      {"supervisor3", 6702}, {"supervisor2", 6702}, {"supervisor3", 6703}};
  EXPECT_EQ(SortSlots(slots), expected);
}

TEST(EvenSchedulerTest, SortSlotsKeepsNodeIdOrderBetweenEqualNodes) {
  std::vector<WorkerSlot> slots = {{"b", 6701}, {"a", 6701}, {"b", 6700}, {"a", 6700}};
  const std::vector<WorkerSlot> expected = {{"a", 6700}, {"b", 6700}, {"a", 6701}, {"b", 6701}};
  EXPECT_EQ(SortSlots(slots), expected);
  EXPECT_TRUE(SortSlots({}).empty());
}

TEST(EvenSchedulerTest, DealsExecutorsRoundRobinOverTopologyWorkersSlots) {
  // Two supervisors with two slots each, two workers: one worker per
  // supervisor (interleaving), executors alternate in start-task order.
  const std::vector<WorkerSlot> free = {{"a", 6700}, {"a", 6701}, {"b", 6700}, {"b", 6701}};
  ExecutorSlots a = ScheduleTopologyEvenly(Executors(5), 2, {}, free);
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a.at({1, 1}), (WorkerSlot{"a", 6700}));
  EXPECT_EQ(a.at({2, 2}), (WorkerSlot{"b", 6700}));
  EXPECT_EQ(a.at({3, 3}), (WorkerSlot{"a", 6700}));
  EXPECT_EQ(a.at({4, 4}), (WorkerSlot{"b", 6700}));
  EXPECT_EQ(a.at({5, 5}), (WorkerSlot{"a", 6700}));
}

TEST(EvenSchedulerTest, ExecutorsAreSortedByStartTaskBeforeDealing) {
  const std::vector<ExecutorId> executors = {{5, 6}, {1, 2}, {3, 4}};
  ExecutorSlots a = ScheduleTopologyEvenly(executors, 3, {}, {{"a", 1}, {"b", 1}, {"c", 1}});
  EXPECT_EQ(a.at({1, 2}), (WorkerSlot{"a", 1}));
  EXPECT_EQ(a.at({3, 4}), (WorkerSlot{"b", 1}));
  EXPECT_EQ(a.at({5, 6}), (WorkerSlot{"c", 1}));
}

TEST(EvenSchedulerTest, UsesFewerWorkersWhenFewerSlotsAreFree) {
  ExecutorSlots a = ScheduleTopologyEvenly(Executors(4), 8, {}, {{"a", 6700}, {"a", 6701}});
  EXPECT_EQ(a.size(), 4u);
  EXPECT_EQ(SlotsOf(a).size(), 2u);
}

TEST(EvenSchedulerTest, NoFreeSlotLeavesEverythingUnassigned) {
  EXPECT_TRUE(ScheduleTopologyEvenly(Executors(3), 2, {}, {}).empty());
}

TEST(EvenSchedulerTest, AliveExecutorsStayAndOnlyTheRestMoveToNewSlots) {
  // Executors 1 and 3 still run on a:6700; 2 and 4 lost their slot.
  const ExecutorSlots alive = {{{1, 1}, {"a", 6700}}, {{3, 3}, {"a", 6700}}};
  ExecutorSlots a =
      ScheduleTopologyEvenly(Executors(4), 2, alive, {{"c", 6700}, {"c", 6701}});
  EXPECT_EQ(a.at({1, 1}), (WorkerSlot{"a", 6700}));
  EXPECT_EQ(a.at({3, 3}), (WorkerSlot{"a", 6700}));
  // min(2 workers, 1 alive + 2 free) - 1 alive = one new slot.
  EXPECT_EQ(a.at({2, 2}), (WorkerSlot{"c", 6700}));
  EXPECT_EQ(a.at({4, 4}), (WorkerSlot{"c", 6700}));
}

TEST(EvenSchedulerTest, ClusterWithoutSupervisorsAssignsNothing) {
  TopologySchedulingInput t = Topo("t-1-1", Executors(3), 1);
  EXPECT_TRUE(ScheduleCluster({t}, {}).empty());
}

TEST(EvenSchedulerTest, ClusterSchedulesTopologiesInIdOrderOverRemainingSlots) {
  TopologySchedulingInput first = Topo("a-1-1", Executors(2), 1);
  TopologySchedulingInput second = Topo("b-2-1", Executors(2), 2);
  const std::vector<SupervisorSlots> supervisors = {{"s1", {6700, 6701}}, {"s2", {6700}}};
  auto changed = ScheduleCluster({second, first}, supervisors);
  ASSERT_EQ(changed.size(), 2u);
  // a-1-1 goes first and takes the first sorted slot: s1 has more free slots.
  EXPECT_EQ(SlotsOf(changed["a-1-1"]), (std::set<WorkerSlot>{{"s1", 6700}}));
  EXPECT_EQ(SlotsOf(changed["b-2-1"]), (std::set<WorkerSlot>{{"s1", 6701}, {"s2", 6700}}));
}

TEST(EvenSchedulerTest, ClusterLeavesCompleteAssignmentsAloneAndMovesDeadOnes) {
  const ExecutorSlots on_s1 = {{{1, 1}, {"s1", 6700}}, {{2, 2}, {"s1", 6700}}};
  TopologySchedulingInput t = Topo("t-1-1", Executors(2), 1, on_s1);
  EXPECT_TRUE(ScheduleCluster({t}, {{"s1", {6700}}, {"s2", {6700}}}).empty());
  // s1 died: everything moves to s2.
  auto changed = ScheduleCluster({t}, {{"s2", {6700}}});
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(SlotsOf(changed["t-1-1"]), (std::set<WorkerSlot>{{"s2", 6700}}));
}

TEST(EvenSchedulerTest, KilledTopologyKeepsItsSlotsAndIsNeverRescheduled) {
  TopologySchedulingInput killed = Topo("a-1-1", Executors(1), 1, {{{1, 1}, {"s1", 6700}}});
  killed.schedulable = false;
  TopologySchedulingInput fresh = Topo("b-1-1", Executors(1), 1);
  auto changed = ScheduleCluster({killed, fresh}, {{"s1", {6700, 6701}}});
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(SlotsOf(changed["b-1-1"]), (std::set<WorkerSlot>{{"s1", 6701}}));
}

TEST(EvenSchedulerTest, RebalancedTopologyKeepsItsSlotsAndIsPlannedAsAChange) {
  // Two workers, 1 3 on s1 and 2 4 on s2; a rebalance to three workers.
  const ExecutorSlots before = {{{1, 1}, {"s1", 6700}}, {{2, 2}, {"s2", 6700}},
                                {{3, 3}, {"s1", 6700}}, {{4, 4}, {"s2", 6700}}};
  TopologySchedulingInput t = Topo("t-1-1", Executors(4), 3, before);
  t.rebalanced = true;
  const std::vector<SupervisorSlots> supervisors = {{"s1", {6700, 6701}}, {"s2", {6700, 6701}}};
  auto changed = ScheduleCluster({t}, supervisors);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed["t-1-1"], PlanRebalance(Executors(4), 3, before, {{"s1", 6701}, {"s2", 6701}}));
  EXPECT_EQ(DiffPlacements(before, changed["t-1-1"]), (PlacementDiff{.kept = 3, .moved = 1}));
  // An unchanged rebalance changes nothing.
  t.num_workers = 2;
  EXPECT_TRUE(ScheduleCluster({t}, supervisors).empty());
}

TEST(EvenSchedulerTest, RebalancedTopologysNewRangesStayWithTheirTasks) {
  const ExecutorSlots before = {{{1, 1}, {"s1", 6700}}, {{2, 3}, {"s2", 6700}}};
  TopologySchedulingInput t = Topo("t-1-1", {{1, 1}, {2, 2}, {3, 3}}, 2, before);
  t.rebalanced = true;
  // Another topology waits for a slot: the rebalance takes none of them.
  TopologySchedulingInput other = Topo("u-1-1", Executors(1), 1);
  auto changed = ScheduleCluster({t, other}, {{"s1", {6700, 6701}}, {"s2", {6700}}});
  const ExecutorSlots expected = {
      {{1, 1}, {"s1", 6700}}, {{2, 2}, {"s2", 6700}}, {{3, 3}, {"s2", 6700}}};
  EXPECT_EQ(changed["t-1-1"], expected);
  EXPECT_EQ(SlotsOf(changed["u-1-1"]), (std::set<WorkerSlot>{{"s1", 6701}}));
}

TEST(EvenSchedulerTest, StoredRangesTheTopologyNoLongerHasArePlannedAsARebalance) {
  // A leader applied a rebalance that split [2-3] and died before writing
  // the assignment: the next leader does not know it rebalanced, but the
  // stored ranges tell it, and the split stays in its worker instead of
  // waiting for a free slot.
  const ExecutorSlots before = {{{1, 1}, {"s1", 6700}}, {{2, 3}, {"s2", 6700}}};
  TopologySchedulingInput t = Topo("t-1-1", {{1, 1}, {2, 2}, {3, 3}}, 2, before);
  auto changed = ScheduleCluster({t}, {{"s1", {6700}}, {"s2", {6700}}});
  const ExecutorSlots expected = {
      {{1, 1}, {"s1", 6700}}, {{2, 2}, {"s2", 6700}}, {{3, 3}, {"s2", 6700}}};
  EXPECT_EQ(changed["t-1-1"], expected);
}

TEST(EvenSchedulerTest, RebalancedTopologyOnADeadSlotMovesOnlyThoseExecutors) {
  const ExecutorSlots before = {{{1, 1}, {"s1", 6700}}, {{2, 2}, {"s2", 6700}},
                                {{3, 3}, {"s1", 6700}}, {{4, 4}, {"s2", 6700}}};
  TopologySchedulingInput t = Topo("t-1-1", Executors(4), 2, before);
  t.rebalanced = true;
  // s2 is gone: its executors go to a new slot, s1's stay.
  auto changed = ScheduleCluster({t}, {{"s1", {6700}}, {"s3", {6700}}});
  const ExecutorSlots expected = {{{1, 1}, {"s1", 6700}}, {{2, 2}, {"s3", 6700}},
                                  {{3, 3}, {"s1", 6700}}, {{4, 4}, {"s3", 6700}}};
  EXPECT_EQ(changed["t-1-1"], expected);
}

}  // namespace
}  // namespace tempest::nimbus
