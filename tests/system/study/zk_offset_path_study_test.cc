// Runs `tempest study` with the three scenarios of the KafkaSpout's
// ZooKeeper offset path (zk-overload, zk-permission-lost, zk-misconfigured)
// under every guarantee, with the real binary and small record counts, and
// checks results.json: at-least-once and the effectively-once sink lose
// nothing, at-most-once duplicates nothing, no committed offset goes
// backwards, no replaced owner commits, and each fault bit (commits slower
// than their interval but never queued, NOAUTH refusals, a missing chroot
// refused at open: the study reports any of these as a violation).

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/system/study/study_expectations.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;

TEST(ZkOffsetPathStudyTest, OverloadRevokedAclAndMisconfigurationKeepEachGuaranteesPromise) {
  TempDir dir("tempest-study-zk");
  // 3000 records at 300/s: 10 s of production, so each fault lands while
  // records flow; the study's default partitions (4).
  const StudyOutput study =
      RunStudy(dir,
               {"--scenario", "zk-overload", "--scenario", "zk-permission-lost", "--scenario",
                "zk-misconfigured", "--guarantee", "all", "--records", "3000", "--rate", "300",
                "--seed", "7"},
               std::chrono::minutes(8));
  ASSERT_TRUE(study.command.finished) << study.command.err;
  const std::string& report = study.report;
  EXPECT_EQ(study.command.exit_code, 0) << study.command.err << report;
  const json& results = study.results;
  ASSERT_FALSE(results.is_discarded());
  ASSERT_TRUE(results["runs"].is_array());
  ASSERT_EQ(results["runs"].size(), 9u) << report;
  std::set<std::pair<std::string, std::string>> seen;
  for (const json& run : results["runs"]) {
    for (const char* field : {"scenario", "guarantee", "lost", "duplicated", "zombie_commits",
                              "offset_regressions", "commit_path", "violations"}) {
      ASSERT_TRUE(run.contains(field)) << field << " missing in " << run.dump();
    }
    const std::string scenario = run["scenario"];
    const std::string guarantee = run["guarantee"];
    SCOPED_TRACE(scenario + " " + guarantee);
    seen.insert({scenario, guarantee});
    ExpectEachGuaranteeKept(run);

    // What the spout's own metrics showed while the fault lasted.
    const json& commits = run["commit_path"];
    ASSERT_TRUE(commits.is_object()) << run.dump();
    EXPECT_GT(commits["readings"], 0);
    EXPECT_GT(commits["multis"], 0);
    EXPECT_LE(commits["in_flight_max"], 1);
    EXPECT_LE(commits["pending_max"], 4);
    if (scenario == "zk-overload") {
      // Slower than the 500 ms commit interval.
      EXPECT_GT(commits["latency_max_ms"], 500) << commits.dump();
    }
    if (scenario == "zk-permission-lost") {
      EXPECT_GT(commits["denied"], 0) << commits.dump();
      EXPECT_GE(commits["failures"], commits["denied"]) << commits.dump();
    }
    if (scenario == "zk-misconfigured") {
      EXPECT_EQ(commits["denied"], 0);
    }
  }
  const std::set<std::pair<std::string, std::string>> expected = {
      {"zk-overload", "at-least-once"},       {"zk-overload", "at-most-once"},
      {"zk-overload", "no-guarantee"},        {"zk-permission-lost", "at-least-once"},
      {"zk-permission-lost", "at-most-once"}, {"zk-permission-lost", "no-guarantee"},
      {"zk-misconfigured", "at-least-once"},  {"zk-misconfigured", "at-most-once"},
      {"zk-misconfigured", "no-guarantee"}};
  EXPECT_EQ(seen, expected);
  EXPECT_NE(report.find("## Offset commits"), std::string::npos) << report;
}

TEST(ZkOffsetPathStudyTest, HelpListsTheScenarios) {
  TempDir dir("tempest-study-help");
  CommandRun r =
      RunCommand({TempestBinary(), "study", "--help"}, dir.File("help"), std::chrono::seconds(30));
  ASSERT_TRUE(r.finished);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"zk-overload", "zk-permission-lost", "zk-misconfigured"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name << "\n" << r.out;
  }
}

}  // namespace
}  // namespace tempest::testing
