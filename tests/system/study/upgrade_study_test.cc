// Runs `tempest study --scenario upgrade-under-load` under every guarantee
// with the real binary and the small settings of the other study tests, and
// checks results.json and report.md: while records flow, each pipeline is
// replaced by a copy of itself under another name with `tempest upgrade`;
// nothing is lost under any guarantee, at-most-once duplicates nothing, the
// others at most what their spout read above its last commit, no partition
// ever had two owners committing (zombie commits 0), and the upgrade was
// applied. The output gaps are reported, never asserted: they are timings.

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

TEST(UpgradeStudyTest, AnUpgradeUnderLoadKeepsEachGuaranteesPromise) {
  TempDir dir("tempest-study-upgrade");
  const std::string out = dir.File("study");
  // 3000 records at 300/s: 10 s of production, so the upgrade lands while
  // records flow.
  CommandRun r =
      RunCommand({TempestBinary(), "study", "--scenario", "upgrade-under-load", "--guarantee",
                  "all", "--records", "3000", "--rate", "300", "--seed", "7", "--out", out},
                 dir.File("study"), std::chrono::minutes(4));
  ASSERT_TRUE(r.finished) << r.err;
  std::printf("%s", r.err.c_str());
  const std::string report = ReadFileOrEmpty(out + "/report.md");
  EXPECT_EQ(r.exit_code, 0) << r.err << report;

  json results = json::parse(ReadFileOrEmpty(out + "/results.json"), nullptr, false);
  ASSERT_FALSE(results.is_discarded()) << ReadFileOrEmpty(out + "/results.json");
  ASSERT_TRUE(results["runs"].is_array());
  std::set<std::string> guarantees;
  for (const json& run : results["runs"]) {
    const std::string guarantee = run.value("guarantee", "");
    SCOPED_TRACE(guarantee);
    EXPECT_EQ(run.value("scenario", ""), "upgrade-under-load");
    EXPECT_EQ(run.value("fault", ""), "upgrade");
    guarantees.insert(guarantee);
    ExpectEachGuaranteeKept(run);
    EXPECT_EQ(run["lost"], 0) << "an upgrade loses nothing under any guarantee";
    EXPECT_EQ(run["zombie_commits"], 0) << "two owners of a partition committed";

    ASSERT_TRUE(run.contains("bounds") && run["bounds"].is_array()) << run.dump();
    std::set<std::string> figures;
    for (const json& b : run["bounds"]) {
      figures.insert(b.value("figure", ""));
      EXPECT_TRUE(b.value("pass", false)) << b.dump();
    }
    for (const char* figure : {"lost", "duplicated", "zombie commits", "upgrades applied",
                               "command's output gap (s)", "longest output gap (s)"}) {
      EXPECT_TRUE(figures.contains(figure)) << figure << " has no bound: " << run["bounds"];
    }

    const json& f = run["upgrade"];
    ASSERT_TRUE(f.is_object()) << run.dump();
    EXPECT_EQ(f["applied"], 1);
    EXPECT_TRUE(f["command_gap_s"].is_number()) << f.dump();
    EXPECT_TRUE(f["output_gap_s"].is_number()) << f.dump();
  }
  EXPECT_EQ(guarantees, (std::set<std::string>{"at-least-once", "at-most-once", "no-guarantee"}));
  EXPECT_NE(report.find("## Upgrade under load"), std::string::npos) << report;
  EXPECT_NE(report.find("| upgrade-under-load | at-least-once |"), std::string::npos) << report;
}

}  // namespace
}  // namespace tempest::testing
