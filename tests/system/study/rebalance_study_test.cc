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

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/temp_dir.h"
#include "tests/system/study/study_expectations.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;

TEST(RebalanceStudyTest, ARebalanceUnderLoadKeepsEveryWorkerAndEachGuaranteesPromise) {
  TempDir dir("tempest-study-rebalance");
  // The split lands while records flow; the merge comes 8 s later.
  std::string report;
  const std::vector<json> runs =
      RunUnderEveryGuarantee(dir, "rebalance-under-load", "rebalance",
                             {"lost", "duplicated", "zombie commits", "rebalances applied",
                              "workers kept", "workers restarted", "longest output gap (s)"},
                             &report);
  for (const json& run : runs) {
    SCOPED_TRACE(run.value("guarantee", ""));
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
  EXPECT_NE(report.find("## Rebalance under load"), std::string::npos) << report;
  EXPECT_NE(report.find("| rebalance-under-load | at-least-once |"), std::string::npos) << report;
}

}  // namespace
}  // namespace tempest::testing
