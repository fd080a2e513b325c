// `tempest migrate offsets` against a real ZooKeeper and a Kafka-protocol
// endpoint: storm-kafka offsets seeded with the bare ZooKeeper C client, the
// consumer group seeded and read back with kafka-python (an independent
// client), the real binary in between. The plan, each refusal, a dry run that
// writes nothing, and --execute writing and verifying.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/kafka/group_member.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/raw_zk_client.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::testing {
namespace {

using std::chrono::seconds;

constexpr char kMetadata[] =
    R"({"taskId":-1,"threadName":"tempest migrate offsets","topologyId":"migrated-from-zookeeper:/kafkaspout/legacy"})";

// storm-kafka's node, as its PartitionManager writes it.
std::string StormKafkaNode(const std::string& topic, int partition, int64_t offset) {
  return nlohmann::json({{"topology", {{"id", "legacy-7-1466000000"}, {"name", "legacy"}}},
                         {"offset", offset},
                         {"partition", partition},
                         {"broker", {{"host", "kafka1"}, {"port", 9092}}},
                         {"topic", topic}})
      .dump();
}

class MigrateOffsetsCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = ZkEnsemble::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk);
    raw_ = RawZkClient::Connect(zk_->ConnectString(), 10000, seconds(20));
    ASSERT_NE(raw_, nullptr);
    auto kafka = DevKafka::Start(1, {{"clicks", 3}, {"views", 2}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    for (const auto& [topic, partition, count] :
         std::vector<std::tuple<std::string, int, int>>{{"clicks", 0, 50}, {"clicks", 1, 30},
                                                        {"views", 0, 20}}) {
      std::vector<DevKafka::Record> records(count, DevKafka::Record{"", "x"});
      ASSERT_TRUE(kafka_->Produce(topic, partition, records).ok());
    }
  }

  // Creates `path` and its missing parents (persistent, empty) with the bare client.
  void Create(const std::string& path, const std::string& data, int flags = 0) {
    for (size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1)) {
      const int rc = raw_->Create(path.substr(0, at), "");
      ASSERT_TRUE(rc == ZOK || rc == ZNODEEXISTS) << path.substr(0, at) << ": " << rc;
    }
    ASSERT_EQ(raw_->Create(path, data, flags), ZOK) << path;
  }

  // legacy's offsets, flat layout: clicks/0 at 10, clicks/1 at 30, clicks/2 none.
  void SeedLegacy() {
    Create("/kafkaspout/legacy/partition_0", StormKafkaNode("clicks", 0, 10));
    Create("/kafkaspout/legacy/partition_1", StormKafkaNode("clicks", 1, 30));
  }

  CommandRun Migrate(const std::string& id, const std::string& group,
                     const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {TempestBinary(),  "migrate", "offsets",
                                     "--zk",           zk_->ConnectString(),
                                     "--root",         "/kafkaspout",
                                     "--id",           id,
                                     "--bootstrap",    kafka_->bootstrap_servers(),
                                     "--group",        group};
    argv.insert(argv.end(), extra.begin(), extra.end());
    CommandRun run = RunCommand(argv, dir_.File(absl::StrCat("migrate", ++runs_)), seconds(90));
    EXPECT_TRUE(run.finished) << absl::StrJoin(argv, " ");
    return run;
  }

  nlohmann::json MigrateJson(const std::string& id, const std::string& group,
                             std::vector<std::string> extra, int expect_exit) {
    extra.push_back("--json");
    CommandRun run = Migrate(id, group, extra);
    EXPECT_EQ(run.exit_code, expect_exit) << run.out << run.err;
    nlohmann::json doc = nlohmann::json::parse(run.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << run.out;
    return doc;
  }

  // Runs a kafka-python script; argv[1] is the bootstrap servers.
  std::string KafkaPython(const std::string& script) {
    const std::string path = dir_.File(absl::StrCat("kafka", ++runs_, ".py"));
    std::ofstream(path) << "import sys\nfrom kafka import KafkaAdminClient, KafkaConsumer, "
                           "TopicPartition\nfrom kafka.structs import OffsetAndMetadata\n"
                           "BOOTSTRAP = sys.argv[1]\n"
                        << script << "\n";
    CommandRun run = RunCommand({"/usr/bin/python3", path, kafka_->bootstrap_servers()},
                                path, seconds(60));
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    return run.out;
  }

  // The group's commits as kafka-python's admin client reads them:
  // "topic partition offset metadata" lines (offset -1: none).
  std::map<std::string, std::string> GroupOffsets(const std::string& group) {
    const std::string out = KafkaPython(absl::StrCat(R"(
admin = KafkaAdminClient(bootstrap_servers=BOOTSTRAP)
parts = [TopicPartition("clicks", p) for p in range(3)] + [TopicPartition("views", p) for p in range(2)]
offsets = admin.list_consumer_group_offsets(")", group, R"(", partitions=parts)
for tp in parts:
    o = offsets.get(tp)
    print("%s/%d %d %s" % (tp.topic, tp.partition, o.offset if o else -1, o.metadata if o else ""))
admin.close()
)"));
    std::map<std::string, std::string> by_partition;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      const size_t space = line.find(' ');
      if (space != std::string::npos) by_partition[line.substr(0, space)] = line.substr(space + 1);
    }
    return by_partition;
  }

  // A simple commit by kafka-python (a consumer with a manual assignment).
  void KafkaPythonCommit(const std::string& group, const std::string& topic, int partition,
                         int64_t offset, const std::string& metadata) {
    KafkaPython(absl::StrCat("c = KafkaConsumer(bootstrap_servers=BOOTSTRAP, group_id=\"", group,
                             "\", enable_auto_commit=False)\ntp = TopicPartition(\"", topic,
                             "\", ", partition, ")\nc.assign([tp])\nc.commit({tp: "
                             "OffsetAndMetadata(", offset, ", \"", metadata, "\")})\nc.close()"));
  }

  static const nlohmann::json& Row(const nlohmann::json& doc, const std::string& topic,
                                   int partition) {
    static const nlohmann::json kNone;
    for (const auto& r : doc["partitions"]) {
      if (r["topic"] == topic && r["partition"] == partition) return r;
    }
    return kNone;
  }

  TempDir dir_{"migrate-offsets"};
  std::unique_ptr<ZkEnsemble> zk_;
  std::unique_ptr<RawZkClient> raw_;
  std::unique_ptr<DevKafka> kafka_;
  int runs_ = 0;
};

TEST_F(MigrateOffsetsCommandTest, DryRunPrintsThePlanAndWritesNothing) {
  SeedLegacy();
  nlohmann::json doc = MigrateJson("legacy", "clicks-pipeline", {}, 0);
  EXPECT_EQ(doc["execute"], false);
  EXPECT_EQ(doc["written"], false);
  EXPECT_EQ(doc["writes"], 2);
  EXPECT_EQ(doc["metadata"], kMetadata);
  EXPECT_TRUE(doc["refusals"].empty()) << doc.dump();
  ASSERT_EQ(doc["partitions"].size(), 3u) << doc.dump();
  const nlohmann::json& p0 = Row(doc, "clicks", 0);
  EXPECT_EQ(p0["zk_offset"], 10);
  EXPECT_EQ(p0["zk_path"], "/kafkaspout/legacy/partition_0");
  EXPECT_EQ(p0["zk_topology_id"], "legacy-7-1466000000");
  EXPECT_TRUE(p0["group_offset"].is_null());
  EXPECT_EQ(p0["log_start_offset"], 0);
  EXPECT_EQ(p0["log_end_offset"], 50);
  EXPECT_EQ(p0["write_offset"], 10);
  EXPECT_EQ(p0["action"], "write");
  EXPECT_EQ(Row(doc, "clicks", 1)["write_offset"], 30);
  const nlohmann::json& p2 = Row(doc, "clicks", 2);
  EXPECT_TRUE(p2["zk_offset"].is_null());
  EXPECT_TRUE(p2["write_offset"].is_null());
  EXPECT_EQ(p2["action"], "no-zookeeper-offset");

  CommandRun table = Migrate("legacy", "clicks-pipeline", {});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const char* column : {"TOPIC", "PARTITION", "ZK-OFFSET", "GROUP-OFFSET", "LOG-START",
                             "LOG-END", "WRITE", "ACTION"}) {
    EXPECT_NE(table.out.find(column), std::string::npos) << column << "\n" << table.out;
  }
  EXPECT_NE(table.out.find("dry run: nothing written; add --execute"), std::string::npos)
      << table.out;

  for (const auto& [partition, offset] : GroupOffsets("clicks-pipeline")) {
    EXPECT_EQ(offset.substr(0, 3), "-1 ") << partition << " was committed by a dry run";
  }
}

// A topic the spout has no offsets of is one line, before Kafka is asked
// about it: nothing committed, and the topic not created.
TEST_F(MigrateOffsetsCommandTest, RefusesATopicTheSpoutHasNoOffsetsOf) {
  SeedLegacy();
  CommandRun run = Migrate("legacy", "typo-pipeline", {"--topic", "typo-topic", "--execute"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find("/kafkaspout/legacy keeps the offsets of one topic, topic clicks "
                         "(partitions 0-1): typo-topic is not it; nothing to migrate"),
            std::string::npos)
      << run.err;
  for (const auto& [partition, offset] : GroupOffsets("typo-pipeline")) {
    EXPECT_EQ(offset.substr(0, 3), "-1 ") << partition << " was committed";
  }
  const std::string topics =
      KafkaPython("c = KafkaConsumer(bootstrap_servers=BOOTSTRAP)\n"
                  "print(' '.join(sorted(c.topics())))\nc.close()");
  EXPECT_NE(topics.find("clicks"), std::string::npos) << topics;
  EXPECT_EQ(topics.find("typo-topic"), std::string::npos) << topics;
}

TEST_F(MigrateOffsetsCommandTest, ExecuteCommitsTheOffsetsAndReadsThemBack) {
  SeedLegacy();
  CommandRun run = Migrate("legacy", "clicks-pipeline", {"--execute"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("committed 2 offsets to consumer group clicks-pipeline and read them "
                         "back: as planned"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("READ-BACK"), std::string::npos) << run.out;

  std::map<std::string, std::string> group = GroupOffsets("clicks-pipeline");
  EXPECT_EQ(group["clicks/0"], absl::StrCat("10 ", kMetadata));
  EXPECT_EQ(group["clicks/1"], absl::StrCat("30 ", kMetadata));
  EXPECT_EQ(group["clicks/2"].substr(0, 3), "-1 ") << "no ZooKeeper offset, nothing to write";

  // Run again: the group already holds the plan, so nothing is written.
  nlohmann::json again = MigrateJson("legacy", "clicks-pipeline", {"--execute"}, 0);
  EXPECT_EQ(again["writes"], 0);
  EXPECT_EQ(again["verified"], true);
  EXPECT_EQ(Row(again, "clicks", 0)["action"], "already-committed");
  EXPECT_EQ(Row(again, "clicks", 0)["group_offset"], 10);
  EXPECT_EQ(Row(again, "clicks", 0)["group_metadata"], kMetadata);
  EXPECT_EQ(Row(again, "clicks", 0)["read_back_offset"], 10);
}

// A multi-topic storm-kafka spout keeps a {topic}/ level; --topic takes one.
TEST_F(MigrateOffsetsCommandTest, ReadsTheTopicLevelLayoutOfAMultiTopicSpout) {
  Create("/kafkaspout/multi/clicks/partition_0", StormKafkaNode("clicks", 0, 45));
  Create("/kafkaspout/multi/views/partition_0", StormKafkaNode("views", 0, 20));
  Create("/kafkaspout/multi/views/partition_1", StormKafkaNode("views", 1, 0));
  nlohmann::json all = MigrateJson("multi", "multi-group", {}, 0);
  ASSERT_EQ(all["partitions"].size(), 5u) << all.dump();
  EXPECT_EQ(Row(all, "clicks", 0)["zk_path"], "/kafkaspout/multi/clicks/partition_0");
  EXPECT_EQ(Row(all, "clicks", 0)["write_offset"], 45);
  EXPECT_EQ(Row(all, "views", 0)["write_offset"], 20);
  EXPECT_EQ(Row(all, "views", 1)["write_offset"], 0);
  EXPECT_EQ(all["writes"], 3);

  nlohmann::json views = MigrateJson("multi", "multi-group", {"--topic", "views", "--execute"}, 0);
  ASSERT_EQ(views["partitions"].size(), 2u) << views.dump();
  EXPECT_EQ(views["verified"], true);
  std::map<std::string, std::string> group = GroupOffsets("multi-group");
  EXPECT_EQ(group["views/0"].substr(0, 3), "20 ");
  EXPECT_EQ(group["views/1"].substr(0, 2), "0 ");
  EXPECT_EQ(group["clicks/0"].substr(0, 3), "-1 ") << "--topic views wrote clicks";
}

TEST_F(MigrateOffsetsCommandTest, RefusesWhileAStormKafkaSpoutOwnsAPartition) {
  SeedLegacy();
  // The ephemeral ownership node of a running spout task.
  Create("/kafkaspout/legacy/@owners/partition_1",
         R"({"session":"1","owner":"legacy-7-1466000000:kafka:3@host1"})", ZOO_EPHEMERAL);
  CommandRun run = Migrate("legacy", "clicks-pipeline", {"--execute"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("tempest: clicks/1 is owned by a running storm-kafka spout "
                         "(host1/legacy-7-1466000000/kafka:3): stop the topology first"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("refused: nothing written (1 reason)"), std::string::npos) << run.err;
  for (const auto& [partition, offset] : GroupOffsets("clicks-pipeline")) {
    EXPECT_EQ(offset.substr(0, 3), "-1 ") << partition << " was committed despite the refusal";
  }
}

TEST_F(MigrateOffsetsCommandTest, RefusesWhileTheConsumerGroupHasMembers) {
  SeedLegacy();
  // What a running storm-kafka-client spout task is: a member of its group.
  kafka::GroupMemberOptions options;
  options.bootstrap_servers = kafka_->bootstrap_servers();
  options.group_id = "clicks-pipeline";
  options.topics = {"clicks"};
  auto member = kafka::KafkaGroupMember::Join(options);
  ASSERT_TRUE(member.ok()) << member.status();
  bool assigned = false;
  Eventually(seconds(30), [&] {
    for (const kafka::GroupEvent& e : (*member)->TakeEvents()) {
      assigned = assigned || e.kind == kafka::GroupEvent::Kind::kAssigned;
    }
    return assigned;
  });
  ASSERT_TRUE(assigned);

  CommandRun run = Migrate("legacy", "clicks-pipeline", {"--execute"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("tempest: consumer group clicks-pipeline refuses commits from outside "
                         "the group, so it has members"),
            std::string::npos)
      << run.err;
  nlohmann::json doc = MigrateJson("legacy", "clicks-pipeline", {}, 1);
  EXPECT_EQ(doc["group_members"]["in_use"], true);
  EXPECT_EQ(doc["written"], false);
  (*member)->Leave(seconds(5));
  for (const auto& [partition, offset] : GroupOffsets("clicks-pipeline")) {
    EXPECT_EQ(offset.substr(0, 3), "-1 ") << partition << " was committed despite the refusal";
  }
}

TEST_F(MigrateOffsetsCommandTest, RefusesAZooKeeperOffsetOutsideKafkasLogUnlessAllowedToClamp) {
  Create("/kafkaspout/legacy/partition_0", StormKafkaNode("clicks", 0, 10));
  Create("/kafkaspout/legacy/partition_1", StormKafkaNode("clicks", 1, 500));
  CommandRun run = Migrate("legacy", "clicks-pipeline", {"--execute"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("tempest: clicks/1: the ZooKeeper offset 500 is outside Kafka's log "
                         "[0, 30] (beyond the log end: was the topic recreated?); add "
                         "--allow-out-of-range to write 30 instead"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(GroupOffsets("clicks-pipeline")["clicks/0"].substr(0, 3), "-1 ");

  nlohmann::json doc =
      MigrateJson("legacy", "clicks-pipeline", {"--allow-out-of-range", "--execute"}, 0);
  EXPECT_EQ(Row(doc, "clicks", 1)["write_offset"], 30);
  EXPECT_EQ(Row(doc, "clicks", 1)["note"], "clamped from 500 to the log end");
  EXPECT_EQ(doc["verified"], true);
  std::map<std::string, std::string> group = GroupOffsets("clicks-pipeline");
  EXPECT_EQ(group["clicks/0"].substr(0, 3), "10 ");
  EXPECT_EQ(group["clicks/1"].substr(0, 3), "30 ");
}

TEST_F(MigrateOffsetsCommandTest, RefusesAnUnreadableZooKeeperNode) {
  Create("/kafkaspout/legacy/partition_0", StormKafkaNode("clicks", 0, 10));
  Create("/kafkaspout/legacy/partition_1", "not json");
  CommandRun run = Migrate("legacy", "clicks-pipeline", {});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("tempest: clicks/1: the ZooKeeper node /kafkaspout/legacy/partition_1 "
                         "does not parse"),
            std::string::npos)
      << run.err;
}

TEST_F(MigrateOffsetsCommandTest, RefusesToReplaceADifferentCommitOfTheGroupUnlessOverwrite) {
  SeedLegacy();
  KafkaPythonCommit("clicks-pipeline", "clicks", 0, 5, "by-hand");
  KafkaPythonCommit("clicks-pipeline", "clicks", 1, 30, "same");
  CommandRun run = Migrate("legacy", "clicks-pipeline", {"--execute"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("tempest: clicks/0: consumer group clicks-pipeline already has offset 5 "
                         "committed (by-hand), ZooKeeper has 10; add --overwrite to replace it"),
            std::string::npos)
      << run.err;
  // An equal commit is no conflict.
  EXPECT_EQ(run.err.find("clicks/1"), std::string::npos) << run.err;
  EXPECT_EQ(GroupOffsets("clicks-pipeline")["clicks/0"], "5 by-hand");

  nlohmann::json doc = MigrateJson("legacy", "clicks-pipeline", {"--overwrite", "--execute"}, 0);
  EXPECT_EQ(doc["writes"], 1);
  EXPECT_EQ(Row(doc, "clicks", 0)["note"], "replaces the group's 5");
  EXPECT_EQ(Row(doc, "clicks", 1)["action"], "already-committed");
  EXPECT_EQ(doc["verified"], true);
  std::map<std::string, std::string> group = GroupOffsets("clicks-pipeline");
  EXPECT_EQ(group["clicks/0"], absl::StrCat("10 ", kMetadata));
  EXPECT_EQ(group["clicks/1"], "30 same");
}

}  // namespace
}  // namespace tempest::testing
