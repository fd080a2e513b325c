// `tempest supervisor` as operators run it: the real binary against a real
// ZooKeeper, registration, the persisted id, a clean stop on SIGTERM.

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <string>

#include "common/coord/zk_session.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "tempest/v1/cluster.pb.h"
#include "tests/support/output_file.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class SupervisorCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = ZkEnsemble::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = *std::move(zk);
    std::ofstream(dir_.File("tempest.yaml"))
        << DaemonConfigPreamble(zk_->ConnectString())
        << "storm.local.dir: " << dir_.File("local") << "\n"
        << "supervisor.slots.ports: [6700, 6701]\n";
    auto s = ConnectedZkSession(zk_->ConnectString());
    ASSERT_TRUE(s.ok()) << s.status();
    session_ = *std::move(s);
  }
  void TearDown() override {
    if (session_) session_->Close();
  }

  // Starts `tempest supervisor` and returns the id it prints.
  std::string StartSupervisor(const std::string& out) {
    os::ChildProcess::Options options;
    options.argv = {TempestBinary(),           "supervisor", "--config",
                    dir_.File("tempest.yaml"), "-c",         "storm.local.hostname=node-a"};
    options.stdout_path = dir_.File(out + ".out");
    options.stderr_path = dir_.File(out + ".err");
    auto child = os::ChildProcess::Start(options);
    EXPECT_TRUE(child.ok()) << child.status();
    if (!child.ok()) return "";
    supervisor_ = *std::move(child);
    auto line = WaitForLineWithPrefix(dir_.File(out + ".out"), "supervisor=", seconds(60));
    EXPECT_TRUE(line.has_value()) << ReadFileOrEmpty(dir_.File(out + ".err"));
    return line.value_or("");
  }

  TempDir dir_{"tempest-supervisor-cmd"};
  std::unique_ptr<ZkEnsemble> zk_;
  std::unique_ptr<coord::ZkSession> session_;
  std::unique_ptr<os::ChildProcess> supervisor_;
};

TEST_F(SupervisorCommandTest, RegistersKeepsItsIdAndStopsCleanly) {
  const std::string id = StartSupervisor("first");
  ASSERT_FALSE(id.empty());
  const std::string node = "/tempest-system/supervisors/" + id;
  auto registered = session_->Get(node);
  ASSERT_TRUE(registered.ok()) << registered.status();
  v1::SupervisorInfo info;
  ASSERT_TRUE(info.ParseFromString(registered->data));
  EXPECT_EQ(info.hostname(), "node-a");
  ASSERT_EQ(info.slot_ports_size(), 2);
  EXPECT_EQ(info.slot_ports(0), 6700);
  EXPECT_EQ(info.slot_ports(1), 6701);
  EXPECT_EQ(ReadFileOrEmpty(dir_.File("local/supervisor/id")), id + "\n");

  // SIGTERM: a clean stop, exit 0, the node gone at once.
  ASSERT_TRUE(supervisor_->SignalGroup(SIGTERM));
  std::optional<int> status = supervisor_->WaitFor(milliseconds(30000));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << os::DescribeWaitStatus(*status);
  EXPECT_TRUE(absl::IsNotFound(session_->Get(node).status()));

  // The same id after a restart.
  EXPECT_EQ(StartSupervisor("second"), id);
  supervisor_->Stop(milliseconds(30000));
}

TEST_F(SupervisorCommandTest, BadConfigIsOneClearError) {
  os::ChildProcess::Options options;
  options.argv = {TempestBinary(),           "supervisor", "--config",
                  dir_.File("tempest.yaml"), "-c",         "supervisor.slots.ports=[6700, \"x\"]"};
  options.stdout_path = dir_.File("bad.out");
  options.stderr_path = dir_.File("bad.err");
  auto child = os::ChildProcess::Start(options);
  ASSERT_TRUE(child.ok()) << child.status();
  std::optional<int> status = (*child)->WaitFor(milliseconds(30000));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 2) << os::DescribeWaitStatus(*status);
  EXPECT_NE(ReadFileOrEmpty(dir_.File("bad.err")).find("supervisor.slots.ports"),
            std::string::npos);
}

}  // namespace
}  // namespace tempest::testing
