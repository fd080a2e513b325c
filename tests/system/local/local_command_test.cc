// `tempest local` as users run it: the real binary, the real example
// topology, the real built-in components.

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest {
namespace {

using std::chrono::milliseconds;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::string Binary() {
  const char* b = std::getenv("TEMPEST_BINARY");
  return b != nullptr ? b : "tempest";
}

std::string SourceDir() {
  const char* s = std::getenv("TEMPEST_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

using RunResult = testing::CommandRun;

RunResult RunTempest(const testing::TempDir& dir, std::vector<std::string> args,
                     milliseconds timeout = milliseconds(240000)) {
  args.insert(args.begin(), Binary());
  RunResult run = testing::RunCommand(args, dir.File("tempest"), timeout);
  EXPECT_TRUE(run.finished) << "tempest local did not exit by itself";
  return run;
}

// examples/generator-verifier.yaml with its output paths moved into `dir`.
std::string GeneratorVerifierIn(const testing::TempDir& dir) {
  std::string yaml = ReadFile(SourceDir() + "/examples/generator-verifier.yaml");
  EXPECT_FALSE(yaml.empty());
  const std::string from = "${ENV-OUT}/generator-verifier";
  for (size_t pos = yaml.find(from); pos != std::string::npos; pos = yaml.find(from, pos)) {
    yaml.replace(pos, from.size(), dir.path());
  }
  const std::string path = dir.File("generator-verifier.yaml");
  WriteFile(path, yaml);
  return path;
}

// The acceptance case: 100k reliable tuples through an IdentityBolt that
// fails 5% of deliveries; --until-complete must end the run by itself and
// the verifier must have every seq exactly once.
TEST(LocalCommandTest, GeneratorVerifierCompletesWithNothingMissingOrDuplicated) {
  testing::TempDir dir("tempest-local");
  const std::string topology = GeneratorVerifierIn(dir);
  RunResult run = RunTempest(dir, {"local", topology, "--until-complete"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("done: complete"), std::string::npos) << run.out;
  const std::string report_text = ReadFile(dir.File("report.json"));
  ASSERT_FALSE(report_text.empty()) << "verifier wrote no report; stderr:\n" << run.err;
  nlohmann::json report = nlohmann::json::parse(report_text);
  EXPECT_EQ(report["expected"], 100000);
  EXPECT_EQ(report["unique"], 100000);
  EXPECT_EQ(report["missing"], 0);
  EXPECT_EQ(report["duplicated"], 0);
  // Failures really happened and were replayed: the spout emitted more
  // than 100k tuples and reported failures.
  EXPECT_NE(run.out.find("acked=100000"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("failed=0 "), std::string::npos) << run.out;
}

TEST(LocalCommandTest, SigintStopsCleanlyAndSinksWriteTheirReports) {
  testing::TempDir dir("tempest-local");
  std::string yaml = ReadFile(GeneratorVerifierIn(dir));
  // Endless and slower, so the run is still going when we interrupt it.
  const std::string count = "value: 100000\n      - name: rate\n        value: 0";
  ASSERT_NE(yaml.find(count), std::string::npos);
  yaml.replace(yaml.find(count), count.size(),
               "value: -1\n      - name: rate\n        value: 20000");
  WriteFile(dir.File("endless.yaml"), yaml);
  os::ChildProcess::Options options;
  options.argv = {Binary(), "local", dir.File("endless.yaml")};
  options.stdout_path = dir.File("stdout.txt");
  options.stderr_path = dir.File("stderr.txt");
  auto child = os::ChildProcess::Start(options);
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(tempest::testing::Eventually(milliseconds(60000), [&] {
    return ReadFile(dir.File("verifier.log")).size() > 1000;
  }));
  ASSERT_TRUE((*child)->SignalGroup(SIGINT));
  std::optional<int> status = (*child)->WaitFor(milliseconds(60000));
  ASSERT_TRUE(status.has_value());
  ASSERT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 0) << ReadFile(dir.File("stderr.txt"));
  EXPECT_NE(ReadFile(dir.File("stdout.txt")).find("done: interrupted"), std::string::npos);
  const std::string report_text = ReadFile(dir.File("report.json"));
  ASSERT_FALSE(report_text.empty());
  nlohmann::json report = nlohmann::json::parse(report_text);
  EXPECT_GT(report["received"].get<int64_t>(), 0);
  EXPECT_EQ(report["duplicated"], 0);
}

TEST(LocalCommandTest, DurationStopsTheRun) {
  testing::TempDir dir("tempest-local");
  std::string yaml = ReadFile(GeneratorVerifierIn(dir));
  const std::string count = "value: 100000\n      - name: rate\n        value: 0";
  yaml.replace(yaml.find(count), count.size(),
               "value: -1\n      - name: rate\n        value: 5000");
  WriteFile(dir.File("endless.yaml"), yaml);
  RunResult run = RunTempest(dir, {"local", dir.File("endless.yaml"), "--duration", "2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("done: duration reached"), std::string::npos) << run.out;
}

TEST(LocalCommandTest, UsageAndTopologyErrorsExitNonZeroWithOneLine) {
  testing::TempDir dir("tempest-local");
  RunResult usage = RunTempest(dir, {"local"});
  EXPECT_EQ(usage.exit_code, 2);
  RunResult bad_flag = RunTempest(dir, {"local", GeneratorVerifierIn(dir), "--duration", "-3"});
  EXPECT_EQ(bad_flag.exit_code, 2);

  WriteFile(dir.File("bad.yaml"),
            "name: bad\nspouts:\n  - id: s\n    className: no.such.Spout\n    parallelism: 1\n");
  RunResult bad = RunTempest(dir, {"local", dir.File("bad.yaml")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("no.such.Spout"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("tempest: "), 0u) << bad.err;
}

}  // namespace
}  // namespace tempest
