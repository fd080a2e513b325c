// GroupOffsetsAdmin against a real Kafka-protocol endpoint (DevKafka over
// TCP): simple commits with metadata read back, partitions Kafka does not
// have, and a group with a member, which refuses commits from outside it.
// DevKafka (librdkafka's mock cluster) answers no ListGroups/DescribeGroups,
// so Members reports what the probe commit found.
#include "common/kafka/group_offsets_admin.h"

#include <gtest/gtest.h>

#include "common/kafka/group_member.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"

namespace tempest::kafka {
namespace {

using std::chrono::seconds;
using testing::DevKafka;

class GroupOffsetsAdminTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kafka = DevKafka::Start(1, {{"events", 3}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    GroupOffsetsAdminOptions options;
    options.bootstrap_servers = kafka_->bootstrap_servers();
    auto admin = GroupOffsetsAdmin::Create(options);
    ASSERT_TRUE(admin.ok()) << admin.status();
    admin_ = std::move(*admin);
  }

  std::vector<TopicPartition> Events() const {
    return {{"events", 0}, {"events", 1}, {"events", 2}};
  }

  std::unique_ptr<DevKafka> kafka_;
  std::unique_ptr<GroupOffsetsAdmin> admin_;
};

TEST_F(GroupOffsetsAdminTest, SimpleCommitsAreReadBackWithTheirMetadata) {
  auto members = admin_->Members("fresh");
  ASSERT_TRUE(members.ok()) << members.status();
  EXPECT_FALSE(members->listed) << "the mock cluster cannot list groups";
  EXPECT_FALSE(members->InUse());

  auto before = admin_->ReadCommitted("fresh", Events());
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->size(), 3u);
  for (const auto& o : *before) EXPECT_EQ(o.offset, -1) << "a new group has no commits";

  const std::string metadata = R"({"taskId":-1,"topologyId":"t"})";
  ASSERT_TRUE(admin_->Commit("fresh", {{{"events", 0}, 7}, {{"events", 2}, 0}}, metadata).ok());
  auto after = admin_->ReadCommitted("fresh", Events());
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->size(), 3u);
  EXPECT_EQ((*after)[0].offset, 7);
  EXPECT_EQ((*after)[0].metadata, metadata);
  EXPECT_EQ((*after)[1].offset, -1);
  EXPECT_EQ((*after)[2].offset, 0);
  EXPECT_EQ((*after)[2].metadata, metadata);

  // The probe wrote nothing, and the group is still open to simple commits.
  members = admin_->Members("fresh");
  ASSERT_TRUE(members.ok()) << members.status();
  EXPECT_FALSE(members->InUse());
  EXPECT_TRUE(admin_->Commit("fresh", {{{"events", 1}, 3}}, "").ok());
  auto again = admin_->ReadCommitted("fresh", {{"events", 1}});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)[0].offset, 3);
  EXPECT_EQ((*again)[0].metadata, "");
}

TEST_F(GroupOffsetsAdminTest, APartitionKafkaDoesNotHaveIsNotFound) {
  auto read = admin_->ReadCommitted("g", {{"events", 9}});
  EXPECT_TRUE(absl::IsNotFound(read.status())) << read.status();
  EXPECT_FALSE(admin_->Commit("g", {{{"events", 9}, 1}}, "").ok());
  EXPECT_TRUE(absl::IsInvalidArgument(admin_->Commit("g", {{{"events", 0}, -5}}, "")));
}

TEST_F(GroupOffsetsAdminTest, AGroupWithAMemberRefusesCommitsFromOutside) {
  ASSERT_TRUE(admin_->Commit("busy", {{{"events", 0}, 4}}, "before").ok());
  GroupMemberOptions options;
  options.bootstrap_servers = kafka_->bootstrap_servers();
  options.group_id = "busy";
  options.topics = {"events"};
  auto member = KafkaGroupMember::Join(options);
  ASSERT_TRUE(member.ok()) << member.status();
  // Joined once the group assigned it its partitions.
  bool assigned = false;
  testing::Eventually(seconds(30), [&] {
    for (const GroupEvent& e : (*member)->TakeEvents()) {
      assigned = assigned || e.kind == GroupEvent::Kind::kAssigned;
    }
    return assigned;
  });
  ASSERT_TRUE(assigned);

  auto members = admin_->Members("busy");
  ASSERT_TRUE(members.ok()) << members.status();
  EXPECT_TRUE(members->InUse());
  absl::Status refused = admin_->Commit("busy", {{{"events", 0}, 9}}, "after");
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
  EXPECT_NE(refused.message().find("events/0"), std::string::npos) << refused;
  auto read = admin_->ReadCommitted("busy", {{"events", 0}});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ((*read)[0].offset, 4) << "the refused commit changed the offset";
  EXPECT_EQ((*read)[0].metadata, "before");
  (*member)->Leave(seconds(5));
}

}  // namespace
}  // namespace tempest::kafka
