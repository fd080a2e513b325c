// `tempest upgrade` on a real cluster, mid-stream: a storm-kafka topology
// (KafkaSpout with its offsets in ZooKeeper) -> IdentityBolt -> KafkaBolt is
// replaced by a storm-kafka-client one (offsets in a consumer group) while it
// reads a numbered stream. Read back from the output topic: every number is
// there (lost 0), duplicates stay within what the old spout could have in
// flight (topology.max.spout.pending per spout task), and the old topology's
// ZooKeeper offsets were carried into the new group (the new spout resumed
// there instead of at the topic's start). Then the rollback: the same
// command the other way, back to a storm-kafka topology, mid-stream; and the
// two other carries (another zkRoot/id, another group.id) in a chain.

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/kafka/group_offsets_admin.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kPartitions = 3;
// Per spout task, and the old topology has one: the most records its spout
// can have emitted and not yet seen complete, so the most NEW reads again.
constexpr int kMaxSpoutPending = 50;
// How often a wait reads the output topic again (one kcat run over at most
// a few thousand short records).
constexpr milliseconds kOutputPoll{500};

// Both versions' sink (KafkaBolt writing `field` of each tuple to "out")
// and their streams kafka -> work -> out.
std::string SinkAndStreams(const std::string& bootstrap, const std::string& field) {
  return absl::StrCat(R"(  - id: out
    className: tempest.KafkaBolt
    properties:
      - name: bootstrap.servers
        value: ")",
                      bootstrap, R"("
      - name: topic
        value: out
      - name: field
        value: )",
                      field, R"(
streams:
  - from: kafka
    to: work
    grouping:
      type: SHUFFLE
  - from: work
    to: out
    grouping:
      type: SHUFFLE
)");
}

// Both versions' name and config: one worker, at most kMaxSpoutPending
// trees in flight per spout task, a 5 s message timeout. `tempest upgrade`
// kills OLD with its message timeout as the wait, during which nothing
// reads (OLD's spouts are deactivated, NEW's not yet active): 5 s is still
// 25 times what a full max.spout.pending takes through the 4 ms bolt
// (0.2 s), and ten times the spouts' 500 ms commit interval.
std::string Header(const std::string& name) {
  return absl::StrCat("name: ", name, R"(
config:
  topology.workers: 1
  topology.max.spout.pending: )",
                      kMaxSpoutPending, R"(
  topology.message.timeout.secs: 5
)");
}

// The bolts: an IdentityBolt taking `delay_micros` a record (0: none).
std::string WorkBolt(int delay_micros) {
  std::string bolt = R"(bolts:
  - id: work
    className: tempest.IdentityBolt
)";
  if (delay_micros == 0) return bolt;
  return absl::StrCat(bolt, R"(    properties:
      - name: delayMicros
        value: )",
                      delay_micros, "\n");
}

// storm-kafka's form, offsets at /kafkaspout/{id} in ZooKeeper.
std::string OldTopology(const std::string& zk, const std::string& bootstrap,
                        const std::string& name = "events-v1",
                        const std::string& id = "events-reader") {
  return absl::StrCat(Header(name), R"(components:
  - id: stringScheme
    className: org.apache.storm.kafka.StringScheme
  - id: stringMultiScheme
    className: org.apache.storm.spout.SchemeAsMultiScheme
    constructorArgs:
      - ref: stringScheme
  - id: zkHosts
    className: org.apache.storm.kafka.ZkHosts
    constructorArgs:
      - ")",
                      zk, R"("
    properties:
      - name: bootstrap.servers
        value: ")",
                      bootstrap, R"("
  - id: spoutConfig
    className: org.apache.storm.kafka.SpoutConfig
    constructorArgs:
      - ref: zkHosts
      - "events"
      - "/kafkaspout"
      - ")",
                      id, R"("
    properties:
      - name: scheme
        ref: stringMultiScheme
      - name: zkServers
        value: [")",
                      zk, R"("]
      - name: stateUpdateIntervalMs
        value: 500
spouts:
  - id: kafka
    className: org.apache.storm.kafka.KafkaSpout
    constructorArgs:
      - ref: spoutConfig
)",
                      WorkBolt(4000), SinkAndStreams(bootstrap, "str"));
}

// storm-kafka-client's form: the same topic, offsets in a consumer group no
// consumer has used (dev Kafka refuses commits from outside any other).
std::string NewTopology(const std::string& bootstrap, int delay_micros = 0,
                        const std::string& name = "events-v2",
                        const std::string& group = "events-upgraded") {
  return absl::StrCat(Header(name), R"(components:
  - id: spoutConfigBuilder
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder"
    constructorArgs:
      - ")",
                      bootstrap, R"("
      - ["events"]
    properties:
      - name: firstPollOffsetStrategy
        value: UNCOMMITTED_EARLIEST
    configMethods:
      - name: setProp
        args:
          - {"group.id": ")",
                      group, R"("}
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
)",
                      WorkBolt(delay_micros), SinkAndStreams(bootstrap, "value"));
}

class LiveUpgradeTest : public ClusterFixture {
 protected:
  // One supervisor with room for both versions' workers, and a Kafka with
  // the input topic "events" and the output topic "out".
  void StartClusterAndKafka() {
    ClusterSpec spec;
    spec.supervisors = 1;
    spec.slots_per_supervisor = 4;
    StartCluster(spec);
    ASSERT_FALSE(HasFatalFailure());
    auto kafka = DevKafka::Start(1, {{"events", kPartitions}, {"out", 1}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = *std::move(kafka);
  }

  // `per_partition` records into each partition of "events", the old
  // (storm-kafka) topology events-v1 reading them, and a wait until it has
  // written `written` distinct values to "out": mid-stream from then on.
  void StartOldVersionMidStream(int per_partition, size_t written) {
    ASSERT_NO_FATAL_FAILURE(Produce(0, per_partition));
    Submit(OldTopology(zk_->ConnectString(), kafka_->bootstrap_servers()), "events-v1.yaml");
    ASSERT_TRUE(Eventually(
        seconds(120), [&] { return Output().size() >= written; }, kOutputPoll));
  }

  // Values first..first+per_partition*kPartitions-1 into "events".
  void Produce(int first, int per_partition) {
    for (int p = 0; p < kPartitions; ++p) {
      std::vector<DevKafka::Record> records;
      for (int i = 0; i < per_partition; ++i) {
        records.push_back({"", absl::StrCat(first + p * per_partition + i)});
      }
      ASSERT_TRUE(kafka_->Produce("events", p, records).ok());
    }
  }

  // How often each value is in the output topic (kcat reads it to its end).
  std::map<int64_t, int> Output() {
    CommandRun read = RunCommand({"kcat", "-C", "-b", kafka_->bootstrap_servers(), "-t", "out",
                                  "-o", "beginning", "-e", "-q", "-X", "log_level=3"},
                                 dir_.File(absl::StrCat("kcat-", ++commands_)), seconds(60));
    std::map<int64_t, int> seen;
    for (absl::string_view line : absl::StrSplit(read.out, '\n', absl::SkipEmpty())) {
      int64_t v = 0;
      if (absl::SimpleAtoi(line, &v)) ++seen[v];
    }
    return seen;
  }

  // `tempest upgrade OLD FILE` (FILE holds `yaml`) run to its end: all five
  // steps printed, the output gap among them.
  CommandRun Upgrade(const std::string& old_name, const std::string& yaml,
                     const std::string& file_name) {
    const std::string file = dir_.File(file_name);
    std::ofstream(file) << yaml;
    CommandRun upgrade =
        RunCommand({TempestBinary(), "upgrade", old_name, file, "--nimbus", AnyNimbus()},
                   dir_.File(absl::StrCat("upgrade-", ++commands_)), seconds(400));
    std::printf("tempest upgrade %s:\n%s%s", old_name.c_str(), upgrade.out.c_str(),
                upgrade.err.c_str());
    EXPECT_TRUE(upgrade.finished);
    EXPECT_EQ(upgrade.exit_code, 0) << upgrade.out << upgrade.err;
    for (int step = 1; step <= 5; ++step) {
      EXPECT_NE(upgrade.out.find(absl::StrCat("upgrade ", step, "/5: ")), std::string::npos)
          << upgrade.out;
    }
    EXPECT_NE(upgrade.out.find("output gap"), std::string::npos) << upgrade.out;
    return upgrade;
  }

  // Waits until values 0..total-1 are all in the output topic (at most
  // 240 s); then checks none is missing, nothing else is there, and at most
  // `max_duplicates` were written twice.
  void ExpectWholeStream(int64_t total, int64_t max_duplicates) {
    std::map<int64_t, int> seen;
    EXPECT_TRUE(Eventually(
        seconds(240),
        [&] {
          seen = Output();
          return static_cast<int64_t>(seen.size()) >= total;
        },
        kOutputPoll));
    int64_t missing = 0;
    int64_t duplicates = 0;
    for (int64_t v = 0; v < total; ++v) {
      auto it = seen.find(v);
      if (it == seen.end()) {
        ++missing;
      } else {
        duplicates += it->second - 1;
      }
    }
    std::printf("output topic: %zu distinct of %lld, %lld missing, %lld read twice (bound %lld)\n",
                seen.size(), static_cast<long long>(total), static_cast<long long>(missing),
                static_cast<long long>(duplicates), static_cast<long long>(max_duplicates));
    EXPECT_EQ(missing, 0);
    EXPECT_EQ(static_cast<int64_t>(seen.size()), total) << "values outside the stream";
    EXPECT_LE(duplicates, max_duplicates);
  }

  // The consumer group's committed offsets of "events", by partition (only
  // those it has committed), read from outside the group.
  std::map<int, int64_t> GroupCommits(const std::string& group) {
    kafka::GroupOffsetsAdminOptions options;
    options.bootstrap_servers = kafka_->bootstrap_servers();
    auto admin = kafka::GroupOffsetsAdmin::Create(options);
    EXPECT_TRUE(admin.ok()) << admin.status();
    std::map<int, int64_t> out;
    if (!admin.ok()) return out;
    std::vector<kafka::TopicPartition> partitions;
    for (int p = 0; p < kPartitions; ++p) partitions.push_back({"events", p});
    auto commits = (*admin)->ReadCommitted(group, partitions);
    EXPECT_TRUE(commits.ok()) << commits.status();
    if (!commits.ok()) return out;
    for (const kafka::CommittedGroupOffset& c : *commits) {
      if (c.offset >= 0) out[c.partition.partition] = c.offset;
    }
    return out;
  }

  // What moved each partition's offset under /kafkaspout/events-reader.
  json ZkHistory() {
    CommandRun shown = Tempest({"offsets", "history", "--zk", zk_->ConnectString(), "--root",
                                "/kafkaspout", "--id", "events-reader", "--json"});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    return json::parse(shown.out, nullptr, false);
  }

  json ZkOffsets() {
    CommandRun shown = Tempest({"offsets", "show", "--zk", zk_->ConnectString(), "--root",
                                "/kafkaspout", "--id", "events-reader", "--json"});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    return json::parse(shown.out, nullptr, false);
  }

  std::unique_ptr<DevKafka> kafka_;
};

TEST_F(LiveUpgradeTest, StormKafkaToStormKafkaClientMidStreamLosesNothing) {
  StartClusterAndKafka();
  ASSERT_FALSE(HasFatalFailure());
  // Mid-stream: the old topology has written 1200 of the 3000 (its bolt takes
  // 4 ms a record), so it has offsets to carry and records left to read.
  ASSERT_NO_FATAL_FAILURE(StartOldVersionMidStream(1000, 1200));

  // Refused before anything changes: the same name, other topics, a NEW that
  // would not read on from the carried offsets.
  const std::string same_name = dir_.File("same-name.yaml");
  std::ofstream(same_name) << OldTopology(zk_->ConnectString(), kafka_->bootstrap_servers());
  const std::string other_topic = dir_.File("other-topic.yaml");
  std::string other = NewTopology(kafka_->bootstrap_servers());
  other.replace(other.find("[\"events\"]"), 10, "[\"elsewhere\"]");
  std::ofstream(other_topic) << other;
  // A NEW spout that would ignore the carried offsets and read everything again.
  const std::string earliest = dir_.File("earliest.yaml");
  std::string from_start = NewTopology(kafka_->bootstrap_servers());
  from_start.replace(from_start.find("UNCOMMITTED_EARLIEST"), 20, "EARLIEST");
  std::ofstream(earliest) << from_start;
  for (const auto& [file, why] : std::vector<std::pair<std::string, std::string>>{
           {same_name, "give it another name"},
           {other_topic, "an upgrade keeps the topics"},
           {earliest, "has firstPollOffsetStrategy EARLIEST, so it would not start from OLD's "
                      "committed offsets"}}) {
    CommandRun refused =
        RunCommand({TempestBinary(), "upgrade", "events-v1", file, "--nimbus", AnyNimbus()},
                   dir_.File(absl::StrCat("refused-", ++commands_)), seconds(60));
    EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("upgrade step 1 failed: "), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find(why), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("Nothing was changed."), std::string::npos) << refused.err;
  }

  const CommandRun upgrade =
      Upgrade("events-v1", NewTopology(kafka_->bootstrap_servers()), "events-v2.yaml");
  ASSERT_FALSE(HasFailure());

  // The old spout's last commits (partitions it never read have none), each
  // carried into the group, and no owner left.
  const json zk = ZkOffsets();
  ASSERT_FALSE(zk.is_discarded());
  std::printf("old topology's offsets in ZooKeeper: %s\n", zk.dump().c_str());
  int64_t committed_by_old = 0;
  int stored = 0;
  for (const json& p : zk["partitions"]) {
    EXPECT_TRUE(p["owner"].is_null()) << "the old topology still owns a partition: " << zk;
    if (!p["committed_offset"].is_number()) continue;
    ++stored;
    committed_by_old += p["committed_offset"].get<int64_t>();
  }
  EXPECT_GE(committed_by_old, 1200) << zk;
  const std::string carried = absl::StrCat(
      "upgrade 4/5: ", stored, stored == 1 ? " committed offset " : " committed offsets ",
      "of events-v1 carried");
  EXPECT_NE(upgrade.out.find(carried), std::string::npos) << upgrade.out;

  // More of the stream after the cutover; all of it arrives. Had the group
  // not held the old offsets, UNCOMMITTED_EARLIEST would have read the whole
  // topic again: every record the old topology committed.
  ASSERT_NO_FATAL_FAILURE(Produce(3000, 100));
  ExpectWholeStream(3300, kMaxSpoutPending);

  CommandRun kill = Tempest({"kill", "events-v2", "-w", "0"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
}

// Forth and back, each mid-stream: storm-kafka -> storm-kafka-client, then
// `tempest upgrade` the other way to a storm-kafka topology at the first
// one's zkRoot/id, whose nodes still hold the first one's older offsets. The
// carry writes the group's commits over them (each with a journal entry),
// so the rolled-back topology reads on from where the group stopped: none
// lost, and each cutover reads again at most what its old spout had in
// flight.
TEST_F(LiveUpgradeTest, RollbackToStormKafkaMidStreamLosesNothing) {
  StartClusterAndKafka();
  ASSERT_FALSE(HasFatalFailure());
  const std::string zk = zk_->ConnectString();
  const std::string bootstrap = kafka_->bootstrap_servers();
  // 6000 records at 4 ms each in every version: each cutover comes with
  // records left to read.
  ASSERT_NO_FATAL_FAILURE(StartOldVersionMidStream(2000, 1000));
  Upgrade("events-v1", NewTopology(bootstrap, 4000), "events-v2.yaml");
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(Eventually(
      seconds(120), [&] { return Output().size() >= 2500; }, kOutputPoll));

  const CommandRun back =
      Upgrade("events-v2", OldTopology(zk, bootstrap, "events-v3"), "events-v3.yaml");
  ASSERT_FALSE(HasFailure());
  EXPECT_NE(back.out.find("kafka: offsets carried from Kafka consumer group events-upgraded to "
                          "ZooKeeper /kafkaspout/events-reader"),
            std::string::npos)
      << back.out;

  // events-v2 is gone, so its group's commits are final: each is what the
  // carry wrote into the partition's node, and the node has only moved on
  // from it since (events-v3 reads on from there). A partition that neither
  // version committed (the spouts may not have reached it yet) has no carry.
  const std::map<int, int64_t> group = GroupCommits("events-upgraded");
  EXPECT_FALSE(group.empty());
  const std::string carried_line = absl::StrCat(
      "upgrade 4/5: ", group.size(),
      group.size() == 1 ? " committed offset " : " committed offsets ", "of events-v2 carried");
  EXPECT_NE(back.out.find(carried_line), std::string::npos) << back.out;
  const json history = ZkHistory();
  ASSERT_FALSE(history.is_discarded());
  size_t checked = 0;
  for (const json& p : history["partitions"]) {
    const int partition = p.value("partition", -1);
    int64_t carried = -1;
    for (const json& e : p["entries"]) {
      if (e.value("owner", "") == "tempest upgrade") carried = e.value("to", int64_t{-1});
    }
    if (!group.contains(partition)) {
      EXPECT_EQ(carried, -1) << "a carry without a commit of the group: " << p;
      continue;
    }
    ++checked;
    EXPECT_EQ(carried, group.at(partition)) << "no carry of the group's commit: " << p;
    EXPECT_GE(p.value("stored_offset", int64_t{-1}), group.at(partition)) << p;
  }
  EXPECT_EQ(checked, group.size()) << "a committed partition without a journal: " << history;

  ASSERT_NO_FATAL_FAILURE(Produce(6000, 100));
  ExpectWholeStream(6300, 2 * kMaxSpoutPending);

  CommandRun kill = Tempest({"kill", "events-v3", "-w", "0"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
}

// The two other carries end to end, each mid-stream: storm-kafka to another
// zkRoot/id (its partition nodes copied), then to storm-kafka-client (the
// nodes into a group), then to another group.id (the commits copied). Each
// cutover reads again at most what its old spout had in flight.
TEST_F(LiveUpgradeTest, EveryCarryMidStreamLosesNothing) {
  StartClusterAndKafka();
  ASSERT_FALSE(HasFatalFailure());
  const std::string zk = zk_->ConnectString();
  const std::string bootstrap = kafka_->bootstrap_servers();
  ASSERT_NO_FATAL_FAILURE(StartOldVersionMidStream(2000, 800));
  const CommandRun zk_to_zk = Upgrade(
      "events-v1", OldTopology(zk, bootstrap, "events-v2", "events-reader-2"), "events-v2.yaml");
  ASSERT_FALSE(HasFailure());
  EXPECT_NE(zk_to_zk.out.find("offsets carried from ZooKeeper /kafkaspout/events-reader to "
                              "ZooKeeper /kafkaspout/events-reader-2"),
            std::string::npos)
      << zk_to_zk.out;

  ASSERT_TRUE(Eventually(
      seconds(120), [&] { return Output().size() >= 2000; }, kOutputPoll));
  Upgrade("events-v2", NewTopology(bootstrap, 4000, "events-v3", "events-a"), "events-v3.yaml");
  ASSERT_FALSE(HasFailure());

  ASSERT_TRUE(Eventually(
      seconds(120), [&] { return Output().size() >= 3200; }, kOutputPoll));
  const CommandRun group_to_group =
      Upgrade("events-v3", NewTopology(bootstrap, 4000, "events-v4", "events-b"), "events-v4.yaml");
  ASSERT_FALSE(HasFailure());
  EXPECT_NE(group_to_group.out.find("offsets carried from Kafka consumer group events-a to Kafka "
                                    "consumer group events-b"),
            std::string::npos)
      << group_to_group.out;

  ASSERT_NO_FATAL_FAILURE(Produce(6000, 100));
  ExpectWholeStream(6300, 3 * kMaxSpoutPending);

  CommandRun kill = Tempest({"kill", "events-v4", "-w", "0"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
}

}  // namespace
}  // namespace tempest::testing
