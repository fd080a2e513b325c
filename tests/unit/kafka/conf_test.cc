// The conf builder names the property librdkafka rejected, and the handles
// free what they own.
#include "common/kafka/conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/kafka/producer.h"

namespace tempest::kafka {
namespace {

using testing::HasSubstr;

TEST(BuildConfTest, AcceptsKnownSettings) {
  absl::StatusOr<ConfHandle> conf =
      BuildConf({{"bootstrap.servers", "127.0.0.1:9"}, {"linger.ms", "5"}});
  ASSERT_TRUE(conf.ok()) << conf.status();
  EXPECT_NE(conf->get(), nullptr);
}

TEST(BuildConfTest, UnknownKeyIsInvalidArgumentNamingTheKey) {
  absl::StatusOr<ConfHandle> conf =
      BuildConf({{"linger.ms", "5"}, {"no.such.property", "1"}});
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(conf.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(conf.status().message(), HasSubstr("Kafka property 'no.such.property': "));
  EXPECT_THAT(conf.status().message(), HasSubstr("No such configuration property"));
}

TEST(BuildConfTest, BadValueIsInvalidArgumentNamingTheKey) {
  absl::StatusOr<ConfHandle> conf = BuildConf({{"linger.ms", "soon"}});
  ASSERT_FALSE(conf.ok());
  EXPECT_EQ(conf.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(conf.status().message(), HasSubstr("'linger.ms'"));
  EXPECT_THAT(conf.status().message(), HasSubstr("Invalid value"));
}

TEST(BuildConfTest, CallerChoosesTheMessage) {
  absl::StatusOr<ConfHandle> conf =
      BuildConf({{"acks", "sometimes"}}, "tempest.KafkaBolt property '$0': $1");
  ASSERT_FALSE(conf.ok());
  EXPECT_THAT(conf.status().message(), HasSubstr("tempest.KafkaBolt property 'acks': "));
}

TEST(BuildConfTest, ApplySettingsStopsAtTheFirstRejectedKey) {
  absl::StatusOr<ConfHandle> conf = BuildConf({});
  ASSERT_TRUE(conf.ok());
  absl::Status applied = ApplySettings(**conf, {{"a.bad.key", "1"}, {"linger.ms", "5"}});
  EXPECT_EQ(applied.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(applied.message(), HasSubstr("'a.bad.key'"));
}

TEST(NewClientTest, MakesAProducerWithoutABroker) {
  // librdkafka connects lazily: a client needs no reachable broker.
  absl::StatusOr<ConfHandle> conf = BuildConf({{"bootstrap.servers", "127.0.0.1:9"}});
  ASSERT_TRUE(conf.ok());
  absl::StatusOr<ClientHandle> client = NewClient(ClientType::kProducer, *std::move(conf));
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_NE(client->get(), nullptr);
}

TEST(ProducerTest, UndeliverableRecordIsReportedToTheCallback) {
  absl::StatusOr<ConfHandle> conf = BuildConf({{"bootstrap.servers", "127.0.0.1:9"},
                                               {"message.timeout.ms", "100"},
                                               {"log_level", "0"}});
  ASSERT_TRUE(conf.ok());
  int failed = 0;
  void* seen_opaque = nullptr;
  absl::StatusOr<std::unique_ptr<Producer>> producer =
      Producer::Create(*std::move(conf), [&](const Delivery& d) {
        if (!d.ok) ++failed;
        seen_opaque = d.opaque;
        EXPECT_EQ(d.topic, "t");
        EXPECT_FALSE(d.error.empty());
      });
  ASSERT_TRUE(producer.ok()) << producer.status();
  int tag = 0;
  OutgoingRecord record;
  record.topic = "t";
  record.value = "v";
  record.headers = {{"h", "x"}};
  record.opaque = &tag;
  ASSERT_TRUE((*producer)->Produce(record).ok());
  // Queued records and librdkafka's own events (connection errors) count.
  EXPECT_GE((*producer)->OutstandingRecords(), 1);
  EXPECT_TRUE((*producer)->Flush(std::chrono::seconds(5)));
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(seen_opaque, &tag);
  EXPECT_TRUE((*producer)->FatalError().empty());
}

}  // namespace
}  // namespace tempest::kafka
