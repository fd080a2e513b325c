// `tempest dev-kafka` serves the Kafka protocol to an independent client:
// kcat (Debian's package) produces 10,000 records and consumes them back.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_split.h"
#include "common/os/child_process.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/raw_zk_client.h"
#include "tests/support/zk_ensemble.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

using std::chrono::seconds;

// Runs a command to completion with stdin/stdout redirected through files
// (via /bin/sh, so the redirections are explicit); returns its wait status.
int RunShell(const std::string& command, std::chrono::seconds timeout) {
  os::ChildProcess::Options options;
  options.argv = {"/bin/sh", "-c", command};
  auto child = os::ChildProcess::Start(options);
  if (!child.ok()) return -1;
  auto status = (*child)->WaitFor(timeout);
  return status.has_value() ? *status : -1;
}

TEST(DevKafkaCommandTest, KcatProducesAndConsumesTenThousandRecords) {
  TempDir dir("dev-kafka-test");
  os::ChildProcess::Options options;
  options.argv = {TempestBinary(), "dev-kafka", "--brokers", "3", "--topic", "events:8"};
  options.stdout_path = dir.File("stdout");
  options.stderr_path = dir.File("stderr");
  auto child = os::ChildProcess::Start(options);
  ASSERT_TRUE(child.ok()) << child.status();

  auto bootstrap = WaitForLineWithPrefix(dir.File("stdout"), "bootstrap.servers=", seconds(30));
  ASSERT_TRUE(bootstrap.has_value()) << ReadFileOrEmpty(dir.File("stderr"));
  std::vector<std::string> brokers = absl::StrSplit(*bootstrap, ',');
  EXPECT_EQ(brokers.size(), 3u) << *bootstrap;

  {
    std::ofstream input(dir.File("input"));
    for (int i = 0; i < 10000; ++i) input << "record-" << i << "\n";
  }
  int produced = RunShell("kcat -P -b " + *bootstrap + " -t events -X log_level=3 < " +
                              dir.File("input") + " 2> " + dir.File("kcat-produce.err"),
                          seconds(120));
  ASSERT_EQ(produced, 0) << ReadFileOrEmpty(dir.File("kcat-produce.err"));

  int consumed = RunShell("kcat -C -b " + *bootstrap + " -t events -o beginning -e -q -X " +
                              "log_level=3 > " + dir.File("output") + " 2> " +
                              dir.File("kcat-consume.err"),
                          seconds(120));
  ASSERT_EQ(consumed, 0) << ReadFileOrEmpty(dir.File("kcat-consume.err"));

  std::multiset<std::string> got;
  std::istringstream lines(ReadFileOrEmpty(dir.File("output")));
  for (std::string line; std::getline(lines, line);) got.insert(line);
  EXPECT_EQ(got.size(), 10000u);
  std::set<std::string> unique(got.begin(), got.end());
  EXPECT_EQ(unique.size(), 10000u);
  for (int i = 0; i < 10000; i += 997) {
    EXPECT_EQ(unique.count("record-" + std::to_string(i)), 1u) << i;
  }

  (*child)->SignalGroup(SIGTERM);
  auto status = (*child)->WaitFor(seconds(30));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << os::DescribeWaitStatus(*status);
}

TEST(DevKafkaCommandTest, PublishesABrokerRegistryForLegacyZkHosts) {
  auto zk = ZkEnsemble::Start();
  ASSERT_TRUE(zk.ok()) << zk.status();
  TempDir dir("dev-kafka-zk");
  os::ChildProcess::Options options;
  options.argv = {TempestBinary(), "dev-kafka", "--brokers", "2", "--topic", "clicks:3",
                  "--zk", (*zk)->ConnectString()};
  options.stdout_path = dir.File("stdout");
  options.stderr_path = dir.File("stderr");
  auto child = os::ChildProcess::Start(options);
  ASSERT_TRUE(child.ok()) << child.status();
  auto bootstrap = WaitForLineWithPrefix(dir.File("stdout"), "bootstrap.servers=", seconds(30));
  ASSERT_TRUE(bootstrap.has_value()) << ReadFileOrEmpty(dir.File("stderr"));

  auto client = RawZkClient::Connect((*zk)->ConnectString(), 4000, seconds(20));
  ASSERT_NE(client, nullptr);
  // Brokers: ephemeral ids with the host and port the bootstrap line names.
  for (int id : {1, 2}) {
    auto [rc, data] = client->Get("/brokers/ids/" + std::to_string(id));
    ASSERT_EQ(rc, ZOK) << id;
    auto doc = nlohmann::json::parse(data);
    const std::string address =
        doc["host"].get<std::string>() + ":" + std::to_string(doc["port"].get<int>());
    EXPECT_NE(bootstrap->find(address), std::string::npos) << address << " vs " << *bootstrap;
  }
  // Topic assignment and per-partition state with a leader among the brokers.
  auto [topic_rc, topic_data] = client->Get("/brokers/topics/clicks");
  ASSERT_EQ(topic_rc, ZOK);
  EXPECT_EQ(nlohmann::json::parse(topic_data)["partitions"].size(), 3u);
  for (int p = 0; p < 3; ++p) {
    auto [rc, state] = client->Get("/brokers/topics/clicks/partitions/" + std::to_string(p) +
                                   "/state");
    ASSERT_EQ(rc, ZOK) << p;
    const int leader = nlohmann::json::parse(state)["leader"].get<int>();
    EXPECT_TRUE(leader == 1 || leader == 2) << state;
  }

  // Stopping the cluster removes the ephemeral broker ids.
  (*child)->SignalGroup(SIGTERM);
  ASSERT_TRUE((*child)->WaitFor(seconds(30)).has_value());
  EXPECT_TRUE(Eventually(seconds(15), [&] { return client->Exists("/brokers/ids/1") == ZNONODE; }));
}

}  // namespace
}  // namespace tempest::testing
