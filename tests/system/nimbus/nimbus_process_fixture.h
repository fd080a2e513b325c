// A real `tempest nimbus` process on a fresh ZooKeeper, and the CLI pointed
// at it: the set-up the nimbus system tests share.
#ifndef TEMPEST_TESTS_SYSTEM_NIMBUS_NIMBUS_PROCESS_FIXTURE_H_
#define TEMPEST_TESTS_SYSTEM_NIMBUS_NIMBUS_PROCESS_FIXTURE_H_

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::testing {

inline std::string SourceDir() {
  const char* s = std::getenv("TEMPEST_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

class NimbusProcessTest : public ::testing::Test {
 protected:
  // Starts ZooKeeper and nimbus (REST on a free loopback port) with
  // `extra_yaml` appended to its tempest.yaml; fills address_.
  void StartNimbus(const std::string& extra_yaml) {
    StartZooKeeper();
    StartNimbusWith(DaemonConfigPreamble(zk_->ConnectString()) + "ui.host: 127.0.0.1\n" +
                        "ui.port: 0\n" + extra_yaml,
                    {});
  }

  void StartZooKeeper() {
    auto zk = ZkEnsemble::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = *std::move(zk);
  }

  // Nimbus with exactly `yaml` as its tempest.yaml and `args` after it on
  // its command line (StartZooKeeper first).
  void StartNimbusWith(const std::string& yaml, const std::vector<std::string>& args) {
    std::ofstream(dir_.File("tempest.yaml")) << yaml;
    os::ChildProcess::Options options;
    options.argv = {TempestBinary(), "nimbus", "--config", dir_.File("tempest.yaml")};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    options.stdout_path = dir_.File("nimbus.out");
    options.stderr_path = dir_.File("nimbus.err");
    auto child = os::ChildProcess::Start(options);
    ASSERT_TRUE(child.ok()) << child.status();
    nimbus_ = *std::move(child);
    auto address =
        WaitForLineWithPrefix(dir_.File("nimbus.out"), "nimbus=", std::chrono::seconds(60));
    ASSERT_TRUE(address.has_value()) << ReadFileOrEmpty(dir_.File("nimbus.err"));
    address_ = *address;
  }

  void TearDown() override {
    if (nimbus_ != nullptr) nimbus_->Stop(std::chrono::milliseconds(20000));
  }

  // The real CLI with `--nimbus` this nimbus and `env` added.
  CommandRun Tempest(std::vector<std::string> args,
                     const std::map<std::string, std::string>& env = {}) {
    std::vector<std::string> argv = {TempestBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--nimbus");
    argv.push_back(address_);
    CommandRun r = RunCommand(argv, dir_.File("cmd"), std::chrono::milliseconds(60000), env);
    EXPECT_TRUE(r.finished) << args[0] << " did not finish";
    return r;
  }

  TempDir dir_{"tempest-nimbus"};
  std::unique_ptr<ZkEnsemble> zk_;
  std::unique_ptr<os::ChildProcess> nimbus_;
  std::string address_;
};

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SYSTEM_NIMBUS_NIMBUS_PROCESS_FIXTURE_H_
