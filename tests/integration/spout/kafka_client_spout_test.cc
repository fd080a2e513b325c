// storm-kafka-client's spout (org.apache.storm.kafka.spout.KafkaSpout) end to
// end, from a Flux file in the form of Storm's flux-examples kafka_spout.yaml:
// KafkaSpoutConfig$Builder -> KafkaSpoutConfig -> KafkaSpout (2 tasks, 4
// partitions) -> IdentityBolt failing 20% -> VerifierBolt, in a LocalCluster
// with no ZooKeeper at all. The offsets land in the Kafka consumer group,
// where kafka-python's admin client (what lag tools read) sees them, with
// storm-kafka-client's commit metadata; a second deployment resumes there.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "bolts/builtin_bolts.h"
#include "common/core/flux/flux_loader.h"
#include "spout/kafka/kafka_spout.h"
#include "tests/integration/spout/spout_harness.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/temp_dir.h"
#include "worker/local_cluster.h"

namespace tempest::spout {
namespace {

constexpr char kFlux[] = R"(name: "kafka-client-topology"
components:
  - id: "spoutConfigBuilder"
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder"
    constructorArgs:
      - "BOOTSTRAP"
      - ["orders"]
    properties:
      - name: "firstPollOffsetStrategy"
        value: UNCOMMITTED_EARLIEST
    configMethods:
      - name: "setProp"
        args:
          - {
              "key.deserializer" : "org.apache.kafka.common.serialization.StringDeserializer",
              "value.deserializer": "org.apache.kafka.common.serialization.StringDeserializer",
              "group.id": "orders-pipeline"
            }
      - name: "setOffsetCommitPeriodMs"
        args: [200]
  - id: "spoutConfig"
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig"
    constructorArgs:
      - ref: "spoutConfigBuilder"
spouts:
  - id: "kafka-spout"
    className: "org.apache.storm.kafka.spout.KafkaSpout"
    parallelism: 2
    constructorArgs:
      - ref: "spoutConfig"
    properties:
      - name: "stopAtEnd"
        value: true
bolts:
  - id: "flaky"
    className: "tempest.IdentityBolt"
    parallelism: 2
    properties:
      - name: "fields"
        value: ["topic", "partition", "offset", "key", "value"]
      - name: "failFraction"
        value: FAIL
      - name: "seed"
        value: 7
  - id: "verify"
    className: "tempest.VerifierBolt"
    properties:
      - name: "field"
        value: "value"
      - name: "logPath"
        value: "LOG"
      - name: "reportPath"
        value: "REPORT"
      - name: "expected"
        value: EXPECTED
streams:
  - from: "kafka-spout"
    to: "flaky"
    grouping:
      type: SHUFFLE
  - from: "flaky"
    to: "verify"
    grouping:
      type: SHUFFLE
)";

constexpr int kPartitions = 4;

class KafkaClientSpoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kafka = testing::DevKafka::Start(1, {{"orders", kPartitions}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
    ASSERT_TRUE(RegisterKafkaSpout(registry_).ok());
    ASSERT_TRUE(bolts::RegisterBuiltinBolts(registry_).ok());
  }

  void Produce(int from, int per_partition) {
    for (int p = 0; p < kPartitions; ++p) {
      std::vector<testing::DevKafka::Record> records;
      for (int i = 0; i < per_partition; ++i) {
        records.push_back({"", absl::StrCat(from + p * per_partition + i)});
      }
      ASSERT_TRUE(kafka_->Produce("orders", p, records).ok());
    }
  }

  // Runs the Flux topology until its spouts reach the log end and every
  // tuple is done; returns the verifier's report.
  std::string Run(const std::string& name, int expected, double fail_fraction) {
    const std::string text = absl::StrReplaceAll(
        kFlux, {{"BOOTSTRAP", kafka_->bootstrap_servers()},
                {"FAIL", absl::StrCat(fail_fraction)},
                {"LOG", dir_.File("sink.log")},  // both deployments append to it
                {"REPORT", dir_.File(name + ".json")},
                {"EXPECTED", absl::StrCat(expected)}});
    auto def = core::FluxLoader().LoadString(text, name + ".yaml");
    EXPECT_TRUE(def.ok()) << def.status();
    if (!def.ok()) return "";
    worker::LocalClusterOptions options;
    options.registry = &registry_;
    auto cluster = worker::LocalCluster::Create(*std::move(def), options);
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    if (!cluster.ok()) return "";
    EXPECT_TRUE((*cluster)->Start().ok());
    EXPECT_TRUE((*cluster)->WaitFinished(std::chrono::seconds(120)));
    failed_ = (*cluster)->Stats().failed;
    EXPECT_TRUE((*cluster)->Kill(std::chrono::seconds(5)).ok());
    std::ifstream in(dir_.File(name + ".json"));
    std::stringstream report;
    report << in.rdbuf();
    std::printf("%s verifier report: %s\n", name.c_str(), report.str().c_str());
    return report.str();
  }

  // The group's committed offsets as kafka-python's admin client reads
  // them: "partition offset metadata" lines.
  std::string GroupOffsets() {
    auto [rc, out] = testing::RunKazoo(absl::StrCat(R"(
from kafka import KafkaAdminClient, TopicPartition
admin = KafkaAdminClient(bootstrap_servers=")", kafka_->bootstrap_servers(), R"(")
offsets = admin.list_consumer_group_offsets(
    "orders-pipeline", partitions=[TopicPartition("orders", p) for p in range()", kPartitions, R"()])
for tp in sorted(offsets, key=lambda t: t.partition):
    print(tp.partition, offsets[tp].offset, offsets[tp].metadata)
admin.close()
)"));
    EXPECT_EQ(rc, 0) << out;
    return out;
  }

  // One number of the verifier's JSON report.
  static int64_t Field(const std::string& report, const std::string& key) {
    const size_t at = report.find(absl::StrCat("\"", key, "\":"));
    if (at == std::string::npos) return -1;
    return std::strtoll(report.c_str() + at + key.size() + 3, nullptr, 10);
  }

  std::unique_ptr<testing::DevKafka> kafka_;
  api::ComponentRegistry registry_;
  int64_t failed_ = 0;  // tuples the last run failed (and the spout replayed)
  testing::TempDir dir_{"kafka-client"};
};

TEST_F(KafkaClientSpoutTest, AtLeastOnceIntoTheConsumerGroupThenTheNextDeploymentResumes) {
  constexpr int kPerPartition = 250;
  Produce(0, kPerPartition);
  const std::string first = Run("first", kPartitions * kPerPartition, 0.2);
  EXPECT_EQ(Field(first, "missing"), 0) << first;
  EXPECT_EQ(Field(first, "unique"), 1000) << first;
  EXPECT_GT(failed_, 0) << "the flaky bolt failed nothing, so no replay was tested";

  const std::string offsets = GroupOffsets();
  std::printf("consumer group offsets:\n%s", offsets.c_str());
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_NE(offsets.find(absl::StrCat(p, " ", kPerPartition, " {\"taskId\":")),
              std::string::npos)
        << "partition " << p << " should be committed at its log end with storm-kafka-client's "
        << "metadata:\n" << offsets;
  }
  EXPECT_NE(offsets.find("\"topologyId\":\"kafka-client-topology"), std::string::npos) << offsets;

  // UNCOMMITTED_EARLIEST: a new deployment starts at the group's commits, so
  // it reads only what was produced since (the sink log holds both runs).
  Produce(1000, 25);
  const std::string second = Run("second", 1000 + kPartitions * 25, 0.0);
  EXPECT_EQ(Field(second, "missing"), 0) << second;
  EXPECT_EQ(Field(second, "unique"), 1100) << second;
  EXPECT_EQ(Field(second, "received") - Field(first, "received"), 100)
      << "the second deployment re-read committed records: " << second;
  const std::string after = GroupOffsets();
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_NE(after.find(absl::StrCat(p, " ", kPerPartition + 25, " ")), std::string::npos)
        << after;
  }
}

}  // namespace
}  // namespace tempest::spout
