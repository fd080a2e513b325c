#include "common/os/dir_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/os/files.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::os {
namespace {

namespace fs = std::filesystem;

// A directory with a precious file outside it, and a handle on the directory.
class DirFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.File("work"));
    ASSERT_TRUE(WriteFileAtomically(dir_.File("outside/precious"), "keep me").ok());
    absl::StatusOr<UniqueFd> fd = OpenDirectory(dir_.File("work"));
    ASSERT_TRUE(fd.ok()) << fd.status();
    work_ = *std::move(fd);
  }
  std::string Precious() { return ReadSmallFile(dir_.File("outside/precious")).value_or("?"); }

  testing::TempDir dir_{"tempest-dir-files"};
  UniqueFd work_;
};

TEST_F(DirFilesTest, ReadRefusesALinkAndAnythingButARegularFile) {
  fs::create_symlink(dir_.File("outside/precious"), dir_.File("work/link"));
  absl::StatusOr<std::string> through_link = ReadSmallFileAt(work_.get(), "link");
  EXPECT_TRUE(absl::IsFailedPrecondition(through_link.status())) << through_link.status();
  EXPECT_NE(through_link.status().message().find("symbolic link"), std::string::npos);

  ASSERT_EQ(::mkfifo(dir_.File("work/fifo").c_str(), 0600), 0);
  absl::StatusOr<std::string> fifo = ReadSmallFileAt(work_.get(), "fifo");  // must not block
  EXPECT_TRUE(absl::IsFailedPrecondition(fifo.status())) << fifo.status();
  EXPECT_NE(fifo.status().message().find("not a regular file"), std::string::npos);

  fs::create_directories(dir_.File("work/sub"));
  EXPECT_FALSE(ReadSmallFileAt(work_.get(), "sub").ok());
  EXPECT_TRUE(absl::IsNotFound(ReadSmallFileAt(work_.get(), "absent").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(ReadSmallFileAt(work_.get(), "../outside/precious").status()));
  EXPECT_TRUE(absl::IsInvalidArgument(ReadSmallFileAt(work_.get(), "..").status()));

  ASSERT_TRUE(WriteFileAtomicallyAt(work_.get(), "plain", std::string(10, 'x')).ok());
  EXPECT_EQ(ReadSmallFileAt(work_.get(), "plain").value_or(""), std::string(10, 'x'));
  EXPECT_TRUE(absl::IsOutOfRange(ReadSmallFileAt(work_.get(), "plain", 9).status()));
}

TEST_F(DirFilesTest, AtomicWriteReplacesALinkInsteadOfWritingThroughIt) {
  fs::create_symlink(dir_.File("outside/precious"), dir_.File("work/target"));
  // The temporary name is predictable: a link planted there is not followed.
  fs::create_symlink(dir_.File("outside/precious"),
                     dir_.File("work/.target.tmp." + std::to_string(::getpid())));
  ASSERT_TRUE(WriteFileAtomicallyAt(work_.get(), "target", "new", 0640).ok());
  EXPECT_EQ(Precious(), "keep me");
  EXPECT_FALSE(fs::is_symlink(dir_.File("work/target")));
  EXPECT_EQ(ReadSmallFile(dir_.File("work/target")).value_or(""), "new");
  EXPECT_EQ(fs::status(dir_.File("work/target")).permissions(),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_FALSE(fs::exists(fs::symlink_status(
      dir_.File("work/.target.tmp." + std::to_string(::getpid())))));
}

TEST_F(DirFilesTest, AppendRefusesALinkAndAFifo) {
  fs::create_symlink(dir_.File("outside/precious"), dir_.File("work/log"));
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenForAppendAt(work_.get(), "log").status()));
  // A dangling link would have been created through: nothing appears.
  fs::create_symlink(dir_.File("outside/created"), dir_.File("work/dangling"));
  EXPECT_FALSE(OpenForAppendAt(work_.get(), "dangling").ok());
  EXPECT_FALSE(fs::exists(dir_.File("outside/created")));
  ASSERT_EQ(::mkfifo(dir_.File("work/fifo").c_str(), 0600), 0);
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenForAppendAt(work_.get(), "fifo").status()));
  EXPECT_EQ(Precious(), "keep me");

  absl::StatusOr<UniqueFd> log = OpenForAppendAt(work_.get(), "fresh.log", 0600);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(::write(log->get(), "one\n", 4), 4);
  EXPECT_EQ(ReadSmallFile(dir_.File("work/fresh.log")).value_or(""), "one\n");
}

TEST_F(DirFilesTest, DirectoriesAreOpenedAndMadeWithoutFollowingLinks) {
  fs::create_directory_symlink(dir_.File("outside"), dir_.File("work/sub"));
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenDirectoryAt(work_.get(), "sub").status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(OpenDirectory(dir_.File("work/sub")).status()));
  EXPECT_TRUE(absl::IsAlreadyExists(MakeDirectoryAt(work_.get(), "sub", 0700).status()));
  absl::StatusOr<UniqueFd> made = MakeDirectoryAt(work_.get(), "made", 0710);
  ASSERT_TRUE(made.ok()) << made.status();
  struct stat st {};
  ASSERT_EQ(::fstat(made->get(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0710u);  // exactly, whatever the umask
}

TEST_F(DirFilesTest, RemoveTreeRemovesLinksNotTheirTargets) {
  fs::create_directories(dir_.File("work/tree/a/b"));
  std::ofstream(dir_.File("work/tree/a/b/file")) << "x";
  fs::create_directory_symlink(dir_.File("outside"), dir_.File("work/tree/a/to-outside"));
  fs::create_symlink(dir_.File("outside/precious"), dir_.File("work/tree/precious-link"));
  ASSERT_EQ(::mkfifo(dir_.File("work/tree/a/fifo").c_str(), 0600), 0);
  ASSERT_TRUE(RemoveTreeAt(work_.get(), "tree").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_.File("work/tree"))));
  EXPECT_EQ(Precious(), "keep me");
  EXPECT_TRUE(fs::exists(dir_.File("outside/precious")));

  // The name itself a link to a directory: the link goes, the directory stays.
  fs::create_directory_symlink(dir_.File("outside"), dir_.File("work/linked"));
  ASSERT_TRUE(RemoveTreeAt(work_.get(), "linked").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_.File("work/linked"))));
  EXPECT_EQ(Precious(), "keep me");
  EXPECT_TRUE(RemoveTreeAt(work_.get(), "absent").ok());
}

TEST_F(DirFilesTest, RemoveTreeRemovesTreesDeeperThanItKeepsOpen) {
  // Deeper than any number of descriptors a remover may hold at once.
  absl::StatusOr<UniqueFd> level = MakeDirectoryAt(work_.get(), "deep", 0700);
  ASSERT_TRUE(level.ok());
  for (int i = 0; i < 300; ++i) {
    level = MakeDirectoryAt(level->get(), "d", 0700);
    ASSERT_TRUE(level.ok()) << i << ": " << level.status();
  }
  ASSERT_EQ(::symlinkat(dir_.File("outside").c_str(), level->get(), "escape"), 0);
  level = UniqueFd();
  ASSERT_TRUE(RemoveTreeAt(work_.get(), "deep").ok());
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir_.File("work/deep"))));
  EXPECT_EQ(Precious(), "keep me");
}

}  // namespace
}  // namespace tempest::os
