// KafkaGroupMember against a real Kafka-protocol endpoint (DevKafka over
// TCP): what the group assigns, committed offsets and their metadata read
// back at the next assignment, two members splitting the partitions, and a
// commit the coordinator refuses because the member's generation is over.
#include "common/kafka/group_member.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"

namespace tempest::kafka {
namespace {

using std::chrono::seconds;
using testing::DevKafka;

constexpr int kOffsetCommitApiKey = 8;
constexpr int kIllegalGeneration = 22;

std::vector<GroupOffset> One(int partition, int64_t offset, std::string metadata) {
  GroupOffset o;
  o.partition.topic = "events";
  o.partition.partition = partition;
  o.offset = offset;
  o.metadata = std::move(metadata);
  return {o};
}

class GroupMemberTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kafka = DevKafka::Start(1, {{"events", 4}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
  }

  std::unique_ptr<KafkaGroupMember> Join(const std::string& group) {
    GroupMemberOptions options;
    options.bootstrap_servers = kafka_->bootstrap_servers();
    options.group_id = group;
    options.topics = {"events"};
    // A leaving member is noticed at once; a silent one after 6 s.
    options.properties = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "500"}};
    auto member = KafkaGroupMember::Join(options);
    EXPECT_TRUE(member.ok()) << member.status();
    return member.ok() ? std::move(*member) : nullptr;
  }

  // Applies events to `owned` until `done` holds (or 30 s); returns them all.
  static std::vector<GroupEvent> Follow(KafkaGroupMember& m, std::map<TopicPartition, GroupOffset>& owned,
                                        const std::function<bool()>& done) {
    std::vector<GroupEvent> all;
    testing::Eventually(seconds(30), [&] {
      for (GroupEvent& e : m.TakeEvents()) {
        if (e.kind == GroupEvent::Kind::kAssigned) {
          for (const GroupOffset& o : e.offsets) owned[o.partition] = o;
        } else if (e.kind == GroupEvent::Kind::kRevoked) {
          for (const GroupOffset& o : e.offsets) owned.erase(o.partition);
        }
        all.push_back(std::move(e));
      }
      return done();
    });
    return all;
  }

  std::unique_ptr<DevKafka> kafka_;
};

TEST_F(GroupMemberTest, CommitsAreReadBackWithTheirMetadataAtTheNextAssignment) {
  {
    auto member = Join("readers");
    ASSERT_NE(member, nullptr);
    std::map<TopicPartition, GroupOffset> owned;
    Follow(*member, owned, [&] { return owned.size() == 4; });
    ASSERT_EQ(owned.size(), 4u);
    for (const auto& [tp, o] : owned) EXPECT_EQ(o.offset, -1) << "a new group has no commits";

    const uint64_t id = member->Commit(One(2, 17, R"({"topologyId":"t-1"})"));
    bool committed = false;
    testing::Eventually(seconds(30), [&] {
      for (const GroupEvent& e : member->TakeEvents()) {
        EXPECT_NE(e.kind, GroupEvent::Kind::kCommitFailed) << e.status;
        if (e.kind == GroupEvent::Kind::kCommitted && e.commit_id == id) committed = true;
      }
      return committed;
    });
    EXPECT_TRUE(committed);
    member->Leave(seconds(5));
  }
  auto next = Join("readers");
  ASSERT_NE(next, nullptr);
  std::map<TopicPartition, GroupOffset> owned;
  Follow(*next, owned, [&] { return owned.size() == 4; });
  const TopicPartition p0{"events", 0};
  const TopicPartition p2{"events", 2};
  ASSERT_EQ(owned.count(p2), 1u);
  EXPECT_EQ(owned[p2].offset, 17);
  EXPECT_EQ(owned[p2].metadata, R"({"topologyId":"t-1"})");
  EXPECT_EQ(owned[p0].offset, -1);
}

TEST_F(GroupMemberTest, TwoMembersSplitThePartitionsAndOneLeavingHandsItsShareOver) {
  auto a = Join("pair");
  auto b = Join("pair");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::map<TopicPartition, GroupOffset> owned_a;
  std::map<TopicPartition, GroupOffset> owned_b;
  testing::Eventually(seconds(40), [&] {
    Follow(*a, owned_a, [] { return true; });
    Follow(*b, owned_b, [] { return true; });
    return owned_a.size() == 2 && owned_b.size() == 2;
  });
  ASSERT_EQ(owned_a.size(), 2u);
  ASSERT_EQ(owned_b.size(), 2u);
  for (const auto& [tp, o] : owned_a) EXPECT_EQ(owned_b.count(tp), 0u) << "both own " << tp.partition;

  a->Leave(seconds(5));
  Follow(*b, owned_b, [&] { return owned_b.size() == 4; });
  EXPECT_EQ(owned_b.size(), 4u);
}

TEST_F(GroupMemberTest, ACommitRefusedForAnEndedGenerationIsReportedAsFenced) {
  auto member = Join("fenced");
  ASSERT_NE(member, nullptr);
  std::map<TopicPartition, GroupOffset> owned;
  Follow(*member, owned, [&] { return owned.size() == 4; });
  ASSERT_EQ(owned.size(), 4u);
  // The coordinator answers as it does to a member rebalanced out while it
  // was stalled.
  kafka_->PushRequestErrors(kOffsetCommitApiKey, kIllegalGeneration, 1);
  const uint64_t id = member->Commit(One(0, 5, ""));
  absl::Status refused;
  testing::Eventually(seconds(30), [&] {
    for (GroupEvent& e : member->TakeEvents()) {
      if (e.commit_id == id && e.kind == GroupEvent::Kind::kCommitFailed) refused = e.status;
      if (e.commit_id == id && e.kind == GroupEvent::Kind::kCommitted) refused = absl::OkStatus();
    }
    return absl::IsFailedPrecondition(refused);
  });
  EXPECT_TRUE(absl::IsFailedPrecondition(refused)) << refused;
}

}  // namespace
}  // namespace tempest::kafka
