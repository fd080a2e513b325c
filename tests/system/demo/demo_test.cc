// README.md's first command, ./deploy/demo.sh, as a new user meets it: the
// script it ends in (deploy/scripts/demo-run.sh) run against the built
// binary from an empty directory, as root (whose cluster workers then run as
// accounts of their own) and as an unprivileged user; and, when a step
// fails, the demo keeps its files, says where they are and stops what it
// started.

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "common/os/loopback.h"
#include "common/os/privileges.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

using std::chrono::milliseconds;

std::string SourceDir() {
  const char* s = std::getenv("TEMPEST_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

std::string DemoScript() { return SourceDir() + "/deploy/scripts/demo-run.sh"; }

// Runs the demo from `cwd` with TMPDIR `tmp` (and `env`), as `user`
// (nullopt: this process's own account).
CommandRun RunDemo(const std::string& cwd, const std::string& tmp, const std::string& log,
                   const std::optional<os::UnixUser>& user = std::nullopt,
                   std::map<std::string, std::string> env = {}) {
  std::vector<std::string> argv;
  if (user.has_value()) {
    argv = {"setpriv", "--reuid=" + std::to_string(user->uid),
            "--regid=" + std::to_string(user->gid), "--clear-groups", "--"};
  }
  argv.insert(argv.end(), {"bash", "-c", "cd \"$1\" && exec bash \"$2\" \"$3\"", "demo", cwd,
                           DemoScript(), TempestBinary()});
  env["TMPDIR"] = tmp;
  return RunCommand(argv, log, std::chrono::minutes(8), env);
}

// What the demo prints when every step worked.
void ExpectCompleteDemo(const CommandRun& run) {
  ASSERT_TRUE(run.finished) << "the demo did not end within 8 minutes:\n" << run.out;
  ASSERT_EQ(run.exit_code, 0) << "stdout:\n" << run.out << "\nstderr:\n" << run.err;
  EXPECT_TRUE(absl::StrContains(run.out, "consumed 10000 distinct records")) << run.out;
  EXPECT_TRUE(absl::StrContains(run.out, "verifier report after a clean kill: ")) << run.out;
  EXPECT_TRUE(absl::StrContains(run.out, "== demo complete")) << run.out;
}

bool HoldsDemoDir(const std::string& tmp) {
  for (const auto& entry : std::filesystem::directory_iterator(tmp)) {
    if (absl::StartsWith(entry.path().filename().string(), "tempest-demo-")) return true;
  }
  return false;
}

// A directory `owner` has to itself, as a user's home would be.
std::string OwnDir(const std::string& path, uid_t uid, gid_t gid) {
  EXPECT_EQ(::mkdir(path.c_str(), 0700), 0) << path;
  EXPECT_EQ(::chown(path.c_str(), uid, gid), 0) << path;
  return path;
}

// Under root, TMPDIR (0700, as a user's own would be) is closed to the
// cluster's workers: the cluster step writes where `tempest dev` lets them.
TEST(DemoTest, RunsFromACleanDirectory) {
  TempDir dir("tempest-demo-test");
  const std::string cwd = OwnDir(dir.File("cwd"), ::geteuid(), ::getegid());
  const std::string tmp = OwnDir(dir.File("tmp"), ::geteuid(), ::getegid());
  const CommandRun run = RunDemo(cwd, tmp, dir.File("demo"));
  ExpectCompleteDemo(run);
  EXPECT_FALSE(HoldsDemoDir(tmp)) << "a demo that worked leaves nothing behind";
  EXPECT_TRUE(std::filesystem::is_empty(cwd)) << "the demo wrote into the directory it ran from";
}

TEST(DemoTest, RunsAsAnUnprivilegedUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  absl::StatusOr<os::UnixUser> nobody = os::LookUpUnprivilegedUser("nobody");
  ASSERT_TRUE(nobody.ok()) << nobody.status();
  for (const std::string& path : {TempestBinary(), DemoScript()}) {
    if (std::optional<std::string> closed = os::FirstDirClosedTo(path, *nobody)) {
      GTEST_SKIP() << "nobody cannot reach " << path << " (" << *closed << " is private)";
    }
  }
  TempDir dir("tempest-demo-test");
  ASSERT_EQ(::chmod(dir.path().c_str(), 0711), 0);
  ASSERT_EQ(os::FirstDirClosedTo(dir.path(), *nobody), std::nullopt) << "set TMPDIR elsewhere";
  const std::string home = OwnDir(dir.File("home"), nobody->uid, nobody->gid);
  const std::string cwd = OwnDir(dir.File("cwd"), nobody->uid, nobody->gid);
  const std::string tmp = OwnDir(dir.File("tmp"), nobody->uid, nobody->gid);
  const CommandRun run =
      RunDemo(cwd, tmp, dir.File("demo"), *nobody, {{"HOME", home}});
  ExpectCompleteDemo(run);
  EXPECT_FALSE(HoldsDemoDir(tmp));
}

TEST(DemoTest, AFailedStepKeepsTheDirectoryAndSaysWhere) {
  TempDir dir("tempest-demo-test");
  const std::string cwd = OwnDir(dir.File("cwd"), ::geteuid(), ::getegid());
  const std::string tmp = OwnDir(dir.File("tmp"), ::geteuid(), ::getegid());
  // kcat, the demo's third step, fails as it would without a broker.
  const std::string bin = OwnDir(dir.File("bin"), ::geteuid(), ::getegid());
  {
    std::ofstream kcat(bin + "/kcat");
    kcat << "#!/bin/sh\necho 'kcat: broken on purpose' >&2\nexit 1\n";
  }
  ASSERT_EQ(::chmod((bin + "/kcat").c_str(), 0755), 0);
  const char* path = std::getenv("PATH");
  const CommandRun run = RunDemo(cwd, tmp, dir.File("demo"), std::nullopt,
                                 {{"PATH", bin + ":" + (path != nullptr ? path : "/usr/bin")}});
  ASSERT_TRUE(run.finished) << run.out;
  EXPECT_NE(run.exit_code, 0) << run.out;
  const std::string said = "its files are kept in ";
  const size_t at = run.err.find(said);
  ASSERT_NE(at, std::string::npos) << run.err;
  const std::string rest = run.err.substr(at + said.size());
  const std::string kept = rest.substr(0, rest.find('\n'));
  EXPECT_TRUE(absl::StartsWith(kept, tmp + "/tempest-demo-")) << kept;
  EXPECT_TRUE(std::filesystem::exists(kept + "/zk.out")) << kept;
  EXPECT_TRUE(std::filesystem::exists(kept + "/kafka.out")) << kept;
  // What it started is stopped all the same.
  const std::string zk_line = "zookeeper=127.0.0.1:";
  const size_t zk = run.out.find(zk_line);
  ASSERT_NE(zk, std::string::npos) << run.out;
  int port = 0;
  const std::string tail = run.out.substr(zk + zk_line.size());
  ASSERT_TRUE(absl::SimpleAtoi(tail.substr(0, tail.find('\n')), &port)) << tail;
  EXPECT_TRUE(Eventually(milliseconds(30000), [&] {
    return !os::TcpPortAccepts("127.0.0.1", port, milliseconds(500));
  })) << "the demo's ZooKeeper still serves after the demo failed";
}

}  // namespace
}  // namespace tempest::testing
