// `tempest dev-zookeeper` runs a real server that a real client can use.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include "common/os/child_process.h"
#include "tests/support/output_file.h"
#include "tests/support/raw_zk_client.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

using std::chrono::seconds;

TEST(DevZookeeperCommandTest, PrintsConnectLineAndServesAClient) {
  TempDir dir("dev-zk-test");
  os::ChildProcess::Options options;
  options.argv = {TempestBinary(), "dev-zookeeper", "--dir", dir.File("zk")};
  options.stdout_path = dir.File("stdout");
  options.stderr_path = dir.File("stderr");
  auto child = os::ChildProcess::Start(options);
  ASSERT_TRUE(child.ok()) << child.status();

  auto connect = WaitForLineWithPrefix(dir.File("stdout"), "zookeeper=", seconds(90));
  ASSERT_TRUE(connect.has_value()) << ReadFileOrEmpty(dir.File("stderr"));
  EXPECT_EQ(connect->rfind("127.0.0.1:", 0), 0u) << *connect;

  auto client = RawZkClient::Connect(*connect, 4000, seconds(20));
  ASSERT_NE(client, nullptr);
  ASSERT_EQ(client->Create("/hello", "world"), ZOK);
  auto [rc, data] = client->Get("/hello");
  EXPECT_EQ(rc, ZOK);
  EXPECT_EQ(data, "world");
  client.reset();

  // SIGTERM stops the server and the command exits cleanly.
  (*child)->SignalGroup(SIGTERM);
  auto status = (*child)->WaitFor(seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << os::DescribeWaitStatus(*status);
}

TEST(DevZookeeperCommandTest, RejectsABadPortAsAUsageError) {
  TempDir dir("dev-zk-usage");
  os::ChildProcess::Options options;
  options.argv = {TempestBinary(), "dev-zookeeper", "--port", "70000"};
  options.stdout_path = dir.File("stdout");
  options.stderr_path = dir.File("stderr");
  auto child = os::ChildProcess::Start(options);
  ASSERT_TRUE(child.ok());
  auto status = (*child)->WaitFor(seconds(10));
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(WEXITSTATUS(*status), 2);
  EXPECT_NE(ReadFileOrEmpty(dir.File("stderr")).find("tempest:"), std::string::npos);
}

}  // namespace
}  // namespace tempest::testing
