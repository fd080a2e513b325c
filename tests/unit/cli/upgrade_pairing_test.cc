// `tempest upgrade`'s pairing: which spout of NEW takes over each of OLD's,
// what it refuses, and the carry each change of offset location takes (every
// direction, so a rollback is the same command the other way).

#include "cli/upgrade_pairing.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tempest::cli {
namespace {

SpoutSite Zk(const std::string& component, const std::string& root, const std::string& id) {
  SpoutSite s;
  s.component = component;
  s.topics = {"events"};
  s.zk_root = root;
  s.id = id;
  return s;
}

SpoutSite Group(const std::string& component, const std::string& group) {
  SpoutSite s;
  s.component = component;
  s.topics = {"events"};
  s.in_kafka = true;
  s.group = group;
  s.bootstrap = "localhost:9092";
  return s;
}

OffsetCarry CarryOf(const SpoutSite& old_site, const SpoutSite& new_site) {
  absl::StatusOr<std::vector<SpoutPair>> pairs = PairSpouts({old_site}, {new_site});
  EXPECT_TRUE(pairs.ok()) << pairs.status();
  return pairs.ok() ? pairs->front().carry_kind() : OffsetCarry::kNone;
}

TEST(UpgradePairingTest, EveryChangeOfLocationHasACarry) {
  EXPECT_EQ(CarryOf(Zk("kafka", "/ks", "r"), Zk("kafka", "/ks", "r")), OffsetCarry::kNone);
  EXPECT_EQ(CarryOf(Group("kafka", "g"), Group("kafka", "g")), OffsetCarry::kNone);
  EXPECT_EQ(CarryOf(Zk("kafka", "/ks", "r"), Group("kafka", "g")), OffsetCarry::kZkToGroup);
  EXPECT_EQ(CarryOf(Group("kafka", "g"), Zk("kafka", "/ks", "r")), OffsetCarry::kGroupToZk);
  EXPECT_EQ(CarryOf(Zk("kafka", "/ks", "r"), Zk("kafka", "/ks", "r2")), OffsetCarry::kZkToZk);
  EXPECT_EQ(CarryOf(Zk("kafka", "/ks", "r"), Zk("kafka", "/other", "r")), OffsetCarry::kZkToZk);
  EXPECT_EQ(CarryOf(Group("kafka", "g"), Group("kafka", "g2")), OffsetCarry::kGroupToGroup);
}

TEST(UpgradePairingTest, ARollbackIsTheUpgradeTheOtherWay) {
  const SpoutSite storm_kafka = Zk("kafka", "/kafkaspout", "events-reader");
  const SpoutSite client = Group("kafka", "events-upgraded");
  absl::StatusOr<std::vector<SpoutPair>> forth = PairSpouts({storm_kafka}, {client});
  absl::StatusOr<std::vector<SpoutPair>> back = PairSpouts({client}, {storm_kafka});
  ASSERT_TRUE(forth.ok() && back.ok());
  EXPECT_EQ(forth->front().Text(),
            "kafka: offsets carried from ZooKeeper /kafkaspout/events-reader to Kafka consumer "
            "group events-upgraded");
  EXPECT_EQ(back->front().Text(),
            "kafka: offsets carried from Kafka consumer group events-upgraded to ZooKeeper "
            "/kafkaspout/events-reader");
}

TEST(UpgradePairingTest, StayingPutSaysWhere) {
  absl::StatusOr<std::vector<SpoutPair>> pairs = PairSpouts({Group("a", "g")}, {Group("b", "g")});
  ASSERT_TRUE(pairs.ok());
  EXPECT_FALSE(pairs->front().carry());
  EXPECT_EQ(pairs->front().Text(), "a: offsets stay in Kafka consumer group g");
}

TEST(UpgradePairingTest, SeveralSpoutsPairByComponentId) {
  SpoutSite clicks = Zk("clicks", "/ks", "c");
  clicks.topics = {"clicks"};
  SpoutSite new_clicks = Group("clicks", "c");
  new_clicks.topics = {"clicks"};
  absl::StatusOr<std::vector<SpoutPair>> pairs =
      PairSpouts({Zk("views", "/ks", "v"), clicks}, {new_clicks, Zk("views", "/ks", "v")});
  ASSERT_TRUE(pairs.ok()) << pairs.status();
  ASSERT_EQ(pairs->size(), 2u);
  EXPECT_EQ((*pairs)[0].new_site.component, "views");
  EXPECT_EQ((*pairs)[0].carry_kind(), OffsetCarry::kNone);
  EXPECT_EQ((*pairs)[1].carry_kind(), OffsetCarry::kZkToGroup);

  absl::StatusOr<std::vector<SpoutPair>> renamed =
      PairSpouts({Zk("views", "/ks", "v"), clicks}, {new_clicks, Zk("pages", "/ks", "v")});
  EXPECT_TRUE(absl::IsFailedPrecondition(renamed.status()));
  EXPECT_NE(renamed.status().message().find("NEW has no KafkaSpout called views"),
            std::string::npos);
}

TEST(UpgradePairingTest, RefusesWhatIsNoUpgrade) {
  EXPECT_TRUE(absl::IsFailedPrecondition(PairSpouts({}, {Group("a", "g")}).status()));
  absl::StatusOr<std::vector<SpoutPair>> more =
      PairSpouts({Group("a", "g")}, {Group("a", "g"), Group("b", "h")});
  EXPECT_EQ(more.status().message(), "OLD has 1 KafkaSpout, NEW has 2");
  SpoutSite elsewhere = Group("a", "g");
  elsewhere.topics = {"elsewhere"};
  absl::StatusOr<std::vector<SpoutPair>> other = PairSpouts({Group("a", "g")}, {elsewhere});
  EXPECT_TRUE(absl::IsFailedPrecondition(other.status()));
  EXPECT_NE(other.status().message().find("an upgrade keeps the topics"), std::string::npos);
}

TEST(UpgradePairingTest, RefusesANewSpoutThatIgnoresTheCommittedOffsets) {
  SpoutSite earliest = Group("kafka", "events-upgraded");
  earliest.ignores_commits = "firstPollOffsetStrategy EARLIEST";
  absl::StatusOr<std::vector<SpoutPair>> again =
      PairSpouts({Zk("kafka", "/kafkaspout", "events-reader")}, {earliest});
  ASSERT_TRUE(absl::IsFailedPrecondition(again.status()));
  EXPECT_EQ(again.status().message(),
            "NEW's spout kafka has firstPollOffsetStrategy EARLIEST, so it would not start from "
            "OLD's committed offsets but from the start of each partition, reading everything "
            "again; use UNCOMMITTED_EARLIEST");

  // Rolling back onto a storm-kafka spout told to ignore its ZooKeeper offsets
  // from the end would skip records.
  SpoutSite latest = Zk("kafka", "/kafkaspout", "events-reader");
  latest.ignores_commits = "ignoreZkOffsets: true";
  latest.starts_at_latest = true;
  absl::StatusOr<std::vector<SpoutPair>> skip =
      PairSpouts({Group("kafka", "events-upgraded")}, {latest});
  ASSERT_TRUE(absl::IsFailedPrecondition(skip.status()));
  EXPECT_NE(skip.status().message().find("skipping what arrives during the upgrade; use "
                                         "ignoreZkOffsets: false"),
            std::string::npos)
      << skip.status();
}

}  // namespace
}  // namespace tempest::cli
