// upgrade-under-load's pure parts: the command's figures read from its last
// line, the bounds, the round trip through results.json and the report's
// table, and the copy's Flux file (another name, the same spout id).
#include "study/upgrade_run.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "study/pipeline_topology.h"
#include "study/report_markdown.h"
#include "study/results_json.h"
#include "study/scenario.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/study/study_run_checks.h"

namespace tempest::study {
namespace {

// 10 records/s with the sink 0.2 s behind and committing as it receives.
RunResult UpgradedRun(const std::string& guarantee) {
  RunResult r;
  r.scenario = "upgrade-under-load";
  r.guarantee = guarantee;
  r.fault = "upgrade";
  r.records = 80;
  r.fault_start_s = 2.5;
  for (int i = 0; i <= 40; ++i) {
    Sample x;
    x.t_s = i * 0.2;
    x.log_end = i * 2 + 2;
    x.sink_received = x.sink_distinct = x.committed = i * 2;
    r.samples.push_back(x);
  }
  UpgradeFigures f;
  f.applied = 1;
  f.at_s = 2.5;
  f.took_s = 9;
  f.command_gap_s = 6.5;
  f.drain_s = 5.2;
  f.output_gap_s = 0.2;
  r.upgrade = f;
  return r;
}

TEST(UpgradeRunTest, TheCommandsLastLineGivesItsGapAndDrain) {
  UpgradeFigures f;
  ParseUpgradeOutput(
      "upgrade 4/5: no committed offset to carry: kafka: offsets stay in ZooKeeper /s/p\n"
      "upgrade 5/5: p-v2 activated; output gap 6.5 s (p's drain 5.2 s, cutover 1.3 s)\n",
      f);
  ASSERT_TRUE(f.command_gap_s.has_value() && f.drain_s.has_value());
  EXPECT_DOUBLE_EQ(*f.command_gap_s, 6.5);
  EXPECT_DOUBLE_EQ(*f.drain_s, 5.2);
  UpgradeFigures none;
  ParseUpgradeOutput("upgrade 3/5: failed\n", none);
  EXPECT_FALSE(none.command_gap_s.has_value());
  EXPECT_FALSE(none.drain_s.has_value());
}

TEST(UpgradeRunTest, BoundsHoldLostAtZeroDuplicatesToTheReplayBoundAndTheUpgradeApplied) {
  RunResult ok = UpgradedRun("at-least-once");
  ok.dedup_sink = DedupSinkResult{};
  std::vector<BoundCheck> b = CheckUpgradeBounds(ok);
  for (const BoundCheck& c : b) EXPECT_TRUE(c.pass) << c.figure << " " << c.value;
  EXPECT_EQ(BoundOf(b, "upgrades applied").value, "1");
  EXPECT_EQ(BoundOf(b, "command's output gap (s)").value, "6.5");
  EXPECT_EQ(BoundOf(b, "old topology's drain (s)").value, "5.2");
  EXPECT_EQ(BoundOf(b, "longest output gap (s)").value, "0.2");
  EXPECT_TRUE(UpgradeViolations(ok).empty());

  RunResult bad = UpgradedRun("no-guarantee");
  bad.lost = 3;
  bad.duplicated = 1000;
  bad.upgrade->applied = 0;
  b = CheckUpgradeBounds(bad);
  EXPECT_FALSE(BoundOf(b, "lost").pass) << "an upgrade may not lose, whatever the guarantee";
  EXPECT_FALSE(BoundOf(b, "duplicated").pass);
  EXPECT_FALSE(BoundOf(b, "upgrades applied").pass);
  EXPECT_EQ(UpgradeViolations(bad).size(), 3u);

  RunResult amo = UpgradedRun("at-most-once");
  amo.duplicated = 1;
  EXPECT_EQ(BoundOf(CheckUpgradeBounds(amo), "duplicated").bound, "= 0");
  EXPECT_TRUE(UpgradeViolations(amo).empty()) << "CheckExpectations reports it already";
}

TEST(UpgradeRunTest, FiguresRoundTripAndFillTheirOwnTable) {
  StudyResults in;
  RunResult r = UpgradedRun("at-least-once");
  r.bounds = CheckUpgradeBounds(r);
  in.runs.push_back(r);
  absl::StatusOr<StudyResults> out = ResultsFromJson(ResultsToJson(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->runs[0].upgrade.has_value());
  const UpgradeFigures& f = *out->runs[0].upgrade;
  EXPECT_EQ(f.applied, 1);
  EXPECT_DOUBLE_EQ(f.at_s, 2.5);
  EXPECT_DOUBLE_EQ(f.took_s, 9);
  EXPECT_DOUBLE_EQ(f.command_gap_s.value_or(0), 6.5);
  EXPECT_DOUBLE_EQ(f.drain_s.value_or(0), 5.2);
  EXPECT_DOUBLE_EQ(f.output_gap_s.value_or(0), 0.2);
  EXPECT_EQ(out->runs[0].bounds.size(), r.bounds.size());

  ExpectOwnReportSection(in, "## Upgrade under load", "| upgrade-under-load | at-least-once |");
}

TEST(UpgradeRunTest, TheCopyHasAnotherNameAndKeepsTheSpoutId) {
  testing::TempDir dir("upgrade-run-test");
  Scenario scenario;
  scenario.name = "upgrade-under-load";
  scenario.fault = FaultKind::kUpgrade;
  PipelineSite site;
  site.dir = dir.path();
  const PipelineSpec spec = PipelineFor(scenario, "at-least-once", site);
  const std::string original = dir.File("topology.yaml");
  absl::StatusOr<std::string> copy = WriteUpgradeCopy(spec, original);
  ASSERT_TRUE(copy.ok()) << copy.status();
  EXPECT_EQ(*copy, dir.File("topology-copy.yaml"));
  std::stringstream text;
  text << std::ifstream(*copy).rdbuf();
  const std::string yaml = text.str();
  EXPECT_NE(yaml.find(absl::StrCat("name: ", spec.name, kUpgradedSuffix, "\n")), std::string::npos)
      << yaml;
  const size_t id = yaml.find("{name: id, value: ");
  ASSERT_NE(id, std::string::npos) << yaml;
  const std::string id_line = yaml.substr(id, yaml.find('}', id) - id);
  EXPECT_NE(id_line.find(spec.name), std::string::npos) << id_line;
  EXPECT_EQ(id_line.find(kUpgradedSuffix), std::string::npos) << id_line;
}

}  // namespace
}  // namespace tempest::study
