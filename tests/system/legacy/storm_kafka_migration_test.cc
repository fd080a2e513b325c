// A storm-kafka pipeline moved to storm-kafka-client with no record lost or
// read twice, with the real binaries: a real ZooKeeper, `tempest dev-kafka`,
// kcat as the producer, `tempest local` for both topologies, `tempest migrate
// offsets` between them, kafka-python reading the consumer group, and
// `tempest verify` over the one sink log both runs append to.
//
//   1. storm-kafka's KafkaSpout (SpoutConfig/ZkHosts, offsets in ZooKeeper)
//      reads what the topic holds, then stops (stopAtEnd);
//   2. more records arrive; `tempest migrate offsets` (dry run, --execute)
//      copies the ZooKeeper offsets into the consumer group;
//   3. more records arrive; storm-kafka-client's KafkaSpout
//      (UNCOMMITTED_EARLIEST, same sink) reads the rest.
#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::ReadFileOrEmpty;
using testing::TempDir;

constexpr int kPartitions = 3;

// storm-kafka (Storm 1.x), as examples/storm-kafka-legacy.yaml.
constexpr char kStormKafkaFlux[] = R"(name: events-legacy
config:
  topology.workers: 1
components:
  - id: stringScheme
    className: org.apache.storm.kafka.StringScheme
  - id: stringMultiScheme
    className: org.apache.storm.spout.SchemeAsMultiScheme
    constructorArgs:
      - ref: stringScheme
  - id: zkHosts
    className: org.apache.storm.kafka.ZkHosts
    constructorArgs:
      - "${ENV-ZK}"
    properties:
      - name: bootstrap.servers
        value: "${ENV-BOOTSTRAP}"
  - id: spoutConfig
    className: org.apache.storm.kafka.SpoutConfig
    constructorArgs:
      - ref: zkHosts
      - "events"
      - "/kafkaspout"
      - "events-reader"
    properties:
      - name: scheme
        ref: stringMultiScheme
      - name: zkServers
        value: ["${ENV-ZK}"]
      - name: stateUpdateIntervalMs
        value: 500
      - name: stopAtEnd
        value: true
spouts:
  - id: kafka
    className: org.apache.storm.kafka.KafkaSpout
    constructorArgs:
      - ref: spoutConfig
bolts:
  - id: verify
    className: tempest.VerifierBolt
    properties:
      - name: field
        value: str
      - name: logPath
        value: "${ENV-OUT}/sink.log"
streams:
  - from: kafka
    to: verify
    grouping:
      type: SHUFFLE
)";

// storm-kafka-client (Storm 2.x), as examples/storm-kafka-client.yaml: the
// same topic and sink, offsets in the consumer group the migration filled.
constexpr char kStormKafkaClientFlux[] = R"(name: events-client
config:
  topology.workers: 1
components:
  - id: spoutConfigBuilder
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder"
    constructorArgs:
      - "${ENV-BOOTSTRAP}"
      - ["events"]
    properties:
      - name: firstPollOffsetStrategy
        value: UNCOMMITTED_EARLIEST
    configMethods:
      - name: setProp
        args:
          - {"group.id": "events-reader"}
      - name: setOffsetCommitPeriodMs
        args: [500]
  - id: spoutConfig
    className: org.apache.storm.kafka.spout.KafkaSpoutConfig
    constructorArgs:
      - ref: spoutConfigBuilder
spouts:
  - id: kafka
    className: org.apache.storm.kafka.spout.KafkaSpout
    constructorArgs:
      - ref: spoutConfig
    properties:
      - name: stopAtEnd
        value: true
bolts:
  - id: verify
    className: tempest.VerifierBolt
    properties:
      - name: field
        value: value
      - name: logPath
        value: "${ENV-OUT}/sink.log"
streams:
  - from: kafka
    to: verify
    grouping:
      type: SHUFFLE
)";

// The counters of `tempest local`'s final "done: ..." line.
std::map<std::string, int64_t> DoneCounters(const std::string& out) {
  std::map<std::string, int64_t> counters;
  const size_t done = out.rfind("done: ");
  if (done == std::string::npos) return counters;
  const std::string line = out.substr(done, out.find('\n', done) - done);
  static const std::regex kCounter("([a-z-]+)=(-?[0-9]+)");
  for (auto it = std::sregex_iterator(line.begin(), line.end(), kCounter);
       it != std::sregex_iterator(); ++it) {
    counters[(*it)[1].str()] = std::stoll((*it)[2].str());
  }
  return counters;
}

class StormKafkaMigrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = testing::ZkEnsemble::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk);
    os::ChildProcess::Options kafka;
    kafka.argv = {testing::TempestBinary(), "dev-kafka", "--topic",
                  absl::StrCat("events:", kPartitions)};
    kafka.stdout_path = dir_.File("kafka.out");
    kafka.stderr_path = dir_.File("kafka.err");
    auto started = os::ChildProcess::Start(kafka);
    ASSERT_TRUE(started.ok()) << started.status();
    kafka_ = std::move(*started);
    std::optional<std::string> bootstrap =
        testing::WaitForLineWithPrefix(dir_.File("kafka.out"), "bootstrap.servers=", seconds(60));
    ASSERT_TRUE(bootstrap.has_value()) << ReadFileOrEmpty(dir_.File("kafka.err"));
    bootstrap_ = *bootstrap;
    env_ = {{"ZK", zk_->ConnectString()}, {"BOOTSTRAP", bootstrap_}, {"OUT", dir_.path()}};
  }

  void TearDown() override {
    if (kafka_ != nullptr) kafka_->Stop(milliseconds(5000));
  }

  testing::CommandRun Run(const std::vector<std::string>& argv,
                          milliseconds timeout = seconds(180)) {
    testing::CommandRun run =
        testing::RunCommand(argv, dir_.File(absl::StrCat("run", ++runs_)), timeout, env_);
    EXPECT_TRUE(run.finished) << argv[0] << " " << argv[1] << " did not exit in time";
    return run;
  }

  // Values first..first+per_partition*kPartitions-1, per_partition to each
  // partition, through kcat.
  void Produce(int first, int per_partition) {
    for (int p = 0; p < kPartitions; ++p) {
      const std::string file = dir_.File(absl::StrCat("records-", first, "-", p, ".txt"));
      {
        std::ofstream out(file);
        for (int i = 0; i < per_partition; ++i) out << first + p * per_partition + i << "\n";
      }
      testing::CommandRun produced =
          Run({"sh", "-c", absl::StrCat("kcat -P -b ", bootstrap_, " -t events -p ", p,
                                        " -X log_level=3 < ", file)});
      ASSERT_EQ(produced.exit_code, 0) << produced.err;
    }
  }

  std::map<std::string, int64_t> Local(const std::string& name, const char* flux) {
    const std::string path = dir_.File(name + ".yaml");
    std::ofstream(path) << flux;
    testing::CommandRun run =
        Run({testing::TempestBinary(), "local", path, "--env-filter", "--until-complete"});
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    std::map<std::string, int64_t> done = DoneCounters(run.out);
    EXPECT_FALSE(done.empty()) << run.out << run.err;
    EXPECT_EQ(done["failed"], 0) << run.out;
    EXPECT_EQ(done["errors"], 0) << run.err;
    return done;
  }

  std::vector<std::string> Migrate(std::vector<std::string> extra) {
    std::vector<std::string> argv = {testing::TempestBinary(), "migrate", "offsets",
                                     "--zk", zk_->ConnectString(), "--root", "/kafkaspout",
                                     "--id", "events-reader", "--bootstrap", bootstrap_,
                                     "--group", "events-reader"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  // "partition offset metadata" lines of the group, read by kafka-python.
  std::string GroupOffsets() {
    const std::string script = dir_.File(absl::StrCat("group", ++runs_, ".py"));
    std::ofstream(script) << absl::StrCat(R"(import sys
from kafka import KafkaAdminClient, TopicPartition
admin = KafkaAdminClient(bootstrap_servers=sys.argv[1])
parts = [TopicPartition("events", p) for p in range()", kPartitions, R"()]
offsets = admin.list_consumer_group_offsets("events-reader", partitions=parts)
for tp in parts:
    o = offsets.get(tp)
    print(tp.partition, o.offset if o else -1, o.metadata if o else "")
admin.close()
)");
    testing::CommandRun run = Run({"/usr/bin/python3", script, bootstrap_}, seconds(60));
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    return run.out;
  }

  TempDir dir_{"storm-kafka-migration"};
  std::unique_ptr<testing::ZkEnsemble> zk_;
  std::unique_ptr<os::ChildProcess> kafka_;
  std::string bootstrap_;
  std::map<std::string, std::string> env_;
  int runs_ = 0;
};

TEST_F(StormKafkaMigrationTest, StormKafkaToStormKafkaClientLosesAndRereadsNothing) {
  // 1. storm-kafka reads what the topic holds: 0..599.
  ASSERT_NO_FATAL_FAILURE(Produce(0, 200));
  std::map<std::string, int64_t> legacy = Local("storm-kafka", kStormKafkaFlux);
  EXPECT_EQ(legacy["spout-emitted"], 600);
  EXPECT_EQ(legacy["acked"], 600);

  testing::CommandRun shown = Run({testing::TempestBinary(), "offsets", "show", "--zk",
                                   zk_->ConnectString(), "--root", "/kafkaspout", "--id",
                                   "events-reader", "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  nlohmann::json stored = nlohmann::json::parse(shown.out, nullptr, false);
  ASSERT_FALSE(stored.is_discarded()) << shown.out;
  ASSERT_EQ(stored["partitions"].size(), static_cast<size_t>(kPartitions)) << shown.out;
  for (const auto& p : stored["partitions"]) {
    EXPECT_EQ(p["committed_offset"], 200) << shown.out;
    EXPECT_TRUE(p["owner"].is_null()) << "the stopped spout still owns a partition: " << shown.out;
  }

  // 2. More records while nothing runs; the offsets move into the group.
  ASSERT_NO_FATAL_FAILURE(Produce(600, 100));
  testing::CommandRun dry = Run(Migrate({}));
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_NE(dry.out.find("dry run: nothing written; add --execute to commit 3 offsets"),
            std::string::npos)
      << dry.out;
  const std::string untouched = GroupOffsets();
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_NE(untouched.find(absl::StrCat(p, " -1 ")), std::string::npos)
        << "the dry run committed partition " << p << ":\n" << untouched;
  }
  testing::CommandRun executed = Run(Migrate({"--execute", "--json"}));
  ASSERT_EQ(executed.exit_code, 0) << executed.out << executed.err;
  nlohmann::json plan = nlohmann::json::parse(executed.out, nullptr, false);
  ASSERT_FALSE(plan.is_discarded()) << executed.out;
  EXPECT_EQ(plan["verified"], true) << executed.out;
  for (const auto& p : plan["partitions"]) {
    EXPECT_EQ(p["zk_offset"], 200) << executed.out;
    EXPECT_EQ(p["log_end_offset"], 300) << executed.out;
    EXPECT_EQ(p["write_offset"], 200) << executed.out;
    EXPECT_EQ(p["read_back_offset"], 200) << executed.out;
  }
  const std::string group = GroupOffsets();
  std::printf("consumer group after the migration:\n%s", group.c_str());
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_NE(group.find(absl::StrCat(p, " 200 {\"taskId\":-1,")), std::string::npos) << group;
  }
  EXPECT_NE(group.find("\"topologyId\":\"migrated-from-zookeeper:/kafkaspout/events-reader\""),
            std::string::npos)
      << group;

  // 3. More records; storm-kafka-client resumes at the group's commits.
  ASSERT_NO_FATAL_FAILURE(Produce(900, 100));
  std::map<std::string, int64_t> client = Local("storm-kafka-client", kStormKafkaClientFlux);
  EXPECT_EQ(client["spout-emitted"], 600) << "storm-kafka-client should read 600..1199 only";
  EXPECT_EQ(client["acked"], 600);

  testing::CommandRun verified = Run({testing::TempestBinary(), "verify", dir_.File("sink.log"),
                                      "--expected", "1200", "--strict", "--json"});
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  nlohmann::json report = nlohmann::json::parse(verified.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << verified.out;
  std::printf("tempest verify over both runs: %s\n", verified.out.c_str());
  EXPECT_EQ(report["received"], 1200) << verified.out;
  EXPECT_EQ(report["unique"], 1200) << verified.out;
  EXPECT_EQ(report["missing"], 0) << verified.out;
  EXPECT_EQ(report["duplicated"], 0) << verified.out;

  const std::string after = GroupOffsets();
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_NE(after.find(absl::StrCat(p, " 400 ")), std::string::npos)
        << "storm-kafka-client should have committed the log end:\n" << after;
  }
}

}  // namespace
}  // namespace tempest
