// Runs `tempest study --scenario upgrade-under-load` under every guarantee
// with the real binary and the small settings of the other study tests, and
// checks results.json and report.md: while records flow, each pipeline is
// replaced by a copy of itself under another name with `tempest upgrade`;
// nothing is lost under any guarantee, at-most-once duplicates nothing, the
// others at most what their spout read above its last commit, no partition
// ever had two owners committing (zombie commits 0), and the upgrade was
// applied. The output gaps are reported, never asserted: they are timings.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/temp_dir.h"
#include "tests/system/study/study_expectations.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;

TEST(UpgradeStudyTest, AnUpgradeUnderLoadKeepsEachGuaranteesPromise) {
  TempDir dir("tempest-study-upgrade");
  std::string report;
  const std::vector<json> runs =
      RunUnderEveryGuarantee(dir, "upgrade-under-load", "upgrade",
                             {"lost", "duplicated", "zombie commits", "upgrades applied",
                              "command's output gap (s)", "longest output gap (s)"},
                             &report);
  for (const json& run : runs) {
    SCOPED_TRACE(run.value("guarantee", ""));
    EXPECT_EQ(run["zombie_commits"], 0) << "two owners of a partition committed";
    const json& f = run["upgrade"];
    ASSERT_TRUE(f.is_object()) << run.dump();
    EXPECT_EQ(f["applied"], 1);
    EXPECT_TRUE(f["command_gap_s"].is_number()) << f.dump();
    EXPECT_TRUE(f["output_gap_s"].is_number()) << f.dump();
  }
  EXPECT_NE(report.find("## Upgrade under load"), std::string::npos) << report;
  EXPECT_NE(report.find("| upgrade-under-load | at-least-once |"), std::string::npos) << report;
}

}  // namespace
}  // namespace tempest::testing
