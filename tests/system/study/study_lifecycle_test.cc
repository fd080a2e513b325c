// `tempest study` as docs/study-guide.md promises it to an operator: run as
// root with --out under a private directory (root's home is one), its
// topologies' workers, which run as accounts of their own, still write their
// sinks and the results land in --out; and SIGTERM or Ctrl-C (SIGINT) stops
// the study and every process it started.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The smallest study there is: one scenario, one guarantee, a few seconds of
// records.
std::vector<std::string> SmallStudy(const std::string& out) {
  return {TempestBinary(), "study", "--scenario", "bolt-failures", "--guarantee", "at-least-once",
          "--records", "1000", "--rate", "250", "--seed", "3", "--out", out};
}

TEST(StudyLifecycleTest, OutUnderAPrivateDirectoryAsRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "workers run as accounts of their own only under root";
  TempDir dir("tempest-study-private");
  ASSERT_EQ(::chmod(dir.path().c_str(), 0711), 0);  // only `home` below is private
  const std::string home = dir.File("home");
  ASSERT_EQ(::mkdir(home.c_str(), 0700), 0);
  const std::string out = home + "/study";
  CommandRun r = RunCommand(SmallStudy(out), dir.File("study"), std::chrono::minutes(6));
  ASSERT_TRUE(r.finished) << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err << Read(out + "/report.md");
  // It says where the workers write instead, once.
  EXPECT_TRUE(absl::StrContains(r.err, "workers cannot pass through " + home + ":")) << r.err;

  json results = json::parse(Read(out + "/results.json"), nullptr, false);
  ASSERT_FALSE(results.is_discarded()) << r.err;
  ASSERT_EQ(results["runs"].size(), 1u) << results.dump();
  const json& run = results["runs"][0];
  EXPECT_FALSE(run.value("not_tested", false)) << run.dump();
  EXPECT_EQ(run["lost"], 0) << run.dump();
  // The sink's own file came home into --out; the private directory was not
  // opened up to get it there.
  const std::string sink = out + "/runs/bolt-failures/at-least-once/sink.log";
  EXPECT_FALSE(Read(sink).empty()) << sink;
  struct stat st {};
  ASSERT_EQ(::stat(home.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // The folder made for the workers is gone.
  const size_t at = r.err.find(": topologies write to ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string rest = r.err.substr(at + std::string(": topologies write to ").size());
  const std::string staging = rest.substr(0, rest.find(','));
  EXPECT_FALSE(std::filesystem::exists(staging)) << staging;
}

// Every process below `root` (by parent pid) and every process whose command
// line names `marker`, by pid, with its command line.
std::map<pid_t, std::string> ProcessesOf(pid_t root, const std::string& marker) {
  std::map<pid_t, pid_t> parent;
  std::map<pid_t, std::string> cmdline;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    const std::string stat = Read(entry.path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
    if (fields.size() < 2 || fields[0] == "Z") continue;  // exited, not yet reaped
    pid_t ppid = 0;
    if (!absl::SimpleAtoi(fields[1], &ppid)) continue;
    parent[pid] = ppid;
    std::string cmd = Read(entry.path().string() + "/cmdline");
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    cmdline[pid] = cmd;
  }
  std::map<pid_t, std::string> out;
  for (const auto& [pid, cmd] : cmdline) {
    bool below = absl::StrContains(cmd, marker);
    for (pid_t p = pid; !below && p > 1; p = parent.count(p) > 0 ? parent[p] : 0) {
      below = p == root;
    }
    if (below) out[pid] = cmd;
  }
  return out;
}

bool Alive(pid_t pid, const std::string& cmd) {
  const std::string now = Read("/proc/" + std::to_string(pid) + "/cmdline");
  if (now.empty()) return false;  // gone, or a zombie
  std::string text = now;
  std::replace(text.begin(), text.end(), '\0', ' ');
  return text == cmd;  // the same pid with another command line is another process
}

void StopsOnSignal(int signal) {
  TempDir dir("tempest-study-stop");
  const std::string out = dir.File("study");
  os::ChildProcess::Options o;
  o.argv = SmallStudy(out);
  o.argv.insert(o.argv.end(), {"--settle-timeout", "600"});
  o.stdout_path = dir.File("study.out");
  o.stderr_path = dir.File("study.err");
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> study = os::ChildProcess::Start(o);
  ASSERT_TRUE(study.ok()) << study.status();
  // Wait until the whole world runs, topologies and their workers included.
  ASSERT_TRUE(Eventually(milliseconds(240'000), [&] {
    return absl::StrContains(Read(dir.File("study.err")), ": producing ");
  })) << Read(dir.File("study.err"));
  const std::map<pid_t, std::string> started = ProcessesOf((*study)->pid(), out);
  int workers = 0;
  for (const auto& [pid, cmd] : started) workers += absl::StrContains(cmd, " worker ") ? 1 : 0;
  ASSERT_GE(started.size(), 6u) << "ZooKeeper, Kafka, nimbus, supervisors, workers";

  ASSERT_EQ(::kill((*study)->pid(), signal), 0);
  std::optional<int> status = (*study)->WaitFor(milliseconds(60'000));
  ASSERT_TRUE(status.has_value()) << "the study still runs a minute after the signal\n"
                                  << Read(dir.File("study.err"));
  std::set<std::string> left;
  EXPECT_TRUE(Eventually(milliseconds(30'000), [&] {
    left.clear();
    for (const auto& [pid, cmd] : started) {
      if (Alive(pid, cmd)) left.insert(std::to_string(pid) + ": " + cmd);
    }
    return left.empty();
  })) << "still running after the study exited:\n" << absl::StrJoin(left, "\n");
  for (const auto& [pid, cmd] : started) ::kill(pid, SIGKILL);  // nothing, if the test passed
  EXPECT_NE(Read(dir.File("study.err")).find("stopped"), std::string::npos)
      << Read(dir.File("study.err")) << " (" << workers << " workers seen)";
}

TEST(StudyLifecycleTest, SigtermStopsTheStudyAndEverythingItStarted) { StopsOnSignal(SIGTERM); }

TEST(StudyLifecycleTest, CtrlCStopsTheStudyAndEverythingItStarted) { StopsOnSignal(SIGINT); }

}  // namespace
}  // namespace tempest::testing
