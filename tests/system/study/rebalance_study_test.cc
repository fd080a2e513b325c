// Runs `tempest study --scenario rebalance-under-load` under every guarantee
// with the real binary and the small settings of the other study tests, and
// checks results.json and report.md: while records flow, each pipeline's
// transform is split into two executors and merged back with `tempest
// rebalance -w 0`; nothing is lost under any guarantee, at-most-once
// duplicates nothing, the others at most what their spout read above its
// last commit, both rebalances are applied, and both of the pipeline's
// workers are kept (the same processes from start to end: the transform's
// worker regroups its executors in place).
// The output gap is reported, never asserted: it is a timing.

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

TEST(RebalanceStudyTest, ARebalanceUnderLoadKeepsEveryWorkerAndEachGuaranteesPromise) {
  TempDir dir("tempest-study-rebalance");
  const std::string out = dir.File("study");
  // 3000 records at 300/s: 10 s of production, so the split lands while
  // records flow; the merge comes 8 s later.
  CommandRun r =
      RunCommand({TempestBinary(), "study", "--scenario", "rebalance-under-load", "--guarantee",
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
    EXPECT_EQ(run.value("scenario", ""), "rebalance-under-load");
    EXPECT_EQ(run.value("fault", ""), "rebalance");
    guarantees.insert(guarantee);
    ExpectEachGuaranteeKept(run);
    EXPECT_EQ(run["lost"], 0) << "a rebalance loses nothing under any guarantee";

    ASSERT_TRUE(run.contains("bounds") && run["bounds"].is_array()) << run.dump();
    std::set<std::string> figures;
    for (const json& b : run["bounds"]) {
      figures.insert(b.value("figure", ""));
      EXPECT_TRUE(b.value("pass", false)) << b.dump();
    }
    for (const char* figure : {"lost", "duplicated", "zombie commits", "rebalances applied",
                               "workers kept", "workers restarted", "longest output gap (s)"}) {
      EXPECT_TRUE(figures.contains(figure)) << figure << " has no bound: " << run["bounds"];
    }

    const json& f = run["rebalance"];
    ASSERT_TRUE(f.is_object()) << run.dump();
    EXPECT_EQ(f["applied"], 2);
    EXPECT_EQ(f["settle_s"].size(), 2u);
    EXPECT_EQ(f["workers_before"], 2);
    // The transform's worker regroups it in place: no process restarts.
    EXPECT_EQ(f["kept"], 2) << f.dump();
    EXPECT_EQ(f["restarted"], 0) << f.dump();
    EXPECT_TRUE(f["output_gap_s"].is_number()) << f.dump();
    EXPECT_EQ(f["gaps_s"].size(), 2u) << f.dump();
  }
  EXPECT_EQ(guarantees, (std::set<std::string>{"at-least-once", "at-most-once", "no-guarantee"}));
  EXPECT_NE(report.find("## Rebalance under load"), std::string::npos) << report;
  EXPECT_NE(report.find("| rebalance-under-load | at-least-once |"), std::string::npos) << report;
}

}  // namespace
}  // namespace tempest::testing
