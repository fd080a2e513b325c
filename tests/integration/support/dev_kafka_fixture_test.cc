// Proves the in-process DevKafka fixture: real librdkafka clients over TCP.
#include "tests/support/dev_kafka.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tempest::testing {
namespace {

std::vector<DevKafka::Record> Numbered(int n) {
  std::vector<DevKafka::Record> records;
  for (int i = 0; i < n; ++i) records.push_back({absl::StrCat("k", i % 7), absl::StrCat(i)});
  return records;
}

// Reads one partition from the beginning with a real consumer until `want`
// records arrived or 30 s passed.
std::vector<std::string> ConsumeAll(const std::string& bootstrap, const std::string& topic,
                                    int partition, size_t want) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof(err));
  rd_kafka_conf_set(conf, "group.id", "fixture-test", err, sizeof(err));
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  EXPECT_NE(rk, nullptr) << err;
  std::vector<std::string> values;
  if (rk == nullptr) return values;
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, topic.c_str(), partition)->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  rd_kafka_assign(rk, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (values.size() < want && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk, 100);
    if (msg == nullptr) continue;
    if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      values.emplace_back(static_cast<const char*>(msg->payload), msg->len);
    }
    rd_kafka_message_destroy(msg);
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return values;
}

TEST(DevKafkaFixtureTest, ProducedRecordsCanBeConsumedBackInOrder) {
  auto kafka = DevKafka::Start(3, {{"events", 4}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  ASSERT_TRUE((*kafka)->Produce("events", 2, Numbered(1000)).ok());
  auto marks = (*kafka)->Watermarks("events", 2);
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_EQ(marks->first, 0);
  EXPECT_EQ(marks->second, 1000);
  auto values = ConsumeAll((*kafka)->bootstrap_servers(), "events", 2, 1000);
  ASSERT_EQ(values.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(values[i], absl::StrCat(i));
}

TEST(DevKafkaFixtureTest, BrokerDownBlocksProduceAndUpRestoresIt) {
  auto kafka = DevKafka::Start(1, {{"solo", 1}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  ASSERT_TRUE((*kafka)->SetBrokerDown(1).ok());
  EXPECT_FALSE((*kafka)->Produce("solo", 0, Numbered(10), std::chrono::seconds(3)).ok());
  ASSERT_TRUE((*kafka)->SetBrokerUp(1).ok());
  ASSERT_TRUE((*kafka)->Produce("solo", 0, Numbered(10)).ok());
  auto marks = (*kafka)->Watermarks("solo", 0);
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_GE(marks->second, 10);
}

TEST(DevKafkaFixtureTest, InjectedProduceErrorsAreRetriedByTheIdempotentProducer) {
  auto kafka = DevKafka::Start(1, {{"flaky", 1}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  // Produce (API key 0) fails twice with NOT_LEADER_FOR_PARTITION (6), a
  // retriable error; the producer retries and nothing is duplicated.
  (*kafka)->PushRequestErrors(0, 6, 2);
  ASSERT_TRUE((*kafka)->Produce("flaky", 0, Numbered(50)).ok());
  auto marks = (*kafka)->Watermarks("flaky", 0);
  ASSERT_TRUE(marks.ok()) << marks.status();
  EXPECT_EQ(marks->second, 50);
}

TEST(DevKafkaFixtureTest, RejectsBadTopicSpecs) {
  EXPECT_FALSE(kafka::ParseDevKafkaTopic("events:0").ok());
  EXPECT_FALSE(kafka::ParseDevKafkaTopic("events:x").ok());
  EXPECT_FALSE(kafka::ParseDevKafkaTopic("bad name:3").ok());
  EXPECT_FALSE(kafka::ParseDevKafkaTopic(":3").ok());
  auto ok = kafka::ParseDevKafkaTopic("events:8");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->name, "events");
  EXPECT_EQ(ok->partitions, 8);
}

}  // namespace
}  // namespace tempest::testing
