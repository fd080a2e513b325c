// `tempest dev` as a user runs it: a whole local cluster from one command,
// then `tempest submit` of the cluster example across two supervisors and
// two worker processes, `tempest list`, and a clean `tempest kill -w` that
// leaves a verifier report with nothing missing and nothing duplicated.
// Then the security rule that submitted code never runs as root: a multilang
// command `sh -c id` submitted to a cluster started by root runs as the
// unprivileged supervisor.worker.user (nobody by default).

#include <pwd.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
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

// `tempest dev --supervisors N` in `dir`, as a user starts it (ui.port=0):
// waits for "ready" and reads nimbus's address. Failures are fatal.
void StartDev(const TempDir& dir, int supervisors, std::unique_ptr<os::ChildProcess>& dev,
              std::optional<std::string>& nimbus) {
  os::ChildProcess::Options o;
  o.argv = {TempestBinary(),     "dev", "--supervisors", std::to_string(supervisors), "--dir",
            dir.File("cluster"), "-c",  "ui.port=0"};
  o.stdout_path = dir.File("dev.out");
  o.stderr_path = dir.File("dev.err");
  auto started = os::ChildProcess::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  dev = *std::move(started);
  ASSERT_TRUE(WaitForLineWithPrefix(dir.File("dev.out"), "ready", seconds(180)).has_value())
      << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
  nimbus = WaitForLineWithPrefix(dir.File("dev.out"), "nimbus=", seconds(1));
  ASSERT_TRUE(nimbus.has_value());
}

TEST(ClusterDevTest, SubmitRunsAcrossTwoSupervisorsAndCleanKillLosesNothing) {
  TempDir dir("tempest-dev-cluster");
  std::unique_ptr<os::ChildProcess> dev;
  std::optional<std::string> nimbus;
  StartDev(dir, 2, dev, nimbus);
  ASSERT_FALSE(HasFatalFailure());
  int commands = 0;
  auto tempest = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {TempestBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--nimbus");
    argv.push_back(*nimbus);
    return RunCommand(argv, dir.File(absl::StrCat("cmd-", ++commands)), milliseconds(60000));
  };

  const std::string out = dir.File("gv");
  std::ofstream(dir.File("topology.yaml")) << ExampleWithPaths(
      SourceDir() + "/examples/cluster-generator-verifier.yaml", "${ENV-OUT}/cluster-gv", out);
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
  EXPECT_TRUE(Eventually(seconds(60),
                         [&] {
                           supervisors_with_workers.clear();
                           for (int s = 1; s <= 2; ++s) {
                             const auto workers = std::filesystem::path(dir.File("cluster")) /
                                                  absl::StrCat("supervisor-", s) / "workers";
                             std::error_code ec;
                             for (const auto& slot :
                                  std::filesystem::directory_iterator(workers, ec)) {
                               if (std::filesystem::exists(slot.path() / "heartbeat")) {
                                 supervisors_with_workers.insert(absl::StrCat(s));
                               }
                             }
                           }
                           return supervisors_with_workers.size() == 2;
                         }))
      << "workers on " << supervisors_with_workers.size() << " supervisors";

  // Every seq arrives (the spout paces itself with max.spout.pending).
  json verified;
  EXPECT_TRUE(Eventually(
      seconds(240),
      [&] {
        CommandRun v = RunCommand(
            {TempestBinary(), "verify", out + "/verifier.log", "--expected", "200000", "--json"},
            dir.File(absl::StrCat("verify-", ++commands)), milliseconds(60000));
        verified = json::parse(v.out, nullptr, false);
        return !verified.is_discarded() && verified.value("unique", 0) == 200000;
      },
      milliseconds(2000)))
      << verified.dump();

  CommandRun kill = tempest({"kill", "cluster-generator-verifier", "-w", "3"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
  // The verifier writes its report when its worker closes it, after the
  // kill's wait, when nimbus removes the assignment.
  ASSERT_TRUE(Eventually(seconds(90), [&] {
    return std::filesystem::exists(out + "/report.json");
  })) << "no report";
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
  dev->Stop(seconds(60));
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

// The uid a submitted command should run as: the default worker user under
// root, else the user who started the cluster.
uid_t ExpectedWorkerUid() {
  if (::geteuid() != 0) return ::geteuid();
  const struct passwd* nobody = ::getpwnam("nobody");
  return nobody != nullptr ? nobody->pw_uid : 0;
}

// Real uid of a running process, from /proc/PID/status ("Uid: real eff ...").
std::optional<uid_t> ProcessUid(const std::string& pid) {
  std::ifstream status("/proc/" + pid + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Uid:", 0) == 0) return static_cast<uid_t>(std::stoul(line.substr(4)));
  }
  return std::nullopt;
}

TEST(ClusterDevTest, SubmittedMultilangCommandNeverRunsAsRoot) {
  const uid_t expected = ExpectedWorkerUid();
  ASSERT_NE(expected, 0u) << "this host has no 'nobody' account to run workers as";
  TempDir dir("tempest-dev-uid");
  std::unique_ptr<os::ChildProcess> dev;
  std::optional<std::string> nimbus;
  StartDev(dir, 1, dev, nimbus);
  ASSERT_FALSE(HasFatalFailure());

  // The hostile submission: a "bolt" that is a shell command reporting who
  // it runs as, and then never speaks the protocol.
  const std::string id_file = dir.File("id.txt");
  std::ofstream(dir.File("topology.yaml")) << R"(name: who-am-i
spouts:
  - id: seq
    className: tempest.SequenceSpout
bolts:
  - id: shell
    className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
    constructorArgs:
      - ["sh", "-c", "id > )" << id_file << R"(.tmp && mv )"
                                           << id_file << ".tmp " << id_file << R"(; exec sleep 30"]
      - ["out"]
streams:
  - from: seq
    to: shell
    grouping: {type: SHUFFLE}
)";
  CommandRun submit =
      RunCommand({TempestBinary(), "submit", dir.File("topology.yaml"), "--nimbus", *nimbus},
                 dir.File("submit"), milliseconds(60000));
  ASSERT_EQ(submit.exit_code, 0) << submit.err;

  ASSERT_TRUE(Eventually(seconds(120), [&] { return std::filesystem::exists(id_file); }))
      << "the submitted command never ran";
  const std::string id = ReadFileOrEmpty(id_file);
  EXPECT_EQ(id.rfind(absl::StrCat("uid=", expected, "("), 0), 0u) << id;
  EXPECT_EQ(id.find("uid=0("), std::string::npos) << id;

  // The worker process itself (plugins run in it) is not root either.
  int workers = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = ReadFileOrEmpty("/proc/" + pid + "/cmdline");
    if (cmdline.find("who-am-i") == std::string::npos ||
        cmdline.find("--supervisor-id") == std::string::npos) {
      continue;
    }
    ++workers;
    EXPECT_EQ(ProcessUid(pid), std::optional<uid_t>(expected)) << cmdline;
  }
  EXPECT_GT(workers, 0) << "no worker process of who-am-i found";

  RunCommand({TempestBinary(), "kill", "who-am-i", "-w", "0", "--nimbus", *nimbus},
             dir.File("kill"), milliseconds(60000));
  dev->Stop(seconds(60));
  if (HasFailure()) {
    std::cerr << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"));
  }
}

}  // namespace
}  // namespace tempest::testing
