// Looking up the account workers run as: uid 0 is refused whatever it is
// called, and an unknown name is a clear NotFound.

#include "common/os/privileges.h"

#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "common/os/files.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"

namespace tempest::os {
namespace {

TEST(PrivilegesTest, RootIsNeverAnUnprivilegedUser) {
  absl::StatusOr<UnixUser> by_name = LookUpUnprivilegedUser("root");
  EXPECT_TRUE(absl::IsInvalidArgument(by_name.status())) << by_name.status();
  EXPECT_NE(by_name.status().message().find("never run as root"), std::string_view::npos);
  absl::StatusOr<UnixUser> by_uid = LookUpUnprivilegedUser("0");
  EXPECT_TRUE(absl::IsInvalidArgument(by_uid.status())) << by_uid.status();
}

TEST(PrivilegesTest, UnknownUserIsNotFound) {
  absl::StatusOr<UnixUser> user = LookUpUnprivilegedUser("no-such-tempest-user");
  EXPECT_TRUE(absl::IsNotFound(user.status())) << user.status();
  EXPECT_NE(user.status().message().find("no-such-tempest-user"), std::string_view::npos);
  EXPECT_TRUE(absl::IsInvalidArgument(LookUpUnprivilegedUser("").status()));
}

TEST(PrivilegesTest, NobodyResolvesByNameAndByUid) {
  const struct passwd* nobody = ::getpwnam("nobody");
  ASSERT_NE(nobody, nullptr) << "Debian always has 'nobody'";
  absl::StatusOr<UnixUser> user = LookUpUnprivilegedUser("nobody");
  ASSERT_TRUE(user.ok()) << user.status();
  EXPECT_EQ(user->uid, nobody->pw_uid);
  EXPECT_EQ(user->gid, nobody->pw_gid);
  absl::StatusOr<UnixUser> by_uid = LookUpUnprivilegedUser(std::to_string(nobody->pw_uid));
  ASSERT_TRUE(by_uid.ok()) << by_uid.status();
  EXPECT_EQ(by_uid->name, "nobody");
}

// A worker opens what it is told by absolute name: every directory on the
// way must let its account search it.
TEST(PrivilegesTest, FirstDirClosedToNamesThePrivateParent) {
  absl::StatusOr<UnixUser> nobody = LookUpUnprivilegedUser("nobody");
  ASSERT_TRUE(nobody.ok()) << nobody.status();
  testing::TempDir dir("tempest-reach");
  const std::string inner = dir.File("private/out");
  ASSERT_EQ(::mkdir(dir.File("private").c_str(), 0700), 0);
  EXPECT_EQ(FirstDirClosedTo(inner, *nobody), dir.File("private"));
  EXPECT_EQ(FirstDirClosedTo(dir.File("private/../private/out/more"), *nobody),
            dir.File("private"));
  ASSERT_EQ(::chmod(dir.File("private").c_str(), 0711), 0);
  EXPECT_EQ(FirstDirClosedTo(inner, *nobody), std::nullopt);
  // Only the class the account falls in counts: the owner's bits for its own
  // directory, the group's for its group's.
  ASSERT_EQ(::chmod(dir.File("private").c_str(), 0770), 0);
  EXPECT_EQ(FirstDirClosedTo(inner, *nobody), dir.File("private"));
  UnixUser in_group = *nobody;
  struct stat st {};
  ASSERT_EQ(::stat(dir.File("private").c_str(), &st), 0);
  in_group.gid = st.st_gid;
  EXPECT_EQ(FirstDirClosedTo(inner, in_group), std::nullopt);
  UnixUser owner = in_group;
  owner.uid = st.st_uid;
  ASSERT_EQ(::chmod(dir.File("private").c_str(), 0070), 0);
  EXPECT_EQ(FirstDirClosedTo(inner, owner), dir.File("private"));
  ASSERT_EQ(::chmod(dir.File("private").c_str(), 0700), 0);
}

// A private TMPDIR is passed over for /tmp, which every account may enter.
TEST(PrivilegesTest, TempParentReachableBySkipsAPrivateTmpdir) {
  absl::StatusOr<UnixUser> nobody = LookUpUnprivilegedUser("nobody");
  ASSERT_TRUE(nobody.ok()) << nobody.status();
  testing::TempDir dir("tempest-reach");
  ASSERT_EQ(::chmod(dir.path().c_str(), 0700), 0);
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before != nullptr ? before : "";
  ::setenv("TMPDIR", dir.path().c_str(), 1);
  EXPECT_EQ(TempParentReachableBy(*nobody), std::optional<std::string>("/tmp"));
  ASSERT_EQ(::chmod(dir.path().c_str(), 0711), 0);
  EXPECT_EQ(TempParentReachableBy(*nobody), std::optional<std::string>(dir.path()));
  if (before != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
}

TEST(PrivilegesTest, AccountNameOfKnowsRootAndNotAnUnusedUid) {
  EXPECT_EQ(AccountNameOf(0).value_or(""), "root");
  EXPECT_FALSE(AccountNameOf(1900006700).has_value());
  EXPECT_TRUE(UidIsMapped(::getuid()));  // our own uid always is
}

TEST(PrivilegesTest, KillEveryProcessOfReachesExactlyThatUid) {
  EXPECT_TRUE(absl::IsInvalidArgument(KillEveryProcessOf(0)));
  if (!RunningAsRoot()) GTEST_SKIP() << "needs root to take on another uid";
  constexpr uid_t kVictim = 1900006701;
  constexpr uid_t kBystander = 1900006702;
  auto start_as = [](uid_t uid) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (::syscall(SYS_setresuid, uid, uid, uid) != 0) ::_exit(1);
      for (;;) ::pause();
    }
    return pid;
  };
  const pid_t victim = start_as(kVictim);
  const pid_t bystander = start_as(kBystander);
  ASSERT_GT(victim, 0);
  ASSERT_GT(bystander, 0);
  // Each has taken on its uid ("Uid:\treal\teffective\tsaved\tfs").
  auto runs_as = [](pid_t pid, uid_t uid) {
    const std::string want = "Uid:\t" + std::to_string(uid) + "\t";
    return ReadSmallFile("/proc/" + std::to_string(pid) + "/status").value_or("").find(want) !=
           std::string::npos;
  };
  ASSERT_FALSE(AccountNameOf(kVictim).has_value());
  ASSERT_TRUE(testing::Eventually(std::chrono::seconds(10), [&] {
    return runs_as(victim, kVictim) && runs_as(bystander, kBystander);
  }));
  ASSERT_TRUE(KillEveryProcessOf(kVictim).ok());
  int status = 0;
  ASSERT_EQ(::waitpid(victim, &status, 0), victim);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  // Another uid's process lives on.
  EXPECT_EQ(::waitpid(bystander, &status, WNOHANG), 0);
  ::kill(bystander, SIGKILL);
  ::waitpid(bystander, &status, 0);
}

}  // namespace
}  // namespace tempest::os
