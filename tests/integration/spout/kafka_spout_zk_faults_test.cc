// KafkaSpout through ZooKeeper faults on a 3-member ensemble: a member that
// stops answering in the middle of commits (connection loss, read-back), and
// losing the quorum for longer than several commit intervals.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/coord/zk_session.h"
#include "spout/kafka/kafka_spout.h"
#include "spout/kafka/kafka_spout_config.h"
#include "tests/integration/spout/spout_harness.h"
#include "tests/integration/spout/spout_cluster_fixture.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::spout {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::DevKafka;
using testing::SpoutUnderTest;
using testing::StoredOffset;
using testing::ZkEnsemble;

using testing::NumberedRecords;

class KafkaSpoutZkFaultsTest : public testing::SpoutClusterTest<3> {
 protected:
  std::unique_ptr<coord::ZkSession> Client() { return ConnectClient(seconds(30)); }

  std::unique_ptr<SpoutUnderTest> Spout(const std::string& topic, api::ValueMap extra) {
    api::ComponentArgs args;
    args.class_name = "tempest.KafkaSpout";
    args.id = api::ComponentId("kafka");
    args.properties = {{"bootstrap.servers", kafka_->bootstrap_servers()},
                       {"topics", topic},
                       {"zkRoot", "/" + topic},
                       {"id", "spout"},
                       {"stateUpdateIntervalMs", 200}};
    for (auto& [k, v] : extra) args.properties[k] = v;
    auto config = ParseKafkaSpoutArgs(args);
    EXPECT_TRUE(config.ok()) << config.status();
    api::Config topo;
    // The offsets ZooKeeper comes from the topology config here (fallback).
    topo.Set(api::kStormZookeeperServers, api::ValueList{zk_->ConnectString()});
    topo.Set(api::kStormZookeeperSessionTimeout, 4000);
    topo.Set(api::kStormZookeeperConnectionTimeout, 4000);
    topo.Set(kMaxUncommittedOffsetsKey, 50);
    auto t = std::make_unique<SpoutUnderTest>();
    t->spout = std::make_unique<KafkaSpout>(std::move(*config));
    api::TopologyContext ctx = testing::SpoutContext(topo);
    absl::Status s = t->spout->Open(ctx.config(), ctx, t->collector);
    EXPECT_TRUE(s.ok()) << s;
    return t;
  }

};


TEST_F(KafkaSpoutZkFaultsTest, MemberStallDuringCommitsIsResolvedWithoutLossOrRegression) {
  ASSERT_TRUE(kafka_->CreateTopic("stall", 1).ok());
  auto client = Client();
  const std::string path = OffsetNodePath("/stall", "spout", "stall", 0, false);
  auto t = Spout("stall", {});
  int produced = 0;
  int64_t last = -1;
  bool backwards = false;
  auto produce_some = [&] {
    ASSERT_TRUE(kafka_->Produce("stall", 0, NumberedRecords(produced, produced + 50)).ok());
    produced += 50;
  };
  // Each member in turn stops answering (SIGSTOP) while the spout commits
  // every 200 ms; whichever member the store's session uses, its in-flight
  // multi fails with connection loss / timeout and is resolved by read-back.
  for (int member = 0; member < 3; ++member) {
    produce_some();
    zk_->Pause(member);
    const auto until = std::chrono::steady_clock::now() + milliseconds(3500);
    t->RunUntil(seconds(10), [&] { return std::chrono::steady_clock::now() >= until; });
    zk_->Resume(member);
    ASSERT_TRUE(t->RunUntil(seconds(60),
                            [&] {
                              int64_t now = StoredOffset(*client, path);
                              if (now >= 0 && now < last) backwards = true;
                              last = std::max(last, now);
                              return now == produced;
                            }))
        << "member " << member;
  }
  EXPECT_FALSE(backwards);
  EXPECT_EQ(t->Unique(0).size(), static_cast<size_t>(produced));
  std::printf("member stalls: produced %d, emitted %zu, unique %zu, lost 0, acquisitions %ld\n",
              produced, t->offsets[0].size(), t->Unique(0).size(),
              static_cast<long>(t->spout->Stats()[TopicPartition{"stall", 0}].acquisitions));
}

TEST_F(KafkaSpoutZkFaultsTest, QuorumLossPausesAtUncommittedLimitAndResumes) {
  ASSERT_TRUE(kafka_->CreateTopic("quorum", 1).ok());
  ASSERT_TRUE(kafka_->Produce("quorum", 0, NumberedRecords(0, 100)).ok());
  auto client = Client();
  const std::string path = OffsetNodePath("/quorum", "spout", "quorum", 0, false);
  auto t = Spout("quorum", {});
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return StoredOffset(*client, path) == 100; }));
  client.reset();

  // Two of three members down: no quorum, no commits.
  zk_->Kill(1);
  zk_->Kill(2);
  ASSERT_TRUE(kafka_->Produce("quorum", 0, NumberedRecords(100, 300)).ok());
  bool paused_seen = false;
  int64_t max_emitted_during_outage = -1;
  // Longer than 3 commit intervals (200 ms each), and until the limit hits.
  const auto min_until = std::chrono::steady_clock::now() + milliseconds(1500);
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] {
    paused_seen |= t->spout->Stats()[TopicPartition{"quorum", 0}].paused;
    return paused_seen && std::chrono::steady_clock::now() >= min_until;
  }));
  for (int64_t o : t->offsets[0])
    max_emitted_during_outage = std::max(max_emitted_during_outage, o);
  // Processing went on up to the limit (50 past the last commit), no further.
  EXPECT_GE(max_emitted_during_outage, 140);
  EXPECT_LT(max_emitted_during_outage, 150);

  ASSERT_TRUE(zk_->Relaunch(1).ok());
  ASSERT_TRUE(zk_->Relaunch(2).ok());
  ASSERT_TRUE(zk_->WaitServing(1, seconds(60)).ok());
  ASSERT_TRUE(zk_->WaitServing(2, seconds(60)).ok());
  client = Client();
  ASSERT_TRUE(t->RunUntil(seconds(90), [&] { return StoredOffset(*client, path) == 300; }));
  auto stats = t->spout->Stats()[TopicPartition{"quorum", 0}];
  EXPECT_FALSE(stats.paused);
  EXPECT_EQ(t->Unique(0).size(), 300u);
  std::printf(
      "quorum loss: paused at %ld (limit 50 past 100), resumed; emitted %zu, unique %zu, "
      "duplicates %zu, lost 0, acquisitions %ld\n",
      static_cast<long>(max_emitted_during_outage), t->offsets[0].size(), t->Unique(0).size(),
      t->offsets[0].size() - t->Unique(0).size(), static_cast<long>(stats.acquisitions));
}

}  // namespace
}  // namespace tempest::spout
