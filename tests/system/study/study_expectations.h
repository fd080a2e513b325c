#ifndef TEMPEST_TESTS_SYSTEM_STUDY_STUDY_EXPECTATIONS_H_
#define TEMPEST_TESTS_SYSTEM_STUDY_STUDY_EXPECTATIONS_H_

// Running `tempest study` from a test, and what every run of it must show in
// results.json, whatever its scenario: tested, no violation, no committed
// offset gone back, no commit by a replaced owner, at-least-once and the
// effectively-once sink losing nothing, at-most-once duplicating nothing.

#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {

// What a `tempest study` left: the command's outcome, report.md, and
// results.json (discarded JSON when it is missing or unreadable).
struct StudyOutput {
  CommandRun command;
  std::string report;
  nlohmann::json results;
};

// Runs `tempest study ARGS --out DIR/study` (its logs beside it), stopped
// after `limit`, and echoes its progress lines into the test's output.
inline StudyOutput RunStudy(const TempDir& dir, const std::vector<std::string>& args,
                            std::chrono::minutes limit) {
  const std::string out = dir.File("study");
  std::vector<std::string> argv = {TempestBinary(), "study"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--out", out});
  StudyOutput s;
  s.command = RunCommand(argv, dir.File("study"), limit);
  std::printf("%s", s.command.err.c_str());
  s.report = ReadFileOrEmpty(out + "/report.md");
  s.results = nlohmann::json::parse(ReadFileOrEmpty(out + "/results.json"), nullptr, false);
  return s;
}

// Every figure of a run within its bound, as the report marks it, and each
// of `figures` among those bounded.
inline void ExpectEveryBoundKept(const nlohmann::json& run,
                                 std::initializer_list<const char*> figures) {
  ASSERT_TRUE(run.contains("bounds") && run["bounds"].is_array()) << run.dump();
  std::set<std::string> bounded;
  for (const nlohmann::json& b : run["bounds"]) {
    bounded.insert(b.value("figure", ""));
    EXPECT_TRUE(b.value("pass", false)) << b.dump();
  }
  for (const char* figure : figures) {
    EXPECT_TRUE(bounded.contains(figure)) << figure << " has no bound: " << run["bounds"];
  }
}

inline void ExpectEachGuaranteeKept(const nlohmann::json& run) {
  const std::string guarantee = run.value("guarantee", "");
  EXPECT_FALSE(run.value("not_tested", true)) << run.value("not_tested_reason", "");
  EXPECT_TRUE(run["violations"].empty()) << run["violations"].dump();
  EXPECT_EQ(run["offset_regressions"], 0);
  EXPECT_EQ(run["zombie_commits"], 0);
  if (guarantee == "at-least-once") {
    EXPECT_EQ(run["lost"], 0);
    ASSERT_TRUE(run["dedup_sink"].is_object());
    EXPECT_EQ(run["dedup_sink"]["lost"], 0);
    EXPECT_EQ(run["dedup_sink"]["duplicated"], 0);
  }
  if (guarantee == "at-most-once") {
    EXPECT_EQ(run["duplicated"], 0);
  }
}

// Runs `scenario` once under every guarantee with the settings the scenario
// tests share (3000 records at 300/s: 10 s of production, so the fault lands
// while records flow), and checks what every such run must show: exit status
// 0, one run per guarantee, each of `fault`, each keeping its guarantee's
// promise and losing nothing, each figure within its bound and each of
// `figures` bounded. Returns the runs (empty when there are none to check)
// and sets `report`.
inline std::vector<nlohmann::json> RunUnderEveryGuarantee(
    const TempDir& dir, const std::string& scenario, const std::string& fault,
    std::initializer_list<const char*> figures, std::string* report) {
  const StudyOutput study = RunStudy(dir,
                                     {"--scenario", scenario, "--guarantee", "all", "--records",
                                      "3000", "--rate", "300", "--seed", "7"},
                                     std::chrono::minutes(4));
  *report = study.report;
  EXPECT_TRUE(study.command.finished) << study.command.err;
  EXPECT_EQ(study.command.exit_code, 0) << study.command.err << study.report;
  if (study.results.is_discarded() || !study.results["runs"].is_array()) {
    ADD_FAILURE() << "no runs in results.json";
    return {};
  }
  std::vector<nlohmann::json> runs;
  std::set<std::string> guarantees;
  for (const nlohmann::json& run : study.results["runs"]) {
    const std::string guarantee = run.value("guarantee", "");
    SCOPED_TRACE(guarantee);
    EXPECT_EQ(run.value("scenario", ""), scenario);
    EXPECT_EQ(run.value("fault", ""), fault);
    guarantees.insert(guarantee);
    ExpectEachGuaranteeKept(run);
    EXPECT_EQ(run["lost"], 0) << scenario << " loses nothing under any guarantee";
    ExpectEveryBoundKept(run, figures);
    runs.push_back(run);
  }
  EXPECT_EQ(guarantees, (std::set<std::string>{"at-least-once", "at-most-once", "no-guarantee"}));
  return runs;
}

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SYSTEM_STUDY_STUDY_EXPECTATIONS_H_
