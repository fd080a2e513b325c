// RecordProducer and the broker layout against a real Kafka-protocol
// endpoint (DevKafka over TCP).
#include "common/kafka/record_producer.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/kafka/kafka_broker_registry.h"
#include "common/kafka/kafka_reader.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"

namespace tempest::kafka {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::DevKafka;

class RecordProducerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kafka = DevKafka::Start(1, {{"seq", 2}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
  }
  std::unique_ptr<DevKafka> kafka_;
};

TEST_F(RecordProducerTest, DeliversInOrderPerPartitionAndCountsDeliveries) {
  auto producer = RecordProducer::Create(kafka_->bootstrap_servers());
  ASSERT_TRUE(producer.ok()) << producer.status();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE((*producer)->Send("seq", i % 2, absl::StrCat("k", i), absl::StrCat(i)).ok());
  }
  ASSERT_TRUE((*producer)->Flush(seconds(30)).ok());
  EXPECT_EQ((*producer)->delivered(), 100);
  EXPECT_EQ((*producer)->failed(), 0);
  EXPECT_EQ((*producer)->DeliveredTo("seq", 0), 50);
  EXPECT_EQ((*producer)->DeliveredTo("seq", 1), 50);
  EXPECT_TRUE((*producer)->first_error().empty());

  KafkaReaderOptions options;
  options.bootstrap_servers = kafka_->bootstrap_servers();
  auto reader = KafkaReader::Create(options);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE((*reader)->Start({"seq", 1}, 0).ok());
  std::vector<std::pair<int64_t, std::string>> got;
  testing::Eventually(seconds(30), [&] {
    (*reader)->Poll(1000, milliseconds(100), [&](const KafkaRecord& r) {
      got.emplace_back(r.offset, std::string(r.value));
    });
    return got.size() >= 50;
  }, milliseconds(1));
  ASSERT_EQ(got.size(), 50u);
  for (int n = 0; n < 50; ++n) {
    // The n-th record sent to partition 1 got offset n.
    EXPECT_EQ(got[n].first, n);
    EXPECT_EQ(got[n].second, absl::StrCat(2 * n + 1));
  }
}

TEST_F(RecordProducerTest, EmptyKeyIsSentAsNoKey) {
  auto producer = RecordProducer::Create(kafka_->bootstrap_servers());
  ASSERT_TRUE(producer.ok()) << producer.status();
  ASSERT_TRUE((*producer)->Send("seq", 0, "", "v").ok());
  ASSERT_TRUE((*producer)->Flush(seconds(30)).ok());
  KafkaReaderOptions options;
  options.bootstrap_servers = kafka_->bootstrap_servers();
  auto reader = KafkaReader::Create(options);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE((*reader)->Start({"seq", 0}, 0).ok());
  bool has_key = true;
  int seen = 0;
  testing::Eventually(seconds(30), [&] {
    (*reader)->Poll(10, milliseconds(100), [&](const KafkaRecord& r) {
      has_key = r.has_key;
      ++seen;
    });
    return seen > 0;
  }, milliseconds(1));
  ASSERT_EQ(seen, 1);
  EXPECT_FALSE(has_key);
}

TEST_F(RecordProducerTest, BrokerLayoutNamesMissingTopicsAndListsLeaders) {
  auto missing = ReadBrokerLayout(kafka_->bootstrap_servers(), {"seq", "nope"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "no topic nope");

  auto layout = ReadBrokerLayout(kafka_->bootstrap_servers(), {"seq"});
  ASSERT_TRUE(layout.ok()) << layout.status();
  ASSERT_EQ(layout->brokers.size(), 1u);
  ASSERT_EQ(layout->topics.size(), 1u);
  EXPECT_EQ(layout->topics[0].partitions.size(), 2u);
  const std::vector<RegistryNode> nodes = BrokerRegistryNodes("/brokers", *layout);
  // One broker id, one topic, one state per partition, in creation order.
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0].path, absl::StrCat("/brokers/ids/", layout->brokers[0].id));
  EXPECT_TRUE(nodes[0].ephemeral);
  EXPECT_EQ(nodes[1].path, "/brokers/topics/seq");
  EXPECT_FALSE(nodes[1].ephemeral);
  EXPECT_EQ(nodes[2].path, "/brokers/topics/seq/partitions/0/state");
  EXPECT_EQ(nodes[3].path, "/brokers/topics/seq/partitions/1/state");
}

}  // namespace
}  // namespace tempest::kafka
