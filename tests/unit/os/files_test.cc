#include "common/os/files.h"

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::os {
namespace {

TEST(FilesTest, WriteFileAtomicallyCreatesTheDirectoryAndReplacesContent) {
  testing::TempDir dir("tempest-files");
  const std::string path = dir.File("sub/report.json");
  ASSERT_TRUE(WriteFileAtomically(path, "one").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "two").ok());
  absl::StatusOr<std::string> got = ReadSmallFile(path);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, "two");
  // No temporary file is left behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.File("sub"))) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST(FilesTest, ReadSmallFileRefusesLargeFilesAndReportsMissingOnes) {
  testing::TempDir dir("tempest-files");
  EXPECT_TRUE(absl::IsNotFound(ReadSmallFile(dir.File("absent")).status()));
  ASSERT_TRUE(WriteFileAtomically(dir.File("big"), std::string(100, 'x')).ok());
  EXPECT_TRUE(absl::IsOutOfRange(ReadSmallFile(dir.File("big"), 99).status()));
  absl::StatusOr<std::string> exact = ReadSmallFile(dir.File("big"), 100);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(exact->size(), 100u);
}

TEST(FilesTest, WriteFileAtomicallyFailsCleanlyWhereItCannotWrite) {
  testing::TempDir dir("tempest-files");
  ASSERT_TRUE(WriteFileAtomically(dir.File("plain"), "x").ok());
  // A regular file where a directory is needed.
  EXPECT_FALSE(WriteFileAtomically(dir.File("plain/child"), "y").ok());
}

}  // namespace
}  // namespace tempest::os
