// `tempest upgrade`'s carries beside ZooKeeper -> group, against a real
// ZooKeeper and a Kafka-protocol endpoint: a group's commits into storm-kafka
// partition nodes (an existing node keeps its topology id), nodes to another
// zkRoot/id, commits to another group.id with their metadata, and the
// refusal while a storm-kafka owner holds a partition, which writes nothing.
#include "cli/offsets/offset_carry.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "common/core/metrics_registry.h"
#include "spout/kafka/offsets/offset_admin.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"
#include "tests/integration/coord/test_util.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::cli {
namespace {

using testing::DevKafka;
using testing::ZkEnsemble;

class OffsetCarryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = ZkEnsemble::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    ensemble_ = std::move(*zk);
    zk_ = coord::testutil::Connect(
        coord::testutil::TestOptions(ensemble_->ConnectString(), metrics_));
    ASSERT_NE(zk_, nullptr);
    auto kafka = DevKafka::Start(1, {{"events", 3}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    for (int p = 0; p < 3; ++p) {
      std::vector<DevKafka::Record> records(20, DevKafka::Record{"", "x"});
      ASSERT_TRUE(kafka_->Produce("events", p, records).ok());
    }
    kafka::GroupOffsetsAdminOptions options;
    options.bootstrap_servers = kafka_->bootstrap_servers();
    auto admin = kafka::GroupOffsetsAdmin::Create(options);
    ASSERT_TRUE(admin.ok()) << admin.status();
    admin_ = std::move(*admin);
  }

  GroupOffsetsSite Group(const std::string& group) {
    return GroupOffsetsSite{admin_.get(), kafka_->bootstrap_servers(), group};
  }
  ZkOffsetsSite Zk(const std::string& id) { return ZkOffsetsSite{zk_.get(), "/ks", id}; }

  // The offsets under /ks/{id}, by partition, and each node as stored.
  std::map<int, spout::StormKafkaOffset> Nodes(const std::string& id) {
    std::map<int, spout::StormKafkaOffset> out;
    auto stored = spout::ListStoredOffsets(*zk_, "/ks", id);
    if (absl::IsNotFound(stored.status())) return out;
    EXPECT_TRUE(stored.ok()) << stored.status();
    if (!stored.ok()) return out;
    for (const spout::StoredPartitionOffset& s : *stored) {
      if (s.state.has_value()) out[s.partition] = *s.state;
    }
    return out;
  }

  void SetNode(const std::string& id, int partition, int64_t offset) {
    spout::SetOffsetRequest request;
    request.zk_root = "/ks";
    request.spout_id = id;
    request.topic = "events";
    request.partition = partition;
    request.offset = offset;
    ASSERT_TRUE(spout::SetStoredOffset(*zk_, request).ok());
  }

  core::MetricsRegistry metrics_;
  std::unique_ptr<ZkEnsemble> ensemble_;
  std::unique_ptr<coord::ZkSession> zk_;
  std::unique_ptr<DevKafka> kafka_;
  std::unique_ptr<kafka::GroupOffsetsAdmin> admin_;
};

TEST_F(OffsetCarryTest, AGroupsCommitsBecomeStormKafkaNodes) {
  ASSERT_TRUE(admin_->Commit("client", {{{"events", 0}, 5}, {{"events", 2}, 7}}, "").ok());
  // The node a storm-kafka topology left: its topology id stays, its offset goes.
  const std::string legacy = spout::EncodeStormKafkaOffset(
      {"legacy-7-1466000000", "legacy", 1, 0, "kafka1", 9092, "events"});
  coord::ZkCreateOptions parents;
  parents.create_parents = true;
  ASSERT_TRUE(zk_->Create("/ks/back/partition_0", legacy, parents).ok());

  absl::StatusOr<int> carried = CarryGroupToZk(Group("client"), Zk("back"), {"events"});
  ASSERT_TRUE(carried.ok()) << carried.status();
  EXPECT_EQ(*carried, 2);
  std::map<int, spout::StormKafkaOffset> nodes = Nodes("back");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].offset, 5);
  EXPECT_EQ(nodes[0].topology_id, "legacy-7-1466000000");
  EXPECT_EQ(nodes[0].broker_host, "kafka1");
  EXPECT_EQ(nodes[2].offset, 7);
  EXPECT_EQ(nodes[2].topic, "events");
  EXPECT_EQ(nodes[2].partition, 2);
}

TEST_F(OffsetCarryTest, NothingIsWrittenWhileAPartitionHasAnOwner) {
  ASSERT_TRUE(admin_->Commit("client", {{{"events", 0}, 5}, {{"events", 1}, 6}}, "").ok());
  SetNode("back", 0, 3);
  coord::ZkCreateOptions ephemeral;
  ephemeral.mode = coord::ZkCreateMode::kEphemeral;
  ephemeral.create_parents = true;
  ASSERT_TRUE(
      zk_->Create(spout::OwnerNodePath("/ks", "back", "events", 1, false), "a spout", ephemeral)
          .ok());

  absl::StatusOr<int> carried = CarryGroupToZk(Group("client"), Zk("back"), {"events"});
  EXPECT_TRUE(absl::IsFailedPrecondition(carried.status())) << carried.status();
  EXPECT_NE(carried.status().message().find("owned by a running spout"), std::string::npos)
      << carried.status();
  std::map<int, spout::StormKafkaOffset> nodes = Nodes("back");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].offset, 3) << "a refused carry wrote";
}

TEST_F(OffsetCarryTest, ANodeTheGroupNeverCommittedIsRefused) {
  ASSERT_TRUE(admin_->Commit("client", {{{"events", 0}, 5}}, "").ok());
  SetNode("back", 1, 9);
  absl::StatusOr<int> carried = CarryGroupToZk(Group("client"), Zk("back"), {"events"});
  EXPECT_TRUE(absl::IsFailedPrecondition(carried.status())) << carried.status();
  EXPECT_NE(carried.status().message().find("never committed"), std::string::npos)
      << carried.status();
  std::map<int, spout::StormKafkaOffset> nodes = Nodes("back");
  EXPECT_EQ(nodes.size(), 1u) << "a refused carry wrote";
}

TEST_F(OffsetCarryTest, NodesAreCopiedToAnotherId) {
  SetNode("first", 0, 11);
  SetNode("first", 1, 12);
  absl::StatusOr<int> carried = CarryZkToZk(Zk("first"), Zk("second"), {"events"});
  ASSERT_TRUE(carried.ok()) << carried.status();
  EXPECT_EQ(*carried, 2);
  std::map<int, spout::StormKafkaOffset> nodes = Nodes("second");
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].offset, 11);
  EXPECT_EQ(nodes[1].offset, 12);
  EXPECT_EQ(Nodes("first").size(), 2u) << "the source is left as it was";

  SetNode("third", 2, 30);
  absl::StatusOr<int> stale = CarryZkToZk(Zk("first"), Zk("third"), {"events"});
  EXPECT_TRUE(absl::IsFailedPrecondition(stale.status())) << stale.status();
  EXPECT_EQ(Nodes("third").size(), 1u) << "a refused carry wrote";
}

TEST_F(OffsetCarryTest, CommitsAreCopiedToAnotherGroup) {
  ASSERT_TRUE(admin_->Commit("old", {{{"events", 1}, 9}, {{"events", 2}, 4}}, "old's").ok());
  absl::StatusOr<int> carried = CarryGroupToGroup(Group("old"), Group("new"), {"events"});
  ASSERT_TRUE(carried.ok()) << carried.status();
  EXPECT_EQ(*carried, 2);
  auto read = admin_->ReadCommitted("new", {{"events", 0}, {"events", 1}, {"events", 2}});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)[0].offset, -1);
  EXPECT_EQ((*read)[1].offset, 9);
  EXPECT_EQ((*read)[2].offset, 4);
  EXPECT_EQ((*read)[1].metadata, CarriedCommitMetadata("old"));
  EXPECT_NE((*read)[1].metadata.find("carried-from-group:old"), std::string::npos);
}

}  // namespace
}  // namespace tempest::cli
