// `tempest dev` as a user runs it: a whole local cluster from one command,
// then `tempest submit` of the cluster example across two supervisors and
// two worker processes, `tempest list`, and a clean `tempest kill -w` that
// leaves a verifier report with nothing missing and nothing duplicated.

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(ClusterDevTest, SubmitRunsAcrossTwoSupervisorsAndCleanKillLosesNothing) {
  TempDir dir("tempest-dev-cluster");
  os::ChildProcess::Options o;
  o.argv = {TempestBinary(), "dev", "--supervisors", "2", "--dir", dir.File("cluster"),
            "-c", "ui.port=0"};
  o.stdout_path = dir.File("dev.out");
  o.stderr_path = dir.File("dev.err");
  auto dev = os::ChildProcess::Start(o);
  ASSERT_TRUE(dev.ok()) << dev.status();
  ASSERT_TRUE(WaitForLineWithPrefix(dir.File("dev.out"), "ready", seconds(180)).has_value())
      << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
  auto nimbus = WaitForLineWithPrefix(dir.File("dev.out"), "nimbus=", seconds(1));
  ASSERT_TRUE(nimbus.has_value());
  int commands = 0;
  auto tempest = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {TempestBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--nimbus");
    argv.push_back(*nimbus);
    return RunCommand(argv, dir.File(absl::StrCat("cmd-", ++commands)), milliseconds(60000));
  };

  const std::string out = dir.File("gv");
  std::ofstream(dir.File("topology.yaml"))
      << ExampleWithPaths(SourceDir() + "/examples/cluster-generator-verifier.yaml",
                          "${ENV-OUT}/cluster-gv", out);
  CommandRun submit = tempest({"submit", dir.File("topology.yaml")});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_EQ(submit.out.rfind("cluster-generator-verifier-", 0), 0u) << submit.out;

  CommandRun list = tempest({"list"});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("cluster-generator-verifier"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("ACTIVE"), std::string::npos) << list.out;

  // Two worker processes, one on each supervisor (Storm's even scheduler
  // interleaves the supervisors' slots).
  std::set<std::string> supervisors_with_workers;
  EXPECT_TRUE(Eventually(seconds(60), [&] {
    supervisors_with_workers.clear();
    for (int s = 1; s <= 2; ++s) {
      const auto workers = std::filesystem::path(dir.File("cluster")) / absl::StrCat("supervisor-", s) / "workers";
      std::error_code ec;
      for (const auto& slot : std::filesystem::directory_iterator(workers, ec)) {
        if (std::filesystem::exists(slot.path() / "heartbeat")) {
          supervisors_with_workers.insert(absl::StrCat(s));
        }
      }
    }
    return supervisors_with_workers.size() == 2;
  })) << "workers on " << supervisors_with_workers.size() << " supervisors";

  // Every seq arrives (the spout paces itself with max.spout.pending).
  json verified;
  EXPECT_TRUE(Eventually(seconds(240), [&] {
    CommandRun v = RunCommand({TempestBinary(), "verify", out + "/verifier.log", "--expected",
                               "200000", "--json"},
                              dir.File(absl::StrCat("verify-", ++commands)), milliseconds(60000));
    verified = json::parse(v.out, nullptr, false);
    return !verified.is_discarded() && verified.value("unique", 0) == 200000;
  }, milliseconds(2000))) << verified.dump();

  CommandRun kill = tempest({"kill", "cluster-generator-verifier", "-w", "3"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
  // The verifier writes its report when its worker closes it, after the
  // kill's wait, when nimbus removes the assignment.
  ASSERT_TRUE(Eventually(seconds(90), [&] { return std::filesystem::exists(out + "/report.json"); }))
      << "no report";
  json report;
  ASSERT_TRUE(Eventually(seconds(10), [&] {
    report = json::parse(ReadFileOrEmpty(out + "/report.json"), nullptr, false);
    return !report.is_discarded() && report.contains("missing");
  }));
  std::printf("clean run across 2 supervisors: %s\n", report.dump().c_str());
  EXPECT_EQ(report["received"], 200000) << report.dump();
  EXPECT_EQ(report["missing"], 0) << report.dump();
  EXPECT_EQ(report["duplicated"], 0) << report.dump();

  EXPECT_TRUE(Eventually(seconds(60), [&] {
    CommandRun l = tempest({"list"});
    return l.out.find("cluster-generator-verifier") == std::string::npos;
  }));
  (*dev)->Stop(seconds(60));
  if (HasFailure()) {
    std::cerr << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir.File("cluster"))) {
      if (e.path().extension() == ".log") {
        std::string text = ReadFileOrEmpty(e.path().string());
        if (text.size() > 5000) text = text.substr(text.size() - 5000);
        std::cerr << "==== " << e.path().string() << "\n" << text << "\n";
      }
    }
  }
}

}  // namespace
}  // namespace tempest::testing
