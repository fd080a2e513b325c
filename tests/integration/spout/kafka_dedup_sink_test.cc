// The effectively-once sink in the execution engine. KafkaSpout (2 tasks, 4
// partitions, offsets in a real ZooKeeper) -> IdentityBolt failing 10% of
// deliveries -> three consumers of every record:
//   * `dedup`: VerifierBolt with dedup: true (2 tasks, fields grouping on
//     [topic, partition], one log per task),
//   * `plain`: a plain VerifierBolt, the at-least-once baseline,
//   * `tail`: another IdentityBolt failing 10%, *after* both sinks got the
//     record, so its failures replay records the sinks already applied.
// At-least-once puts duplicates into the plain log; the dedup logs must hold
// every record exactly once, with the dropped replays counted. A second run
// (a new LocalCluster, a fresh spout id that re-reads every partition from
// the start) is a restarted sink: it rebuilds its state from its logs and
// drops all 1000 records again.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bolts/builtin_bolts.h"
#include "bolts/verification_report.h"
#include "spout/kafka/kafka_spout.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"

namespace tempest::spout {
namespace {

constexpr int kPartitions = 4;
constexpr int kPerPartition = 250;
constexpr int kRecords = kPartitions * kPerPartition;

class KafkaDedupSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto zk = testing::ZkEnsemble::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = *std::move(zk);
    auto kafka = testing::DevKafka::Start(1, {{"dedup", kPartitions}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = *std::move(kafka);
    for (int p = 0; p < kPartitions; ++p) {
      std::vector<testing::DevKafka::Record> records;
      for (int i = 0; i < kPerPartition; ++i) {
        records.push_back({"", absl::StrCat(p * kPerPartition + i)});
      }
      ASSERT_TRUE(kafka_->Produce("dedup", p, records).ok());
    }
    ASSERT_TRUE(RegisterKafkaSpout(registry_).ok());
    ASSERT_TRUE(bolts::RegisterBuiltinBolts(registry_).ok());
  }

  // Runs the topology until every record is acked. `spout_id` names the
  // spout's offsets in ZooKeeper (a new id starts at the log start);
  // `plain_log` is the baseline verifier's log for this run.
  void Run(const std::string& spout_id, const std::string& plain_log, uint64_t seed) {
    const api::ValueList fields = {"topic", "partition", "offset", "key", "value"};
    worker::testing::TopologyBuilder b("dedup-e2e");
    b.SetSpout("kafka", "tempest.KafkaSpout", 2);
    b.SetBolt("flaky", "tempest.IdentityBolt", 2).ShuffleGrouping("kafka");
    b.SetBolt("dedup", "tempest.VerifierBolt", 2)
        .FieldsGrouping("flaky", {"topic", "partition"})
        .Config(api::kTopologyTickTupleFreqSecs, 1);
    b.SetBolt("plain", "tempest.VerifierBolt", 1)
        .ShuffleGrouping("flaky")
        .Config(api::kTopologyTickTupleFreqSecs, 1);
    b.SetBolt("tail", "tempest.IdentityBolt", 1).ShuffleGrouping("flaky");
    core::TopologyDef def = b.Build();
    def.spouts[0].args.properties = {{"bootstrap.servers", kafka_->bootstrap_servers()},
                                     {"topics", "dedup"},
                                     {"zkRoot", "/dedup-e2e"},
                                     {"id", spout_id},
                                     {"zkServers", zk_->ConnectString()},
                                     {"stateUpdateIntervalMs", 200},
                                     {"startOffsetTime", -2},
                                     {"stopAtEnd", true}};
    for (auto& bolt : def.bolts) {
      const std::string& id = bolt.id.value();
      if (id == "flaky" || id == "tail") {
        bolt.args.properties = {{"fields", fields},
                                {"failFraction", 0.1},
                                {"seed", static_cast<int64_t>(id == "flaky" ? seed : seed + 1)}};
      } else if (id == "dedup") {
        bolt.args.properties = {
            {"dedup", true}, {"field", "value"}, {"logPath", dir_.File("dedup-{task}.log")}};
      } else {
        bolt.args.properties = {{"field", "value"}, {"logPath", plain_log}};
      }
    }
    worker::LocalClusterOptions options;
    options.registry = &registry_;
    auto cluster = worker::LocalCluster::Create(std::move(def), options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    ASSERT_TRUE((*cluster)->Start().ok());
    ASSERT_TRUE((*cluster)->WaitFinished(std::chrono::seconds(120)));
    const worker::LocalClusterStats stats = (*cluster)->Stats();
    std::printf("[%s] spout emitted %ld, acked %ld, failed %ld\n", spout_id.c_str(),
                static_cast<long>(stats.spout_emitted), static_cast<long>(stats.acked),
                static_cast<long>(stats.failed));
    EXPECT_GT(stats.failed, 0);  // the failing bolts really caused replays
    ASSERT_TRUE((*cluster)->Kill(std::chrono::seconds(5)).ok());
  }

  std::vector<std::string> DedupLogs() const {
    std::vector<std::string> logs;
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      std::string name = entry.path().filename().string();
      if (name.rfind("dedup-", 0) == 0) logs.push_back(entry.path().string());
    }
    return logs;
  }

  static bolts::VerificationReport Verify(const std::vector<std::string>& logs) {
    auto r = bolts::VerifyLogs(logs, kRecords);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    std::printf("%s\n", bolts::ReportToJson(*r).c_str());
    return *r;
  }

  std::unique_ptr<testing::ZkEnsemble> zk_;
  std::unique_ptr<testing::DevKafka> kafka_;
  api::ComponentRegistry registry_;
  testing::TempDir dir_{"kafka-dedup"};
};

TEST_F(KafkaDedupSinkTest, ReplaysReachThePlainSinkButNotTheDedupSink) {
  Run("first", dir_.File("plain-1.log"), 7);
  if (HasFatalFailure()) return;

  bolts::VerificationReport plain = Verify({dir_.File("plain-1.log")});
  EXPECT_EQ(plain.missing, 0);
  EXPECT_GT(plain.duplicated, 0);  // at-least-once: replays reached the sinks

  std::vector<std::string> logs = DedupLogs();
  EXPECT_EQ(logs.size(), 2u);  // one per task
  bolts::VerificationReport first = Verify(logs);
  EXPECT_EQ(first.missing, 0);
  EXPECT_EQ(first.unique, kRecords);
  EXPECT_EQ(first.received, kRecords);
  EXPECT_EQ(first.duplicated, 0);
  EXPECT_EQ(first.malformed, 0);
  EXPECT_GT(first.deduplicated, 0);  // the same replays, dropped
  // Both sinks got the same deliveries (WaitFinished means every queue was
  // drained), so each extra copy at the plain sink is one drop here.
  EXPECT_EQ(first.deduplicated, plain.duplicated);
  EXPECT_TRUE(first.Complete());

  // Restarted sinks on the same logs; every record comes again.
  Run("second", dir_.File("plain-2.log"), 13);
  if (HasFatalFailure()) return;
  bolts::VerificationReport replayed = Verify({dir_.File("plain-2.log")});
  EXPECT_EQ(replayed.missing, 0);  // the plain sink took all of them again
  bolts::VerificationReport second = Verify(DedupLogs());
  EXPECT_EQ(second.received, kRecords);
  EXPECT_EQ(second.duplicated, 0);
  EXPECT_EQ(second.missing, 0);
  EXPECT_EQ(second.malformed, 0);
  EXPECT_GE(second.deduplicated, first.deduplicated + kRecords);
  EXPECT_EQ(second.deduplicated, first.deduplicated + replayed.received);
}

}  // namespace
}  // namespace tempest::spout
