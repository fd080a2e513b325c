// The discovery files through which client verbs find a `tempest dev`
// cluster's API token and ZooKeeper auth file: their keys, where they live,
// and what a lookup accepts.

#include "cli/dev_token.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::cli {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

unsigned Mode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(DevTokenKeyTest, OnlyAddressesOfThisMachineHaveAKey) {
  EXPECT_EQ(DevTokenKey("127.0.0.1", 8080), "127.0.0.1:8080");
  EXPECT_EQ(DevTokenKey("127.1.2.3", 8080), "127.1.2.3:8080");
  EXPECT_EQ(DevTokenKey("localhost", 8080), "127.0.0.1:8080");
  EXPECT_EQ(DevTokenKey("LocalHost", 8080), "127.0.0.1:8080");
  EXPECT_EQ(DevTokenKey("0.0.0.0", 8080), "127.0.0.1:8080");
  EXPECT_EQ(DevTokenKey("::1", 8080), "127.0.0.1:8080");
  EXPECT_EQ(DevTokenKey("[::1]", 8080), "127.0.0.1:8080");
  EXPECT_EQ(DevTokenKey("10.0.0.1", 8080), std::nullopt);
  EXPECT_EQ(DevTokenKey("nimbus.example.com", 8080), std::nullopt);
  EXPECT_EQ(DevTokenKey("::2", 8080), std::nullopt);
  EXPECT_EQ(DevTokenKey("127.0.0.1", 0), std::nullopt);
  EXPECT_EQ(DevTokenKey("127.0.0.1", 70000), std::nullopt);
  EXPECT_EQ(DevTokenKey("", 8080), std::nullopt);
}

TEST(DevTokenDirTest, LivesUnderHome) {
  EXPECT_EQ(DevTokenDir("/home/ann"), "/home/ann/.tempest/dev");
  EXPECT_EQ(DevTokenDir(""), "");
  EXPECT_EQ(DevTokenDiscoveryPath("/h/.tempest/dev", "localhost", 9),
            "/h/.tempest/dev/127.0.0.1:9.token-file");
  EXPECT_EQ(DevTokenDiscoveryPath("", "localhost", 9), std::nullopt);
  EXPECT_EQ(DevTokenDiscoveryPath("/h/.tempest/dev", "10.1.1.1", 9), std::nullopt);
}

TEST(DevTokenDiscoveryTest, WrittenPrivatelyFoundByAnyLocalNameAndRemoved) {
  testing::TempDir home("tempest-dev-token");
  const std::string dir = DevTokenDir(home.path());
  const std::string token_file = home.File("api-token");
  std::ofstream(token_file) << "secret\n";
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 4242), std::nullopt);  // nothing recorded

  std::string written;
  ASSERT_TRUE(WriteDevTokenDiscovery(dir, "127.0.0.1", 4242, token_file, &written).ok());
  EXPECT_EQ(written, dir + "/127.0.0.1:4242.token-file");
  EXPECT_EQ(Slurp(written), absl::StrCat(token_file, "\n", ::getpid(), "\n"));
  EXPECT_EQ(Mode(home.path() + "/.tempest"), 0700u);
  EXPECT_EQ(Mode(dir), 0700u);
  EXPECT_EQ(Mode(written), 0600u);

  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 4242), token_file);
  EXPECT_EQ(FindDevTokenFile(dir, "localhost", 4242), token_file);
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 4243), std::nullopt);  // another port
  EXPECT_EQ(FindDevTokenFile(dir, "192.0.2.1", 4242), std::nullopt);  // not this machine
  EXPECT_EQ(FindDevTokenFile("", "127.0.0.1", 4242), std::nullopt);   // no HOME

  // Another file named: removal leaves the record alone.
  RemoveDevTokenDiscovery(written, home.File("other-token"));
  EXPECT_TRUE(std::filesystem::exists(written));
  RemoveDevTokenDiscovery(written, token_file);
  EXPECT_FALSE(std::filesystem::exists(written));
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 4242), std::nullopt);
}

TEST(DevTokenDiscoveryTest, LookupSkipsUnusableRecords) {
  testing::TempDir home("tempest-dev-token");
  const std::string dir = DevTokenDir(home.path());
  std::string written;
  // The token file it names is gone (a cluster that was killed).
  ASSERT_TRUE(WriteDevTokenDiscovery(dir, "127.0.0.1", 5000, home.File("gone"), &written).ok());
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 5000), std::nullopt);

  // A relative path is not trusted.
  std::ofstream(home.File("api-token")) << "secret\n";
  std::ofstream(written) << "api-token\n";
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 5000), std::nullopt);

  // A directory others may write into is not trusted either.
  std::ofstream(written) << home.File("api-token") << "\n";
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 5000), home.File("api-token"));
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 5000), std::nullopt);
  // Writing a record makes it private again.
  ASSERT_TRUE(
      WriteDevTokenDiscovery(dir, "127.0.0.1", 5000, home.File("api-token"), &written).ok());
  EXPECT_EQ(Mode(dir), 0700u);
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 5000), home.File("api-token"));
}

TEST(DevTokenDiscoveryTest, RecordOfAKilledDevIsIgnored) {
  testing::TempDir home("tempest-dev-token");
  const std::string dir = DevTokenDir(home.path());
  std::ofstream(home.File("zk-auth")) << "tempest-dev:pw\n";
  std::string written;
  ASSERT_TRUE(WriteDevTokenDiscovery(dir, "127.0.0.1", 5001, home.File("zk-auth"), &written,
                                     kDevZkAuthSuffix)
                  .ok());
  EXPECT_EQ(written, dir + "/127.0.0.1:5001.zk-auth-file");
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 5001, kDevZkAuthSuffix), home.File("zk-auth"));
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 5001), std::nullopt);  // not a token record

  // A child that has exited and been reaped: its pid names no process.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  std::ofstream(written) << home.File("zk-auth") << "\n" << child << "\n";
  EXPECT_EQ(FindDevTokenFile(dir, "127.0.0.1", 5001, kDevZkAuthSuffix), std::nullopt);
}

TEST(DevTokenDiscoveryTest, RemoteNimbusIsNeverRecorded) {
  testing::TempDir home("tempest-dev-token");
  std::string written;
  absl::Status s = WriteDevTokenDiscovery(DevTokenDir(home.path()), "203.0.113.5", 8080,
                                          home.File("api-token"), &written);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_TRUE(written.empty());
}

}  // namespace
}  // namespace tempest::cli
