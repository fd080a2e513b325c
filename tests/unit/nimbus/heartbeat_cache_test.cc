// Storm's HeartbeatCache rules with a FakeClock: a beat that stops
// CHANGING kills its executors after nimbus.task.timeout.secs as measured by
// nimbus's clock, the launch grace, a fresh cache's full timeout, and
// supervisor liveness by SupervisorInfo.time_secs.

#include "nimbus/heartbeat_cache.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/fake_clock.h"

namespace tempest::nimbus {
namespace {

using std::chrono::seconds;
using tempest::testing::FakeClock;

constexpr ExecutorId kE1{1, 1};
constexpr ExecutorId kE2{2, 3};
const WorkerSlot kSlotA{"sup-a", 6700};
const WorkerSlot kSlotB{"sup-b", 6700};

class HeartbeatCacheTest : public ::testing::Test {
 protected:
  int64_t WallSecs() const { return clock_.WallMillis() / 1000; }
  // Both executors started long ago (no launch grace).
  std::vector<AssignedExecutor> Assigned(int64_t start_secs) const {
    return {AssignedExecutor{kE1, kSlotA, start_secs}, AssignedExecutor{kE2, kSlotB, start_secs}};
  }
  static BeatView Beat(const std::string& content, std::set<ExecutorId> executors) {
    return BeatView{content, std::move(executors)};
  }
  std::set<ExecutorId> Update(const std::vector<AssignedExecutor>& assigned,
                              const std::map<WorkerSlot, BeatView>& beats) {
    return cache_.UpdateTopology("t-1", assigned, beats, clock_.Now(), WallSecs());
  }

  FakeClock clock_;
  HeartbeatCache cache_{LivenessTimeouts{seconds(30), seconds(120), seconds(60)}};
};

TEST_F(HeartbeatCacheTest, ABeatThatStopsChangingKillsItsExecutorsAfterTheTimeout) {
  const auto assigned = Assigned(WallSecs() - 1000);
  int beat = 0;
  auto beats = [&](bool b_changes) {
    ++beat;
    return std::map<WorkerSlot, BeatView>{
        {kSlotA, Beat(absl::StrCat("a", beat), {kE1})},
        {kSlotB, Beat(b_changes ? absl::StrCat("b", beat) : "b-frozen", {kE2})}};
  };
  EXPECT_TRUE(Update(assigned, beats(false)).empty());
  // B's beat never changes again; A's changes every 10 s.
  for (int i = 0; i < 2; ++i) {
    clock_.Advance(seconds(10));
    EXPECT_TRUE(Update(assigned, beats(false)).empty()) << i;
  }
  clock_.Advance(seconds(9));
  EXPECT_TRUE(Update(assigned, beats(false)).empty());  // 29 s unchanged
  clock_.Advance(seconds(1));
  EXPECT_EQ(Update(assigned, beats(false)), std::set<ExecutorId>{kE2});  // 30 s
  // The beat changes again: alive again.
  clock_.Advance(seconds(1));
  EXPECT_TRUE(Update(assigned, beats(true)).empty());
}

TEST_F(HeartbeatCacheTest, WorkerWallClockIsNeverConsulted) {
  // Same content for 30 s of nimbus time = dead, even though the content
  // could claim any time at all: only change matters.
  const auto assigned = Assigned(WallSecs() - 1000);
  std::map<WorkerSlot, BeatView> beats = {{kSlotA, Beat("time_secs=9999999999", {kE1})},
                                          {kSlotB, Beat("x", {kE2})}};
  EXPECT_TRUE(Update(assigned, beats).empty());
  clock_.Advance(seconds(30));
  EXPECT_EQ(Update(assigned, beats), (std::set<ExecutorId>{kE1, kE2}));
}

TEST_F(HeartbeatCacheTest, LaunchGraceKeepsNewExecutorsAliveWithoutBeats) {
  const auto assigned = Assigned(WallSecs());
  EXPECT_TRUE(Update(assigned, {}).empty());
  clock_.Advance(seconds(119));
  EXPECT_TRUE(Update(assigned, {}).empty());  // no beat at all, but launching
  clock_.Advance(seconds(1));
  EXPECT_EQ(Update(assigned, {}), (std::set<ExecutorId>{kE1, kE2}));
}

TEST_F(HeartbeatCacheTest, AFreshCacheGivesEveryoneAFullTimeout) {
  const auto assigned = Assigned(WallSecs() - 1000);
  // No beats at all, launch long over: still alive for one full timeout
  // from when this cache first saw them (a new leader).
  EXPECT_TRUE(Update(assigned, {}).empty());
  clock_.Advance(seconds(29));
  EXPECT_TRUE(Update(assigned, {}).empty());
  clock_.Advance(seconds(1));
  EXPECT_EQ(Update(assigned, {}).size(), 2u);
  cache_.Clear();
  EXPECT_TRUE(Update(assigned, {}).empty());
}

TEST_F(HeartbeatCacheTest, ABeatCountsOnlyForExecutorsItListsAtTheirAssignedSlot) {
  const auto assigned = Assigned(WallSecs() - 1000);
  int n = 0;
  auto beats = [&] {
    ++n;
    // A's worker lists only kE1; a beat on sup-b lists kE2 but under the
    // wrong port, so it is not kE2's beat.
    return std::map<WorkerSlot, BeatView>{
        {kSlotA, Beat(absl::StrCat("a", n), {kE1, kE2})},
        {WorkerSlot{"sup-b", 6701}, Beat(absl::StrCat("b", n), {kE2})}};
  };
  EXPECT_TRUE(Update(assigned, beats()).empty());
  clock_.Advance(seconds(30));
  EXPECT_EQ(Update(assigned, beats()), std::set<ExecutorId>{kE2});
}

TEST_F(HeartbeatCacheTest, SupervisorIsDeadWhenItsTimeStopsChanging) {
  std::map<std::string, int64_t> present = {{"sup-a", 100}, {"sup-b", 100}};
  EXPECT_EQ(cache_.UpdateSupervisors(present, clock_.Now()),
            (std::set<std::string>{"sup-a", "sup-b"}));
  clock_.Advance(seconds(59));
  present["sup-a"] = 159;
  EXPECT_EQ(cache_.UpdateSupervisors(present, clock_.Now()).size(), 2u);
  clock_.Advance(seconds(1));
  EXPECT_EQ(cache_.UpdateSupervisors(present, clock_.Now()), std::set<std::string>{"sup-a"});
  // A node that is gone is simply not alive; coming back it starts afresh.
  present.erase("sup-a");
  EXPECT_TRUE(cache_.UpdateSupervisors(present, clock_.Now()).empty());
  present["sup-a"] = 159;
  EXPECT_EQ(cache_.UpdateSupervisors(present, clock_.Now()), std::set<std::string>{"sup-a"});
}

}  // namespace
}  // namespace tempest::nimbus
