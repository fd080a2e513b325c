// `tempest monitor`'s arithmetic and text: samples read from component
// pages, deltas and rates between polls, and rows that line up under the
// header.

#include "cli/monitor_table.h"

#include <string>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tempest::cli {
namespace {

using json = nlohmann::json;

json SpoutPage() {
  return json::parse(R"({
    "id": "gen", "componentType": "spout", "executors": 2,
    "outputStats": [
      {"stream": "default", "emitted": 1200, "transferred": 1100, "acked": 900, "failed": 3},
      {"stream": "errors", "emitted": 7, "transferred": 7, "acked": 0, "failed": 0}
    ]})");
}

json BoltPage() {
  return json::parse(R"({
    "id": "sink", "componentType": "bolt", "executors": 1,
    "outputStats": [
      {"stream": "default", "emitted": 500, "transferred": 0, "acked": 0, "failed": 0}
    ],
    "inputStats": [
      {"component": "gen", "stream": "default", "executed": 510, "acked": 505, "failed": 5},
      {"component": "other", "stream": "s2", "executed": 10, "acked": 10, "failed": 0}
    ]})");
}

TEST(MonitorWatchTest, ParsesStormsTwoWatchItems) {
  EXPECT_EQ(ParseMonitorWatch("emitted"), MonitorWatch::kEmitted);
  EXPECT_EQ(ParseMonitorWatch("transferred"), MonitorWatch::kTransferred);
  EXPECT_EQ(ParseMonitorWatch("acked"), std::nullopt);
  EXPECT_EQ(ParseMonitorWatch(""), std::nullopt);
  EXPECT_EQ(MonitorWatchName(MonitorWatch::kTransferred), "transferred");
}

TEST(ComponentPagePathTest, AsksForAllTimeCountsAndEncodesIds) {
  EXPECT_EQ(ComponentPagePath("demo-1-1700000000", "sink"),
            "/api/v1/topology/demo-1-1700000000/component/sink?window=:all-time");
  EXPECT_EQ(ComponentPagePath("t-1", "my bolt/2"),
            "/api/v1/topology/t-1/component/my%20bolt%2F2?window=:all-time");
}

TEST(MonitorSampleFromPageTest, SpoutTakesTheStreamsRowForEverything) {
  absl::StatusOr<MonitorSample> s =
      MonitorSampleFromPage(SpoutPage(), "gen", "default", MonitorWatch::kEmitted);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->watched, 1200);
  EXPECT_EQ(s->acked, 900);
  EXPECT_EQ(s->failed, 3);
  s = MonitorSampleFromPage(SpoutPage(), "gen", "default", MonitorWatch::kTransferred);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->watched, 1100);
  s = MonitorSampleFromPage(SpoutPage(), "gen", "errors", MonitorWatch::kEmitted);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->watched, 7);
  EXPECT_EQ(s->acked, 0);
}

TEST(MonitorSampleFromPageTest, BoltAcksAndFailsWhatItReceivesOnAnyInputStream) {
  absl::StatusOr<MonitorSample> s =
      MonitorSampleFromPage(BoltPage(), "sink", "default", MonitorWatch::kEmitted);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->watched, 500);
  EXPECT_EQ(s->acked, 515);
  EXPECT_EQ(s->failed, 5);
}

TEST(MonitorSampleFromPageTest, UnknownStreamListsTheStreamsItEmitsOn) {
  absl::StatusOr<MonitorSample> s =
      MonitorSampleFromPage(SpoutPage(), "gen", "nope", MonitorWatch::kEmitted);
  ASSERT_TRUE(absl::IsNotFound(s.status())) << s.status();
  EXPECT_EQ(s.status().message(),
            "component 'gen' has no output stream 'nope'; it emits on: default, errors "
            "(-s STREAM)");
}

TEST(MonitorSampleFromPageTest, NothingEmittedYetIsZeros) {
  const json page = {{"componentType", "bolt"}, {"outputStats", json::array()}};
  absl::StatusOr<MonitorSample> s =
      MonitorSampleFromPage(page, "sink", "anything", MonitorWatch::kEmitted);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->watched, 0);
  EXPECT_EQ(s->acked, 0);
  EXPECT_EQ(s->failed, 0);
}

TEST(MonitorSampleFromPageTest, MalformedPagesAreErrorsNotCrashes) {
  EXPECT_TRUE(absl::IsDataLoss(
      MonitorSampleFromPage(json::array(), "c", "default", MonitorWatch::kEmitted).status()));
  // A nimbus without per-stream counts.
  EXPECT_TRUE(absl::IsFailedPrecondition(
      MonitorSampleFromPage(json{{"id", "c"}}, "c", "default", MonitorWatch::kEmitted).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(
      MonitorSampleFromPage(json{{"outputStats", "x"}}, "c", "default", MonitorWatch::kEmitted)
          .status()));
  // Wrongly typed fields count as absent; digit strings are counts.
  const json odd = json::parse(R"({
    "componentType": 7,
    "outputStats": [3, {"stream": 5}, {"stream": "default", "emitted": "42", "acked": [1]}],
    "inputStats": {"acked": 9}})");
  absl::StatusOr<MonitorSample> s =
      MonitorSampleFromPage(odd, "c", "default", MonitorWatch::kEmitted);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->watched, 42);
  EXPECT_EQ(s->acked, 0);
}

TEST(ComputeMonitorIntervalTest, DeltaAndRatesPerSecond) {
  const MonitorInterval i =
      ComputeMonitorInterval({1000, 800, 2}, {1410, 1200, 6}, absl::Milliseconds(4100));
  EXPECT_FALSE(i.restarted);
  EXPECT_EQ(i.elapsed_ms, 4100);
  EXPECT_EQ(i.delta, 410);
  EXPECT_DOUBLE_EQ(i.rate, 100.0);
  EXPECT_NEAR(i.acked_rate, 97.56, 0.01);
  EXPECT_NEAR(i.failed_rate, 0.9756, 0.0001);
}

TEST(ComputeMonitorIntervalTest, NoTimeMeansNoRate) {
  const MonitorInterval i = ComputeMonitorInterval({0, 0, 0}, {5, 5, 0}, absl::ZeroDuration());
  EXPECT_EQ(i.delta, 5);
  EXPECT_EQ(i.rate, 0.0);
  EXPECT_EQ(i.acked_rate, 0.0);
}

TEST(ComputeMonitorIntervalTest, ACountThatGoesDownIsARestartNotANegativeRate) {
  EXPECT_TRUE(ComputeMonitorInterval({100, 0, 0}, {40, 0, 0}, absl::Seconds(1)).restarted);
  EXPECT_TRUE(ComputeMonitorInterval({100, 50, 0}, {140, 10, 0}, absl::Seconds(1)).restarted);
  EXPECT_FALSE(ComputeMonitorInterval({100, 50, 0}, {100, 50, 0}, absl::Seconds(1)).restarted);
}

TEST(MonitorTextTest, TitleNamesWhatIsWatched) {
  MonitorTarget t;
  t.topology = "demo";
  t.component = "sink";
  t.component_type = "bolt";
  t.executors = 2;
  t.stream = "default";
  t.watch = MonitorWatch::kTransferred;
  t.interval_secs = 4;
  EXPECT_EQ(MonitorTitle(t),
            "topology demo, bolt sink (2 executors), stream default: transferred every 4 s");
  t.executors = 1;
  EXPECT_NE(MonitorTitle(t).find("(1 executor)"), std::string::npos);
}

TEST(MonitorTextTest, RowsLineUpUnderTheHeader) {
  const std::string header = MonitorHeader(MonitorWatch::kEmitted);
  EXPECT_EQ(header,
            "    time  time-diff ms       emitted     emitted/s       acked/s      failed/s");
  const absl::Time at = absl::FromUnixSeconds(1700000000);  // 22:13:20 UTC
  MonitorInterval i;
  i.elapsed_ms = 4001;
  i.delta = 412;
  i.rate = 102.97;
  i.acked_rate = 100;
  i.failed_rate = 0;
  const std::string row = MonitorRow(i, at, absl::UTCTimeZone());
  EXPECT_EQ(row, "22:13:20          4001           412         103.0         100.0           0.0");
  EXPECT_EQ(row.size(), header.size());
  // Each column's last character sits under its header's.
  for (size_t end : {8u, 22u, 36u, 50u, 64u, 78u}) {
    EXPECT_NE(header[end - 1], ' ') << end;
    EXPECT_NE(row[end - 1], ' ') << end;
  }
  EXPECT_NE(MonitorHeader(MonitorWatch::kTransferred).find("transferred/s"), std::string::npos);
}

TEST(MonitorTextTest, ARestartedIntervalSaysSo) {
  MonitorInterval i;
  i.elapsed_ms = 1000;
  i.restarted = true;
  EXPECT_EQ(MonitorRow(i, absl::FromUnixSeconds(0), absl::UTCTimeZone()),
            "00:00:00          1000             -             -             -             -  "
            "(counts restarted)");
}

}  // namespace
}  // namespace tempest::cli
