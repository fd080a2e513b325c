// docs/user-guide.md, "Where topologies write": `tempest dev` as root with a
// --dir its workers cannot pass through (under a 0700 directory) says so in
// one line at start and prints as `output=` a folder made for them; it opens
// none of the user's directories, and removes the folder when it stops if
// nothing was written there. (The demo test runs a topology writing there.)

#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "common/os/privileges.h"
#include "gtest/gtest.h"
#include "tests/support/tempest_dev.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of the first line of `text` starting with `prefix`.
std::string LineValue(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (absl::StartsWith(line, prefix)) return line.substr(prefix.size());
  }
  return "";
}

TEST(DevOutputTest, PrivateDirGetsAnOutputFolderTheWorkersReach) {
  if (::geteuid() != 0) GTEST_SKIP() << "workers run as other accounts only under root";
  absl::StatusOr<os::UnixUser> nobody = os::LookUpUnprivilegedUser("nobody");
  ASSERT_TRUE(nobody.ok()) << nobody.status();
  TempDir dir("tempest-dev-private");
  ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);  // {dir}/cluster is beyond the workers' reach
  ASSERT_TRUE(os::FirstDirClosedTo(dir.File("cluster"), *nobody).has_value());
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> dev = StartTempestDev(dir, {});
  ASSERT_TRUE(dev.ok()) << dev.status();
  const std::string err = Read(dir.File("dev.err"));
  const std::string output = LineValue(Read(dir.File("dev.out")), "output=");
  ASSERT_FALSE(output.empty()) << Read(dir.File("dev.out"));
  EXPECT_TRUE(absl::StrContains(err, "cannot pass through " + dir.path() + ":")) << err;
  EXPECT_TRUE(absl::StrContains(err, "topology output goes to " + output)) << err;
  EXPECT_FALSE(absl::StartsWith(output, dir.path())) << output;
  EXPECT_EQ(os::FirstDirClosedTo(output, *nobody), std::nullopt) << output;
  struct stat st {};
  ASSERT_EQ(::stat(output.c_str(), &st), 0) << output;
  EXPECT_EQ(st.st_mode & 07777, 02770u);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_gid, nobody->gid);
  ASSERT_EQ(::stat(dir.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u) << "tempest dev opened the user's directory";

  (*dev)->Stop(std::chrono::seconds(30));
  EXPECT_FALSE(std::filesystem::exists(output)) << "an empty output folder outlived tempest dev";
}

TEST(DevOutputTest, ReachableDirHoldsTheOutputFolder) {
  TempDir dir("tempest-dev-open");
  ASSERT_EQ(::chmod(dir.path().c_str(), 0711), 0);
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> dev = StartTempestDev(dir, {});
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ(LineValue(Read(dir.File("dev.out")), "output="), dir.File("cluster/output"));
  EXPECT_FALSE(absl::StrContains(Read(dir.File("dev.err")), "cannot pass through"));
  (*dev)->Stop(std::chrono::seconds(30));
}

}  // namespace
}  // namespace tempest::testing
