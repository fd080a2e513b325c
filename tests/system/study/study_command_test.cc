// Runs a small `tempest study` (3 scenarios x 3 guarantees, 2000 records)
// with the real binary and checks what it writes: every run's figures in
// results.json, the guarantees' expectations, the report and its charts.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "study/scenario.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsPng(const std::string& path) {
  const std::string bytes = Read(path);
  return bytes.size() > 8 && bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0;
}

TEST(StudyCommandTest, SmallStudyWritesResultsThatHoldEachGuaranteesPromise) {
  TempDir dir("tempest-study");
  const std::string out = dir.File("study");
  CommandRun r = RunCommand({TempestBinary(), "study", "--scenario", "worker-kill", "--scenario",
                             "zk-session-expiry", "--scenario", "retention-past-offset",
                             "--guarantee", "all", "--records", "2000", "--rate", "1000",
                             "--seed", "7", "--out", out},
                            dir.File("study"), std::chrono::minutes(12));
  ASSERT_TRUE(r.finished) << r.err;
  std::printf("%s", r.err.c_str());
  EXPECT_EQ(r.exit_code, 0) << r.err << Read(out + "/report.md");

  json results = json::parse(Read(out + "/results.json"), nullptr, false);
  ASSERT_FALSE(results.is_discarded()) << Read(out + "/results.json");
  EXPECT_EQ(results["seed"], 7);
  EXPECT_EQ(results["records"], 2000);
  ASSERT_TRUE(results["runs"].is_array());
  ASSERT_EQ(results["runs"].size(), 9u);
  std::set<std::pair<std::string, std::string>> seen;
  for (const json& run : results["runs"]) {
    for (const char* field :
         {"scenario", "guarantee", "records", "lost", "duplicated", "max_copies", "replayed",
          "offset_regressions", "commit_blocked_s", "recovery_s", "throughput_before",
          "throughput_during", "throughput_after", "expected_loss"}) {
      EXPECT_TRUE(run.contains(field)) << field << " missing in " << run.dump();
    }
    const std::string scenario = run["scenario"];
    const std::string guarantee = run["guarantee"];
    seen.insert({scenario, guarantee});
    SCOPED_TRACE(scenario + " " + guarantee);
    EXPECT_EQ(run["records"], 2000);
    EXPECT_EQ(run["offset_regressions"], 0);
    EXPECT_TRUE(run["violations"].empty()) << run["violations"].dump();
    EXPECT_TRUE(run["quiesced"].get<bool>());
    // The seed fixed the fault's moment (2000 records at 1000/s: a 2 s
    // production window), and the fault happened then.
    const auto& builtins = study::BuiltinScenarios();
    auto scenario_def = std::find_if(builtins.begin(), builtins.end(),
                                     [&](const study::Scenario& s) { return s.name == scenario; });
    ASSERT_NE(scenario_def, builtins.end());
    EXPECT_DOUBLE_EQ(run["fault_planned_s"].get<double>(),
                     study::PlanFault(*scenario_def, 7, 2.0).start_s);
    ASSERT_TRUE(run["fault_start_s"].is_number());
    EXPECT_GE(run["fault_start_s"].get<double>(), run["fault_planned_s"].get<double>());
    // A fault waits for the pipelines to flow when they start slowly (a loaded
    // machine); otherwise it fires on time.
    if (!run["fault_held_for_flow"].get<bool>()) {
      EXPECT_LT(run["fault_start_s"].get<double>(), run["fault_planned_s"].get<double>() + 0.5);
    }

    // Each lost or duplicated range, explained from the spout's journal;
    // uncapped here, the ranges add up to the run's figures.
    ASSERT_TRUE(run["ranges"].is_array()) << run.dump().substr(0, 500);
    if (run["ranges_omitted"] == 0) {
      int64_t lost = 0, duplicated = 0;
      for (const auto& r : run["ranges"]) {
        (r["kind"] == "lost" ? lost : duplicated) += r["count"].get<int64_t>();
      }
      EXPECT_EQ(lost, run["lost"].get<int64_t>()) << run["ranges"].dump();
      EXPECT_EQ(duplicated, run["duplicated"].get<int64_t>()) << run["ranges"].dump();
    }
    if (scenario == "retention-past-offset") {
      // Retention deleted records nobody had processed: a real, exact loss,
      // which the journal's reset entry explains.
      EXPECT_GT(run["expected_loss"].get<int64_t>(), 0);
      if (guarantee == "at-least-once") {
        bool reset_quoted = false;
        for (const auto& r : run["ranges"]) {
          reset_quoted |= r["kind"] == "lost" &&
                          r["cause"].get<std::string>().find("out-of-range reset skipped") !=
                              std::string::npos;
        }
        EXPECT_TRUE(reset_quoted) << run["ranges"].dump();
      }
    } else {
      EXPECT_EQ(run["expected_loss"], 0);
    }
    if (guarantee == "at-least-once") {
      EXPECT_EQ(run["lost"], run["expected_loss"]);
      EXPECT_EQ(run["committed_not_processed"], run["expected_loss"]);
      ASSERT_TRUE(run["dedup_sink"].is_object());
      EXPECT_EQ(run["dedup_sink"]["duplicated"], 0);
      EXPECT_EQ(run["dedup_sink"]["lost"], run["dedup_sink"]["expected_loss"]);
    } else {
      EXPECT_TRUE(run["dedup_sink"].is_null());
    }
    if (guarantee == "at-most-once") {
      EXPECT_EQ(run["duplicated"], 0);
    }
    EXPECT_FALSE(run["samples"].empty());
  }
  EXPECT_EQ(seen.size(), 9u);

  const std::string report = Read(out + "/report.md");
  for (const char* scenario : {"worker-kill", "zk-session-expiry", "retention-past-offset"}) {
    EXPECT_NE(report.find(scenario), std::string::npos) << scenario;
  }
  EXPECT_NE(report.find("Lost and duplicated ranges"), std::string::npos);
  EXPECT_TRUE(IsPng(out + "/loss-duplicates.png"));
  EXPECT_TRUE(IsPng(out + "/timeline-worker-kill.png"));
}

TEST(StudyCommandTest, BadScenariosAndGuaranteesAreUsageErrors) {
  TempDir dir("tempest-study-bad");
  CommandRun unknown = RunCommand({TempestBinary(), "study", "--scenario", "meteor-strike",
                                   "--out", dir.File("out")},
                                  dir.File("unknown"), std::chrono::seconds(30));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown scenario 'meteor-strike'"), std::string::npos)
      << unknown.err;

  CommandRun guarantee = RunCommand({TempestBinary(), "study", "--guarantee", "exactly-once",
                                     "--out", dir.File("out")},
                                    dir.File("guarantee"), std::chrono::seconds(30));
  EXPECT_EQ(guarantee.exit_code, 2);
  EXPECT_NE(guarantee.err.find("unknown guarantee"), std::string::npos) << guarantee.err;

  const std::string file = dir.File("mine.yaml");
  std::ofstream(file) << "- name: long-gc\n  fault: pause-worker\n  duration_s: lots\n";
  CommandRun bad = RunCommand({TempestBinary(), "study", "--scenario-file", file,
                               "--list-scenarios"},
                              dir.File("bad"), std::chrono::seconds(30));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(file + ":3:"), std::string::npos) << bad.err;

  CommandRun missing = RunCommand({TempestBinary(), "study", "--scenario-file",
                                   dir.File("absent.yaml"), "--list-scenarios"},
                                  dir.File("missing"), std::chrono::seconds(30));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("absent.yaml"), std::string::npos) << missing.err;

  std::ofstream(file) << "scenarios: [\n  - {name: a, fault: kill-worker\n";
  CommandRun broken = RunCommand({TempestBinary(), "study", "--scenario-file", file,
                                  "--list-scenarios"},
                                 dir.File("broken"), std::chrono::seconds(30));
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.err.find("not valid YAML"), std::string::npos) << broken.err;

  // A good file adds its scenario to the list.
  std::ofstream(file) << "- name: long-gc\n  fault: pause-worker\n  duration_s: 6\n"
                         "  description: a long stop-the-world pause\n";
  CommandRun list = RunCommand({TempestBinary(), "study", "--scenario-file", file,
                                "--list-scenarios"},
                               dir.File("list"), std::chrono::seconds(30));
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("long-gc"), std::string::npos);
  EXPECT_NE(list.out.find("zk-quorum-loss"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.File("out")));
}

}  // namespace
}  // namespace tempest::testing
