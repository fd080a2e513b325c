// `tempest offsets show|set` against a real ZooKeeper and a Kafka-protocol
// endpoint, with storm-kafka offsets seeded and read back by an independent
// client (python3-kazoo).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/os/child_process.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/output_file.h"
#include "tests/support/raw_zk_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::testing {
namespace {

using std::chrono::seconds;

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CommandResult RunCommand(const TempDir& dir, std::vector<std::string> argv) {
  static int counter = 0;
  const std::string tag = std::to_string(++counter);
  os::ChildProcess::Options options;
  options.argv = std::move(argv);
  options.stdout_path = dir.File("out" + tag);
  options.stderr_path = dir.File("err" + tag);
  CommandResult run;
  auto child = os::ChildProcess::Start(options);
  if (!child.ok()) return run;
  auto status = (*child)->WaitFor(seconds(60));
  if (status && WIFEXITED(*status)) run.exit_code = WEXITSTATUS(*status);
  run.out = ReadFileOrEmpty(options.stdout_path);
  run.err = ReadFileOrEmpty(options.stderr_path);
  return run;
}

// Runs a kazoo script with /usr/bin/python3 (where Debian's python3-kazoo
// lives); argv[1] is the ZooKeeper connect string.
CommandResult Kazoo(const TempDir& dir, const std::string& zk, const std::string& script) {
  const std::string path = dir.File("zk_client_script.py");
  std::ofstream(path) << "import json, sys\nfrom kazoo.client import KazooClient\n"
                      << "zk = KazooClient(hosts=sys.argv[1]); zk.start(timeout=30)\n"
                      << script << "\nzk.stop()\n";
  return RunCommand(dir, {"/usr/bin/python3", path, zk});
}

class OffsetsCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = ZkEnsemble::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk);
    auto kafka = DevKafka::Start(1, {{"clicks", 2}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    std::vector<DevKafka::Record> records(50, DevKafka::Record{"", "x"});
    ASSERT_TRUE(kafka_->Produce("clicks", 0, records).ok());
    records.resize(30);
    ASSERT_TRUE(kafka_->Produce("clicks", 1, records).ok());
    // Offsets exactly as legacy storm-kafka writes them, by another client.
    CommandResult seeded = Kazoo(dir_, zk_->ConnectString(), R"(
for p, off in [(0, 10), (1, 30)]:
    doc = {"topology": {"id": "legacy-7-1466000000", "name": "legacy"}, "offset": off,
           "partition": p, "broker": {"host": "kafka1", "port": 9092}, "topic": "clicks"}
    zk.create("/kafkaspout/legacy/partition_%d" % p, json.dumps(doc).encode(), makepath=True)
)");
    ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
  }

  std::vector<std::string> Offsets(std::vector<std::string> extra) {
    std::vector<std::string> argv = {TempestBinary(), "offsets"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (const auto& a : std::vector<std::string>{"--zk", zk_->ConnectString(), "--root",
                                                  "/kafkaspout", "--id", "legacy"}) {
      argv.push_back(a);
    }
    return argv;
  }

  TempDir dir_{"offsets-cmd"};
  std::unique_ptr<ZkEnsemble> zk_;
  std::unique_ptr<DevKafka> kafka_;
};

TEST_F(OffsetsCommandTest, ShowsCommittedOffsetsLagAndOwners) {
  CommandResult run = RunCommand(dir_, Offsets({"show", "--bootstrap", kafka_->bootstrap_servers(),
                                      "--json"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto doc = nlohmann::json::parse(run.out);
  auto parts = doc["partitions"];
  ASSERT_EQ(parts.size(), 2u) << run.out;
  EXPECT_EQ(parts[0]["topic"], "clicks");
  EXPECT_EQ(parts[0]["partition"], 0);
  EXPECT_EQ(parts[0]["committed_offset"], 10);
  EXPECT_EQ(parts[0]["log_end_offset"], 50);
  EXPECT_EQ(parts[0]["lag"], 40);
  EXPECT_TRUE(parts[0]["owner"].is_null());
  EXPECT_EQ(parts[0]["topology_id"], "legacy-7-1466000000");
  EXPECT_EQ(parts[1]["lag"], 0);

  CommandResult table = RunCommand(dir_, Offsets({"show"}));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("legacy-7-1466000000"), std::string::npos) << table.out;
}

// What an operator reads: every partition of the topic (one without a stored
// offset too), the log range, lag and a readable owner per row, a total lag
// line, and one key style in --json.
TEST_F(OffsetsCommandTest, ShowListsEveryPartitionWithLogRangeLagOwnerAndTotal) {
  auto owner = RawZkClient::Connect(zk_->ConnectString(), 4000, seconds(20));
  ASSERT_NE(owner, nullptr);
  ASSERT_EQ(owner->Create("/kafkaspout/legacy/@owners", ""), ZOK);
  ASSERT_EQ(owner->Create("/kafkaspout/legacy/@owners/partition_0",
                          R"({"session":"1","owner":"legacy-7-1466000000:kafka:3@host1"})",
                          ZOO_EPHEMERAL),
            ZOK);
  CommandResult dropped = Kazoo(dir_, zk_->ConnectString(),
                                R"(zk.delete("/kafkaspout/legacy/partition_1"))");
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;

  CommandResult table = RunCommand(
      dir_, Offsets({"show", "--topic", "clicks", "--bootstrap", kafka_->bootstrap_servers()}));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  std::vector<std::string> lines;
  for (std::string_view rest = table.out; !rest.empty();) {
    const size_t nl = rest.find('\n');
    lines.emplace_back(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? "" : rest.substr(nl + 1);
  }
  ASSERT_GE(lines.size(), 4u) << table.out;
  for (const char* column : {"TOPIC", "PARTITION", "LOG-START", "COMMITTED", "LOG-END", "LAG",
                             "OWNER"}) {
    EXPECT_NE(lines[0].find(column), std::string::npos) << column << " in " << lines[0];
  }
  auto words = [](const std::string& line) {
    std::vector<std::string> out;
    std::istringstream in(line);
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  };
  // clicks/0: log [0, 50), committed 10, lag 40, owned by task kafka:3 on host1.
  const std::vector<std::string> owned = words(lines[1]);
  ASSERT_GE(owned.size(), 8u) << lines[1];
  EXPECT_EQ(std::vector<std::string>(owned.begin(), owned.begin() + 6),
            (std::vector<std::string>{"clicks", "0", "0", "10", "50", "40"}))
      << lines[1];
  EXPECT_EQ(owned.back(), "host1/legacy-7-1466000000/kafka:3") << lines[1];
  // clicks/1: Kafka has it, ZooKeeper holds no offset: listed, not skipped.
  const std::vector<std::string> unstored = words(lines[2]);
  ASSERT_GE(unstored.size(), 5u) << lines[2];
  EXPECT_EQ(std::vector<std::string>(unstored.begin(), unstored.begin() + 5),
            (std::vector<std::string>{"clicks", "1", "0", "none", "30"}))
      << lines[2];
  EXPECT_EQ(unstored.back(), "none") << lines[2];
  // It counts from where a spout starts it (startOffsetTime earliest by
  // default): all 30 records wait, and the total says so.
  EXPECT_EQ(unstored[5], "30") << lines[2];
  EXPECT_NE(table.out.find("TOTAL LAG 70\n"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("1 partition without a stored offset counted from where a spout "
                           "starts: earliest"),
            std::string::npos)
      << table.out;
  CommandResult latest = RunCommand(dir_, Offsets({"show", "--topic", "clicks", "--bootstrap",
                                                   kafka_->bootstrap_servers(), "--start",
                                                   "latest"}));
  ASSERT_EQ(latest.exit_code, 0) << latest.err;
  EXPECT_NE(latest.out.find("TOTAL LAG 40\n"), std::string::npos) << latest.out;
  CommandResult bad = RunCommand(dir_, Offsets({"show", "--bootstrap",
                                                kafka_->bootstrap_servers(), "--start", "soon"}));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--start takes earliest, latest or a time"), std::string::npos)
      << bad.err;

  CommandResult json = RunCommand(dir_, Offsets({"show", "--topic", "clicks", "--bootstrap",
                                                 kafka_->bootstrap_servers(), "--json"}));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto doc = nlohmann::json::parse(json.out);
  std::function<void(const nlohmann::json&)> snake_case_keys = [&](const nlohmann::json& j) {
    if (j.is_array()) {
      for (const auto& e : j) snake_case_keys(e);
    } else if (j.is_object()) {
      for (const auto& [key, value] : j.items()) {
        EXPECT_EQ(key.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string::npos) << key;
        snake_case_keys(value);
      }
    }
  };
  snake_case_keys(doc);
  auto parts = doc["partitions"];
  ASSERT_EQ(parts.size(), 2u) << json.out;
  EXPECT_EQ(parts[0]["owner_host"], "host1");
  EXPECT_EQ(parts[0]["owner_task"], "kafka:3");
  EXPECT_EQ(parts[0]["log_start_offset"], 0);
  EXPECT_EQ(parts[1]["stored"], false);
  EXPECT_TRUE(parts[1]["committed_offset"].is_null());
  EXPECT_EQ(parts[1]["log_end_offset"], 30);
  EXPECT_EQ(parts[1]["lag"], 30) << json.out;
  EXPECT_EQ(parts[1]["lag_basis"], "earliest");
  EXPECT_EQ(parts[0]["lag_basis"], "committed");
  EXPECT_EQ(doc["total_lag"], 70);
}

TEST_F(OffsetsCommandTest, ListsUnreadableNodesInsteadOfSkippingThem) {
  auto client = RawZkClient::Connect(zk_->ConnectString(), 4000, seconds(20));
  ASSERT_NE(client, nullptr);
  ASSERT_EQ(client->Create("/kafkaspout/legacy/partition_2", "{not json"), ZOK);
  CommandResult run = RunCommand(dir_, Offsets({"show", "--json"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto parts = nlohmann::json::parse(run.out)["partitions"];
  ASSERT_EQ(parts.size(), 3u);
  int unreadable = 0;
  for (const auto& p : parts) {
    if (p["partition"] != 2) continue;
    ++unreadable;
    EXPECT_TRUE(p["committed_offset"].is_null());
    ASSERT_TRUE(p["error"].is_string()) << p.dump();
    EXPECT_NE(p["error"].get<std::string>().find("not valid JSON"), std::string::npos);
  }
  EXPECT_EQ(unreadable, 1) << run.out;
}

TEST_F(OffsetsCommandTest, SetRefusesWhileOwnedUnlessForcedAndKeepsTheFormat) {
  auto owner = RawZkClient::Connect(zk_->ConnectString(), 4000, seconds(20));
  ASSERT_NE(owner, nullptr);
  ASSERT_EQ(owner->Create("/kafkaspout/legacy/@owners", ""), ZOK);
  ASSERT_EQ(owner->Create("/kafkaspout/legacy/@owners/partition_0", "task-1", ZOO_EPHEMERAL), ZOK);

  CommandResult refused = RunCommand(dir_, Offsets({"set", "--topic", "clicks", "--partition", "0",
                                          "--offset", "5", "--execute", "--timeout", "1"}));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("did not answer"), std::string::npos) << refused.err;

  CommandResult forced = RunCommand(dir_, Offsets({"set", "--topic", "clicks", "--partition", "0",
                                         "--offset", "5", "--force", "--execute"}));
  ASSERT_EQ(forced.exit_code, 0) << forced.err;

  CommandResult latest = RunCommand(dir_, Offsets({"set", "--topic", "clicks", "--partition", "1",
                                         "--to-earliest", "--bootstrap",
                                         kafka_->bootstrap_servers(), "--execute"}));
  ASSERT_EQ(latest.exit_code, 0) << latest.err;

  // The independent client reads storm-kafka's format back, topology kept.
  CommandResult check = Kazoo(dir_, zk_->ConnectString(), R"(
for p in (0, 1):
    data, _ = zk.get("/kafkaspout/legacy/partition_%d" % p)
    doc = json.loads(data)
    print(p, doc["offset"], doc["topology"]["id"], doc["topic"], doc["partition"])
)");
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.out,
            "0 5 legacy-7-1466000000 clicks 0\n1 0 legacy-7-1466000000 clicks 1\n");
}

// The topics Kafka has, as an independent client lists them (all topics:
// asking for one by name could create it).
std::string KafkaTopics(const TempDir& dir, const std::string& bootstrap) {
  const std::string path = dir.File("topics.py");
  std::ofstream(path) << "import sys\nfrom kafka import KafkaConsumer\n"
                      << "c = KafkaConsumer(bootstrap_servers=sys.argv[1])\n"
                      << "print(' '.join(sorted(c.topics())))\nc.close()\n";
  CommandResult run = RunCommand(dir, {"/usr/bin/python3", path, bootstrap});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run.out;
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// A misspelt topic on a one-topic spout once rewound the real topic under
// the typo's name, and the dev Kafka created the typo. Now: one line naming
// what the spout holds, nothing written, no topic created.
TEST_F(OffsetsCommandTest, SetRefusesATopicOrPartitionTheSpoutDoesNotHold) {
  const std::string stored_before = Kazoo(dir_, zk_->ConnectString(), R"(
print(sorted(zk.get_children("/kafkaspout/legacy")))
for p in (0, 1):
    print(json.loads(zk.get("/kafkaspout/legacy/partition_%d" % p)[0])["offset"])
)").out;
  ASSERT_EQ(stored_before, "['partition_0', 'partition_1']\n10\n30\n");
  const std::string bootstrap = kafka_->bootstrap_servers();

  for (std::vector<std::string> extra : std::vector<std::vector<std::string>>{
           {"--bootstrap", bootstrap}, {}, {"--bootstrap", bootstrap, "--seed"}}) {
    std::vector<std::string> args = {"set", "--topic", "typo-topic", "--all-partitions",
                                     "--offset", "0", "--execute"};
    args.insert(args.end(), extra.begin(), extra.end());
    CommandResult typo = RunCommand(dir_, Offsets(args));
    EXPECT_EQ(typo.exit_code, 1) << typo.out << typo.err;
    EXPECT_EQ(Lines(typo.err), 1) << typo.err;
    EXPECT_NE(typo.err.find("/kafkaspout/legacy keeps the offsets of one topic, topic clicks "
                            "(partitions 0-1): typo-topic is not it"),
              std::string::npos)
        << typo.err;
  }
  // A partition the spout does not hold, with a live owner on partition 0
  // (so a rewind would be the way in): refused before any request is made.
  auto owner = RawZkClient::Connect(zk_->ConnectString(), 4000, seconds(20));
  ASSERT_NE(owner, nullptr);
  ASSERT_EQ(owner->Create("/kafkaspout/legacy/@owners", ""), ZOK);
  ASSERT_EQ(owner->Create("/kafkaspout/legacy/@owners/partition_0",
                          R"({"session":"1","owner":"topo-1:kafka:3@host1"})", ZOO_EPHEMERAL),
            ZOK);
  CommandResult wrong = RunCommand(dir_, Offsets({"set", "--topic", "clicks", "--partition", "7",
                                                  "--offset", "0", "--execute", "--timeout", "2"}));
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out << wrong.err;
  EXPECT_EQ(Lines(wrong.err), 1) << wrong.err;
  EXPECT_NE(wrong.err.find("holds no offset of clicks/7 (it holds topic clicks (partitions 0-1))"),
            std::string::npos)
      << wrong.err;
  CommandResult missing = RunCommand(
      dir_, Offsets({"set", "--topic", "clicks", "--partition", "7", "--offset", "0",
                     "--bootstrap", bootstrap, "--execute"}));
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_NE(missing.err.find("does not exist: topic clicks has partitions 0-1"), std::string::npos)
      << missing.err;

  // Stored offsets unchanged, no node or rewind request added.
  EXPECT_EQ(Kazoo(dir_, zk_->ConnectString(), R"(
print(sorted(c for c in zk.get_children("/kafkaspout/legacy") if not c.startswith("@")))
for p in (0, 1):
    print(json.loads(zk.get("/kafkaspout/legacy/partition_%d" % p)[0])["offset"])
print(zk.exists("/kafkaspout/legacy/@rewind") is None)
)").out,
            "['partition_0', 'partition_1']\n10\n30\nTrue\n");
  // Kafka was never made to create the typo.
  const std::string topics = KafkaTopics(dir_, bootstrap);
  EXPECT_NE(topics.find("clicks"), std::string::npos) << topics;
  EXPECT_EQ(topics.find("typo-topic"), std::string::npos) << topics;
}

// A spout that has stored nothing yet is written only with --seed; Kafka is
// then asked about the topic by name, and still creates nothing.
TEST_F(OffsetsCommandTest, SeedingANewSpoutNeedsSeedAndCreatesNoTopic) {
  auto set = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {TempestBinary(), "offsets", "set", "--zk",
                                     zk_->ConnectString(), "--root", "/kafkaspout", "--id",
                                     "fresh", "--partition", "0", "--offset", "5", "--execute"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(dir_, argv);
  };
  CommandResult unseeded = set({"--topic", "clicks"});
  EXPECT_EQ(unseeded.exit_code, 1);
  EXPECT_EQ(Lines(unseeded.err), 1) << unseeded.err;
  EXPECT_NE(unseeded.err.find("holds no offsets of topic clicks (it holds no offsets)"),
            std::string::npos)
      << unseeded.err;
  EXPECT_NE(unseeded.err.find("add --seed"), std::string::npos) << unseeded.err;

  CommandResult typo =
      set({"--topic", "typo-topic", "--seed", "--bootstrap", kafka_->bootstrap_servers()});
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_EQ(Lines(typo.err), 1) << typo.err;
  EXPECT_EQ(KafkaTopics(dir_, kafka_->bootstrap_servers()).find("typo-topic"), std::string::npos);

  CommandResult seeded =
      set({"--topic", "clicks", "--seed", "--bootstrap", kafka_->bootstrap_servers()});
  EXPECT_EQ(seeded.exit_code, 0) << seeded.err;
  EXPECT_EQ(Kazoo(dir_, zk_->ConnectString(), R"(
doc = json.loads(zk.get("/kafkaspout/fresh/partition_0")[0])
print(doc["topic"], doc["offset"])
)").out,
            "clicks 5\n");
}

TEST_F(OffsetsCommandTest, UsageErrorsExitTwo) {
  CommandResult both = RunCommand(dir_, Offsets({"set", "--topic", "clicks", "--partition", "0",
                                       "--offset", "5", "--to-latest"}));
  EXPECT_EQ(both.exit_code, 2);
  CommandResult missing = RunCommand(dir_, {TempestBinary(), "offsets", "show", "--zk", "127.0.0.1:1"});
  EXPECT_EQ(missing.exit_code, 2);
  CommandResult nothing = RunCommand(dir_, Offsets({"show", "--id", "nobody"}));
  EXPECT_NE(nothing.exit_code, 0);
}

}  // namespace
}  // namespace tempest::testing
