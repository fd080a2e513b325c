#include "supervisor/slot_plan.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tempest::supervisor {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Kind = SlotAction::Kind;

void AddExecutor(v1::Assignment& a, int start, int end, const std::string& node, int port) {
  v1::ExecutorAssignment* e = a.add_executors();
  e->set_start_task(start);
  e->set_end_task(end);
  e->set_node(node);
  e->set_port(port);
}

WorkerRecord Running(const std::string& topology, std::vector<ExecutorSpan> executors,
                     int64_t launched_at_ms) {
  WorkerRecord w;
  w.pid = 4242;
  w.topology_id = topology;
  w.executors = std::move(executors);
  w.launched_at_ms = launched_at_ms;
  return w;
}

TEST(ComputeDesiredSlotsTest, PicksThisSupervisorsExecutorsPerPort) {
  v1::Assignment a;
  AddExecutor(a, 3, 4, "sup-a", 6701);
  AddExecutor(a, 1, 2, "sup-a", 6701);
  AddExecutor(a, 5, 5, "sup-b", 6700);  // another supervisor
  AddExecutor(a, 6, 6, "sup-a", 6700);
  v1::Assignment b;
  AddExecutor(b, 1, 1, "sup-a", 6702);
  std::vector<std::string> problems;
  DesiredSlots d =
      ComputeDesiredSlots({{"t1", a}, {"t2", b}}, "sup-a", {6700, 6701, 6702, 6703}, &problems);
  EXPECT_THAT(problems, IsEmpty());
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[6700], (DesiredSlot{"t1", {{6, 6}}}));
  EXPECT_EQ(d[6701], (DesiredSlot{"t1", {{1, 2}, {3, 4}}}));  // sorted
  EXPECT_EQ(d[6702], (DesiredSlot{"t2", {{1, 1}}}));
  EXPECT_THAT(ComputeDesiredSlots({{"t1", a}}, "sup-c", {6700}), IsEmpty());
}

TEST(ComputeDesiredSlotsTest, ReportsForeignPortsAndConflicts) {
  v1::Assignment a;
  AddExecutor(a, 1, 1, "sup-a", 9999);  // not one of our slots
  AddExecutor(a, 2, 2, "sup-a", 9999);
  AddExecutor(a, 3, 3, "sup-a", 6700);
  v1::Assignment b;
  AddExecutor(b, 1, 1, "sup-a", 6700);  // the same port as t1
  std::vector<std::string> problems;
  DesiredSlots d = ComputeDesiredSlots({{"t2", b}, {"t1", a}}, "sup-a", {6700}, &problems);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[6700], (DesiredSlot{"t1", {{3, 3}}}));  // the lower topology id wins
  ASSERT_EQ(problems.size(), 2u);                     // one line per foreign port, one per conflict
  EXPECT_THAT(problems[0], HasSubstr("port 9999"));
  EXPECT_THAT(problems[1], HasSubstr("assigned to both t1 and t2"));
}

TEST(PlanSlotsTest, LaunchesDesiredSlotsWithoutWorkers) {
  std::map<int, SlotState> slots;
  DesiredSlots d{{6700, {"t1", {{1, 2}}}}};
  EXPECT_THAT(PlanSlots(d, slots, {}, 1000),
              ElementsAre(SlotAction{Kind::kLaunch, 6700, {"t1", {{1, 2}}}, {}}));
}

TEST(PlanSlotsTest, WaitsForTheBackOffBeforeRelaunching) {
  std::map<int, SlotState> slots;
  slots[6700].relaunch_not_before_ms = 5000;
  DesiredSlots d{{6700, {"t1", {{1, 2}}}}};
  EXPECT_THAT(PlanSlots(d, slots, {}, 4999), IsEmpty());
  EXPECT_EQ(PlanSlots(d, slots, {}, 5000).size(), 1u);
}

TEST(PlanSlotsTest, KeepsAHealthyMatchingWorker) {
  std::map<int, SlotState> slots;
  slots[6700].worker = Running("t1", {{1, 2}}, 0);
  slots[6700].worker->last_beat_ms = 9000;
  DesiredSlots d{{6700, {"t1", {{1, 2}}}}};
  EXPECT_THAT(PlanSlots(d, slots, {}, 10'000), IsEmpty());
}

TEST(PlanSlotsTest, StopsAWorkerWhoseHeartbeatIsStale) {
  PlanTimes t;
  t.worker_timeout_ms = 30'000;
  std::map<int, SlotState> slots;
  slots[6700].worker = Running("t1", {{1, 2}}, 0);
  slots[6700].worker->last_beat_ms = 10'000;
  DesiredSlots d{{6700, {"t1", {{1, 2}}}}};
  EXPECT_THAT(PlanSlots(d, slots, t, 40'000), IsEmpty());  // exactly the timeout: still fine
  EXPECT_THAT(PlanSlots(d, slots, t, 40'001),
              ElementsAre(SlotAction{Kind::kStop, 6700, {}, StopReason::kHeartbeatTimeout}));
}

TEST(PlanSlotsTest, StopsAWorkerThatNeverBeatWithinTheStartTimeout) {
  PlanTimes t;
  t.worker_start_timeout_ms = 120'000;
  t.worker_timeout_ms = 30'000;
  std::map<int, SlotState> slots;
  slots[6700].worker = Running("t1", {{1, 2}}, 1000);
  DesiredSlots d{{6700, {"t1", {{1, 2}}}}};
  // Without a first beat only the (longer) start timeout applies.
  EXPECT_THAT(PlanSlots(d, slots, t, 100'000), IsEmpty());
  EXPECT_THAT(PlanSlots(d, slots, t, 121'001),
              ElementsAre(SlotAction{Kind::kStop, 6700, {}, StopReason::kStartTimeout}));
}

TEST(PlanSlotsTest, GivesAnUnassignedWorkerTheExitGraceThenStopsIt) {
  PlanTimes t;
  t.exit_grace_ms = 5000;
  std::map<int, SlotState> slots;
  slots[6700].worker = Running("t1", {{1, 2}}, 0);
  slots[6700].worker->last_beat_ms = 100'000;
  DesiredSlots none;
  EXPECT_THAT(PlanSlots(none, slots, t, 100'000), IsEmpty());
  EXPECT_EQ(slots[6700].worker->mismatch_since_ms, 100'000);
  EXPECT_THAT(PlanSlots(none, slots, t, 104'999), IsEmpty());
  EXPECT_THAT(PlanSlots(none, slots, t, 105'000),
              ElementsAre(SlotAction{Kind::kStop, 6700, {}, StopReason::kUnassigned}));
}

TEST(PlanSlotsTest, ChangedExecutorsOrTopologyCountAsUnassigned) {
  PlanTimes t;
  t.exit_grace_ms = 0;
  std::map<int, SlotState> slots;
  slots[6700].worker = Running("t1", {{1, 2}}, 0);
  slots[6700].worker->last_beat_ms = 1;
  slots[6701].worker = Running("t1", {{3, 3}}, 0);
  slots[6701].worker->last_beat_ms = 1;
  DesiredSlots d{{6700, {"t1", {{1, 1}, {2, 2}}}}, {6701, {"t2", {{3, 3}}}}};
  EXPECT_THAT(PlanSlots(d, slots, t, 10),
              ElementsAre(SlotAction{Kind::kStop, 6700, {}, StopReason::kUnassigned},
                          SlotAction{Kind::kStop, 6701, {}, StopReason::kUnassigned}));
}

TEST(PlanSlotsTest, AMismatchThatHealsResetsTheGrace) {
  PlanTimes t;
  t.exit_grace_ms = 5000;
  std::map<int, SlotState> slots;
  slots[6700].worker = Running("t1", {{1, 2}}, 0);
  slots[6700].worker->last_beat_ms = 1000;
  DesiredSlots d{{6700, {"t1", {{1, 2}}}}};
  EXPECT_THAT(PlanSlots({}, slots, t, 1000), IsEmpty());
  EXPECT_THAT(PlanSlots(d, slots, t, 2000), IsEmpty());
  EXPECT_EQ(slots[6700].worker->mismatch_since_ms, 0);
  EXPECT_THAT(PlanSlots({}, slots, t, 6000), IsEmpty());  // a new grace starts at 6000
}

TEST(PlanSlotsTest, AnAdoptedWorkerMatchesOnTheTopologyAlone) {
  std::map<int, SlotState> slots;
  WorkerRecord w = Running("t1", {}, 0);
  w.executors.reset();
  w.adopted = true;
  w.last_beat_ms = 1000;
  slots[6700].worker = w;
  DesiredSlots d{{6700, {"t1", {{1, 9}}}}};
  EXPECT_THAT(PlanSlots(d, slots, {}, 2000), IsEmpty());
  EXPECT_TRUE(WorkerMatches(w, &d[6700]));
  EXPECT_FALSE(WorkerMatches(w, nullptr));
}

TEST(PlanSlotsTest, ForceKillsAStoppingWorkerOnceAfterTheShutdownWait) {
  PlanTimes t;
  t.shutdown_wait_ms = 3000;
  std::map<int, SlotState> slots;
  slots[6700].worker = Running("t1", {{1, 2}}, 0);
  slots[6700].worker->stop_sent_ms = 10'000;
  slots[6700].worker->stop_reason = StopReason::kHeartbeatTimeout;
  DesiredSlots d{{6700, {"t1", {{1, 2}}}}};
  EXPECT_THAT(PlanSlots(d, slots, t, 12'999), IsEmpty());  // no relaunch while it stops
  EXPECT_THAT(PlanSlots(d, slots, t, 13'000),
              ElementsAre(SlotAction{Kind::kForceKill, 6700, {}, StopReason::kHeartbeatTimeout}));
  slots[6700].worker->force_killed = true;
  EXPECT_THAT(PlanSlots(d, slots, t, 14'000), IsEmpty());
}

TEST(RelaunchDelayTest, FirstRestartIsImmediateThenDoublesUpToTheCap) {
  EXPECT_EQ(RelaunchDelayMs(1), 0);
  EXPECT_EQ(RelaunchDelayMs(2), 1000);
  EXPECT_EQ(RelaunchDelayMs(3), 2000);
  EXPECT_EQ(RelaunchDelayMs(4), 4000);
  EXPECT_EQ(RelaunchDelayMs(6), 16'000);
  EXPECT_EQ(RelaunchDelayMs(7), 30'000);
  EXPECT_EQ(RelaunchDelayMs(1000), 30'000);
  EXPECT_EQ(RelaunchDelayMs(5, 3000), 3000);
}

TEST(RecordWorkerExitTest, ACrashWhileAssignedIsAFailureWithBackOff) {
  SlotState slot;
  DesiredSlot d{"t1", {{1, 2}}};
  slot.worker = Running("t1", {{1, 2}}, 0);
  EXPECT_TRUE(RecordWorkerExit(slot, &d, 1000));
  EXPECT_FALSE(slot.worker.has_value());
  EXPECT_EQ(slot.consecutive_failures, 1);
  EXPECT_EQ(slot.relaunch_not_before_ms, 1000);  // at once
  slot.worker = Running("t1", {{1, 2}}, 1000);
  EXPECT_TRUE(RecordWorkerExit(slot, &d, 2000));
  EXPECT_EQ(slot.consecutive_failures, 2);
  EXPECT_EQ(slot.relaunch_not_before_ms, 3000);
  // After a long healthy run the count starts over.
  slot.worker = Running("t1", {{1, 2}}, 3000);
  EXPECT_TRUE(RecordWorkerExit(slot, &d, 3000 + 31'000, 30'000));
  EXPECT_EQ(slot.consecutive_failures, 1);
  EXPECT_EQ(slot.relaunch_not_before_ms, 34'000);
}

TEST(RecordWorkerExitTest, LeavingAChangedSlotOrAStopWeAskedForIsNoFailure) {
  SlotState slot;
  slot.consecutive_failures = 3;
  DesiredSlot other{"t2", {{1, 2}}};
  slot.worker = Running("t1", {{1, 2}}, 0);
  EXPECT_FALSE(RecordWorkerExit(slot, &other, 1000));
  EXPECT_EQ(slot.consecutive_failures, 0);
  EXPECT_EQ(slot.relaunch_not_before_ms, 0);

  DesiredSlot same{"t1", {{1, 2}}};
  slot.worker = Running("t1", {{1, 2}}, 0);
  slot.worker->stop_sent_ms = 500;
  slot.worker->stop_reason = StopReason::kUnassigned;
  EXPECT_FALSE(RecordWorkerExit(slot, &same, 1000));

  // A stop for a heartbeat timeout is the worker's failure.
  slot.worker = Running("t1", {{1, 2}}, 0);
  slot.worker->stop_sent_ms = 500;
  slot.worker->stop_reason = StopReason::kHeartbeatTimeout;
  EXPECT_TRUE(RecordWorkerExit(slot, &same, 1000));
  EXPECT_EQ(slot.consecutive_failures, 1);
}

}  // namespace
}  // namespace tempest::supervisor
