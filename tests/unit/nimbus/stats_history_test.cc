// StatsHistory: Storm's windows from all-time executor counts, and totals
// that never go backwards when an executor starts counting again.

#include "nimbus/stats_history.h"

#include "gtest/gtest.h"

namespace tempest::nimbus {
namespace {

v1::ExecutorStats Bolt(int start, int end, int64_t executed) {
  v1::ExecutorStats e;
  e.set_component("sink");
  e.set_start_task(start);
  e.set_end_task(end);
  v1::StreamStats* in = e.add_inputs();
  in->set_component("gen");
  in->set_stream("default");
  in->set_executed(executed);
  in->set_acked(executed);
  return e;
}

int64_t Executed(const std::vector<v1::ExecutorStats>& stats) {
  int64_t sum = 0;
  for (const v1::ExecutorStats& e : stats) {
    for (const v1::StreamStats& s : e.inputs()) sum += s.executed();
  }
  return sum;
}

const std::vector<StatsHistory::Key> kOneExecutor = {{"sink", 1, 2}};

TEST(StatsHistoryTest, WindowsSubtractTheSnapshotBeforeTheWindowBegan) {
  StatsHistory h;
  // Launched at 0, watched from t=1000; 10 tuples a second.
  for (int64_t t = 1000; t <= 1000 + 900; t += 10) {
    h.Record("topo", t, {Bolt(1, 2, t * 10)}, kOneExecutor);
  }
  const int64_t now = 1900;
  EXPECT_EQ(Executed(h.Window("topo", 0, now, 0)), 19000) << "all time";
  EXPECT_EQ(Executed(h.Window("topo", 600, now, 0)), 6000) << "10 minutes";
  // Watched for 900 s of a 1900 s life: a 30 min window starts at the
  // oldest snapshot, not at zero.
  EXPECT_EQ(Executed(h.Window("topo", 1800, now, 0)), 9000);
  // A topology younger than the window: all of its life.
  EXPECT_EQ(Executed(h.Window("topo", 10800, now, 0)), 19000);
}

TEST(StatsHistoryTest, AnExecutorCountingAgainFromZeroKeepsItsEarlierCounts) {
  StatsHistory h;
  h.Record("topo", 100, {Bolt(1, 2, 500)}, kOneExecutor);
  // Moved to another slot: its new worker starts from zero.
  h.Record("topo", 110, {Bolt(1, 2, 30)}, kOneExecutor);
  EXPECT_EQ(Executed(h.Window("topo", 0, 110, 0)), 530);
  h.Record("topo", 120, {Bolt(1, 2, 80)}, kOneExecutor);
  EXPECT_EQ(Executed(h.Window("topo", 0, 120, 0)), 580) << "never backwards";
}

TEST(StatsHistoryTest, ExecutorsOfAnOlderLayoutStayInTheTotals) {
  StatsHistory h;
  h.Record("topo", 100, {Bolt(1, 2, 500)}, kOneExecutor);
  // Rebalanced into two executors of one task each.
  const std::vector<StatsHistory::Key> split = {{"sink", 1, 1}, {"sink", 2, 2}};
  h.Record("topo", 110, {Bolt(1, 1, 5), Bolt(2, 2, 7)}, split);
  const std::vector<v1::ExecutorStats> all = h.Window("topo", 0, 110, 0);
  EXPECT_EQ(all.size(), 3u);
  EXPECT_EQ(Executed(all), 512);
}

TEST(StatsHistoryTest, ManySnapshotsAreThinnedWithAge) {
  StatsHistory h;
  for (int64_t t = 0; t <= 2 * 86400; t += 5) {
    h.Record("topo", t, {Bolt(1, 2, t)}, kOneExecutor);
  }
  const int64_t now = 2 * 86400;
  // Windows stay right after a day of thinning (within the spacing kept
  // at each age: 10 s, 2 min, 20 min).
  EXPECT_NEAR(Executed(h.Window("topo", 600, now, 0)), 600, 15);
  EXPECT_NEAR(Executed(h.Window("topo", 10800, now, 0)), 10800, 130);
  EXPECT_NEAR(Executed(h.Window("topo", 86400, now, 0)), 86400, 1300);
}

TEST(StatsHistoryTest, RetainForgetsRemovedTopologies) {
  StatsHistory h;
  h.Record("a", 100, {Bolt(1, 2, 5)}, kOneExecutor);
  h.Record("b", 100, {Bolt(1, 2, 5)}, kOneExecutor);
  h.Retain({"b"});
  EXPECT_TRUE(h.Window("a", 0, 100, 0).empty());
  EXPECT_EQ(Executed(h.Window("b", 0, 100, 0)), 5);
}

TEST(StatsHistoryTest, WindowParameterTakesStormsValues) {
  EXPECT_EQ(ParseStatsWindow(""), 0);
  EXPECT_EQ(ParseStatsWindow(":all-time"), 0);
  EXPECT_EQ(ParseStatsWindow("600"), 600);
  EXPECT_EQ(ParseStatsWindow("86400"), 86400);
  EXPECT_FALSE(ParseStatsWindow("601").has_value());
  EXPECT_FALSE(ParseStatsWindow("-1").has_value());
  EXPECT_FALSE(ParseStatsWindow("1e3").has_value());
  EXPECT_EQ(StatsWindowPretty(10800), "3h 0m 0s");
  EXPECT_EQ(StatsWindowName(0), ":all-time");
}

}  // namespace
}  // namespace tempest::nimbus
