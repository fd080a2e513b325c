// KafkaGroupOffsetStore against a Kafka-protocol endpoint (DevKafka over
// TCP): the store joins its consumer group only once the spout sets an
// assignment, so offsets committed to the group after Create (what an
// upgrade carries in while the new topology waits inactive) are the ones
// its acquisitions read, and the group took that commit from outside.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/kafka/group_offsets_admin.h"
#include "spout/kafka/offsets/kafka_group_offset_store.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"

namespace tempest::spout {
namespace {

using std::chrono::seconds;
using tempest::testing::DevKafka;
using tempest::testing::Eventually;

TEST(KafkaGroupStoreTest, JoinsAtTheFirstAssignmentAndReadsCommitsMadeBeforeIt) {
  auto kafka = DevKafka::Start(1, {{"events", 2}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  kafka::GroupOffsetsAdminOptions admin_options;
  admin_options.bootstrap_servers = (*kafka)->bootstrap_servers();
  auto admin = kafka::GroupOffsetsAdmin::Create(admin_options);
  ASSERT_TRUE(admin.ok()) << admin.status();

  KafkaGroupOffsetStore::Options options;
  options.member.bootstrap_servers = (*kafka)->bootstrap_servers();
  options.member.group_id = "upgraded";
  options.member.topics = {"events"};
  options.topology_id = "new-1-1";
  auto store = KafkaGroupOffsetStore::Create(options);
  ASSERT_TRUE(store.ok()) << store.status();

  // Opened but not assigned: no member, so a commit from outside is taken.
  auto members = (*admin)->Members("upgraded");
  ASSERT_TRUE(members.ok()) << members.status();
  EXPECT_FALSE(members->InUse());
  const TopicPartition p0{"events", 0};
  const TopicPartition p1{"events", 1};
  ASSERT_TRUE((*admin)->Commit("upgraded", {{p0, 5}, {p1, 7}}, "").ok());

  (*store)->SetAssignment({p0, p1});
  std::map<TopicPartition, int64_t> stored;
  ASSERT_TRUE(Eventually(seconds(30), [&] {
    for (const OffsetStoreUpdate& u : (*store)->TakeUpdates()) {
      if (u.kind == OffsetStoreUpdate::Kind::kAcquired && u.stored.has_value()) {
        stored[u.partition] = u.stored->offset;
      }
    }
    return stored.size() == 2;
  }));
  EXPECT_EQ(stored[p0], 5);
  EXPECT_EQ(stored[p1], 7);
  (*store)->Close(seconds(5));
}

KafkaGroupOffsetStore::Options GroupOptions(std::string group, std::vector<std::string> topics) {
  KafkaGroupOffsetStore::Options options;
  options.member.bootstrap_servers = "127.0.0.1:1";
  options.member.group_id = std::move(group);
  options.member.topics = std::move(topics);
  return options;
}

TEST(KafkaGroupStoreTest, CreateStillRefusesAGroupWithoutIdOrTopics) {
  EXPECT_TRUE(absl::IsInvalidArgument(
      KafkaGroupOffsetStore::Create(GroupOptions("", {"events"})).status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(KafkaGroupOffsetStore::Create(GroupOptions("g", {})).status()));
}

}  // namespace
}  // namespace tempest::spout
