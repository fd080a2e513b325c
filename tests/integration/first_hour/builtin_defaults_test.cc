// Built-ins with no tuning, the way the user guide shows them: a KafkaSpout
// (offsets in a real ZooKeeper, records from the Kafka-protocol mock
// cluster) -> tempest.IdentityBolt without `fields` -> tempest.VerifierBolt
// without any tick setting. The identity bolt must pass the spout's five
// fields through, and the sink must release its last acks on its own, so the
// spout commits the log end soon after the last record instead of holding it
// until the message timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bolts/builtin_bolts.h"
#include "nlohmann/json.hpp"
#include "spout/kafka/kafka_spout.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/raw_zk_client.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"

namespace tempest {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kPartitions = 2;
constexpr int kPerPartition = 300;
constexpr int kCommitIntervalMs = 2000;

int64_t LineCount(const std::string& path) {
  std::ifstream in(path);
  int64_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(BuiltinDefaultsTest, QuietVerifierWithoutTicksLetsTheSpoutCommitTheLogEnd) {
  auto zk = testing::ZkEnsemble::Start();
  ASSERT_TRUE(zk.ok()) << zk.status();
  auto kafka = testing::DevKafka::Start(1, {{"quiet", kPartitions}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  for (int p = 0; p < kPartitions; ++p) {
    std::vector<testing::DevKafka::Record> records;
    for (int i = 0; i < kPerPartition; ++i) records.push_back({"", absl::StrCat(p * kPerPartition + i)});
    ASSERT_TRUE((*kafka)->Produce("quiet", p, records).ok());
  }
  testing::TempDir dir("builtin-defaults");
  api::ComponentRegistry registry;
  ASSERT_TRUE(spout::RegisterKafkaSpout(registry).ok());
  ASSERT_TRUE(bolts::RegisterBuiltinBolts(registry).ok());

  // No stopAtEnd: the stream simply goes quiet after the last record, as a
  // real topic does. No tick frequency anywhere, no `fields` on the identity.
  worker::testing::TopologyBuilder b("quiet-sink");
  b.SetSpout("kafka", "tempest.KafkaSpout", 1);
  b.SetBolt("identity", "tempest.IdentityBolt", 1).ShuffleGrouping("kafka");
  b.SetBolt("sink", "tempest.VerifierBolt", 1).ShuffleGrouping("identity");
  core::TopologyDef def = b.Build();
  def.spouts[0].args.properties = {{"bootstrap.servers", (*kafka)->bootstrap_servers()},
                                   {"topics", "quiet"},
                                   {"zkRoot", "/quiet"},
                                   {"id", "sink-spout"},
                                   {"zkServers", (*zk)->ConnectString()},
                                   {"stateUpdateIntervalMs", kCommitIntervalMs},
                                   {"startOffsetTime", -2}};
  const std::string log = dir.File("sink.log");
  def.bolts[1].args.properties = {{"field", "value"}, {"logPath", log}};

  worker::LocalClusterOptions options;
  options.registry = &registry;
  auto cluster = worker::LocalCluster::Create(std::move(def), options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->Start().ok());

  // Every record reaches the sink through the identity bolt (pass-through:
  // the sink reads `value`, a field only the spout declares).
  constexpr int64_t kRecords = kPartitions * kPerPartition;
  ASSERT_TRUE(testing::Eventually(seconds(60), [&] { return LineCount(log) >= kRecords; }))
      << LineCount(log) << " of " << kRecords << " records in the sink's log";
  EXPECT_EQ(LineCount(log), kRecords);  // no replays: nothing failed or timed out

  // With its last batch durable the sink acks it by itself; the spout then
  // commits the log end at its next commit, at most 2 intervals from now.
  auto raw = testing::RawZkClient::Connect((*zk)->ConnectString(), 10000, seconds(10));
  ASSERT_NE(raw, nullptr);
  auto committed = [&](int p) -> int64_t {
    auto [rc, data] = raw->Get(absl::StrCat("/quiet/sink-spout/partition_", p));
    if (rc != 0) return -1;
    nlohmann::json doc = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
    return doc.is_object() && doc.contains("offset") && doc["offset"].is_number_integer()
               ? doc["offset"].get<int64_t>()
               : -1;
  };
  const bool at_log_end = testing::Eventually(milliseconds(2 * kCommitIntervalMs), [&] {
    for (int p = 0; p < kPartitions; ++p) {
      if (committed(p) != kPerPartition) return false;
    }
    return true;
  }, milliseconds(50));
  EXPECT_TRUE(at_log_end) << "committed " << committed(0) << ", " << committed(1)
                          << " of log end " << kPerPartition;
  const worker::LocalClusterStats stats = (*cluster)->Stats();
  EXPECT_EQ(stats.failed, 0);
  EXPECT_EQ(stats.pending, 0);
  ASSERT_TRUE((*cluster)->Kill(seconds(5)).ok());
}

}  // namespace
}  // namespace tempest
