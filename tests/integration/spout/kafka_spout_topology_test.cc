// End to end in the execution engine: KafkaSpout (2 tasks, 4 partitions) ->
// IdentityBolt failing 20% of deliveries -> VerifierBolt, in a LocalCluster,
// with offsets in a real ZooKeeper. At-least-once: nothing missing, every
// offset committed, duplicates allowed and printed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "bolts/builtin_bolts.h"
#include "common/coord/zk_session.h"
#include "spout/kafka/kafka_spout.h"
#include "tests/integration/spout/spout_harness.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"

namespace tempest::spout {
namespace {

using std::chrono::seconds;

TEST(KafkaSpoutTopologyTest, AtLeastOnceThroughLocalClusterWithFailingBolt) {
  auto zk = testing::ZkEnsemble::Start();
  ASSERT_TRUE(zk.ok()) << zk.status();
  auto kafka = testing::DevKafka::Start(1, {{"e2e", 4}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  constexpr int kPerPartition = 250;
  for (int p = 0; p < 4; ++p) {
    std::vector<testing::DevKafka::Record> records;
    for (int i = 0; i < kPerPartition; ++i) {
      records.push_back({"", absl::StrCat(p * kPerPartition + i)});
    }
    ASSERT_TRUE((*kafka)->Produce("e2e", p, records).ok());
  }
  testing::TempDir dir("kafka-e2e");
  api::ComponentRegistry registry;
  ASSERT_TRUE(RegisterKafkaSpout(registry).ok());
  ASSERT_TRUE(bolts::RegisterBuiltinBolts(registry).ok());

  worker::testing::TopologyBuilder b("e2e");
  b.SetSpout("kafka", "tempest.KafkaSpout", 2);
  b.SetBolt("flaky", "tempest.IdentityBolt", 2).ShuffleGrouping("kafka");
  b.SetBolt("verify", "tempest.VerifierBolt", 1)
      .ShuffleGrouping("flaky")
      .Config(api::kTopologyTickTupleFreqSecs, 1);
  core::TopologyDef def = b.Build();
  def.spouts[0].args.properties = {{"bootstrap.servers", (*kafka)->bootstrap_servers()},
                                   {"topics", "e2e"},
                                   {"zkRoot", "/e2e"},
                                   {"id", "spout"},
                                   {"zkServers", (*zk)->ConnectString()},
                                   {"stateUpdateIntervalMs", 200},
                                   {"stopAtEnd", true}};
  for (auto& bolt : def.bolts) {
    if (bolt.id.value() == "flaky") {
      bolt.args.properties = {
          {"fields", api::ValueList{"topic", "partition", "offset", "key", "value"}},
          {"failFraction", 0.2},
          {"seed", 7}};
    } else {
      bolt.args.properties = {{"field", "value"},
                              {"logPath", dir.File("log.txt")},
                              {"reportPath", dir.File("report.json")},
                              {"expected", 4 * kPerPartition}};
    }
  }
  worker::LocalClusterOptions options;
  options.registry = &registry;
  auto cluster = worker::LocalCluster::Create(std::move(def), options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->Start().ok());
  ASSERT_TRUE((*cluster)->WaitFinished(std::chrono::seconds(120)));
  const worker::LocalClusterStats stats = (*cluster)->Stats();
  EXPECT_GT(stats.failed, 0);  // the flaky bolt really failed tuples: they were replayed
  std::printf("spout emitted %ld (1000 records), acked %ld, failed %ld\n",
              static_cast<long>(stats.spout_emitted), static_cast<long>(stats.acked),
              static_cast<long>(stats.failed));
  ASSERT_TRUE((*cluster)->Kill(std::chrono::seconds(5)).ok());

  std::ifstream in(dir.File("report.json"));
  std::stringstream report;
  report << in.rdbuf();
  std::printf("verifier report: %s\n", report.str().c_str());
  EXPECT_NE(report.str().find("\"missing\":0"), std::string::npos) << report.str();
  EXPECT_NE(report.str().find("\"unique\":1000"), std::string::npos) << report.str();

  coord::ZkSession::Options zo;
  zo.connect_string = (*zk)->ConnectString();
  zo.create_chroot = false;
  auto client = coord::ZkSession::Create(zo);
  ASSERT_TRUE(client.ok());
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(testing::StoredOffset(**client, OffsetNodePath("/e2e", "spout", "e2e", p, false)),
              kPerPartition);
  }
}

}  // namespace
}  // namespace tempest::spout
