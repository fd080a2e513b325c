#include "spout/kafka/offsets/storm_kafka_offset.h"

#include <gtest/gtest.h>

namespace tempest::spout {
namespace {

TEST(StormKafkaOffsetTest, EncodesWithStormKafkaKeyOrder) {
  StormKafkaOffset s{"wordcount-3-1500000000", "wordcount", 1234, 7, "10.0.0.5", 9092, "events"};
  EXPECT_EQ(EncodeStormKafkaOffset(s),
            R"({"topology":{"id":"wordcount-3-1500000000","name":"wordcount"},"offset":1234,)"
            R"("partition":7,"broker":{"host":"10.0.0.5","port":9092},"topic":"events"})");
}

TEST(StormKafkaOffsetTest, RoundTrips) {
  StormKafkaOffset s{"t-1-2", "t", 99, 3, "h", 1, "topic.a"};
  auto back = DecodeStormKafkaOffset(EncodeStormKafkaOffset(s));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->topology_id, "t-1-2");
  EXPECT_EQ(back->topology_name, "t");
  EXPECT_EQ(back->offset, 99);
  EXPECT_EQ(back->partition, 3);
  EXPECT_EQ(back->broker_host, "h");
  EXPECT_EQ(back->broker_port, 1);
  EXPECT_EQ(back->topic, "topic.a");
}

TEST(StormKafkaOffsetTest, ReadsWhatJsonSimpleWrote) {
  // json-simple (storm-kafka) writes no spaces but a HashMap may reorder keys.
  auto s = DecodeStormKafkaOffset(
      R"({"broker":{"port":6667,"host":"kafka1"},"offset":42,"partition":0,)"
      R"("topic":"clicks","topology":{"name":"legacy","id":"legacy-7-1466000000"}})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->offset, 42);
  EXPECT_EQ(s->topology_id, "legacy-7-1466000000");
  EXPECT_EQ(s->broker_port, 6667);
}

TEST(StormKafkaOffsetTest, OnlyIdAndOffsetAreRequired) {
  auto s = DecodeStormKafkaOffset(R"({"topology":{"id":"x"},"offset":5})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->offset, 5);
  EXPECT_EQ(s->topic, "");
}

TEST(StormKafkaOffsetTest, RejectsBadInputWithOneClearError) {
  struct Case {
    const char* json;
    const char* message_part;
  };
  for (const Case& c : {
           Case{"", "not valid JSON"},
           Case{"{", "not valid JSON"},
           Case{"[1,2]", "not a JSON object"},
           Case{R"({"topology":{"id":"x"}})", "no \"offset\""},
           Case{R"({"topology":{"id":"x"},"offset":"12"})", "not an integer"},
           Case{R"({"topology":{"id":"x"},"offset":1.5})", "not an integer"},
           Case{R"({"topology":{"id":"x"},"offset":-3})", "negative"},
           Case{R"({"topology":{"id":"x"},"offset":18446744073709551615})", "out of range"},
           Case{R"({"offset":1})", "topology"},
           Case{R"({"topology":{"id":7},"offset":1})", "topology.id"},
           Case{"\xff\xfe garbage", "not valid JSON"},
       }) {
    auto s = DecodeStormKafkaOffset(c.json);
    ASSERT_FALSE(s.ok()) << c.json;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find(c.message_part), std::string::npos)
        << c.json << " -> " << s.status();
  }
}

TEST(StormKafkaOffsetTest, PathsFollowStormKafka) {
  EXPECT_EQ(OffsetNodePath("/kafkaspout", "clicks-reader", "clicks", 3, false),
            "/kafkaspout/clicks-reader/partition_3");
  EXPECT_EQ(OffsetNodePath("/kafkaspout/", "r", "clicks", 0, true),
            "/kafkaspout/r/clicks/partition_0");
  EXPECT_EQ(OffsetNodePath("/", "r", "t", 1, false), "/r/partition_1");
  EXPECT_EQ(OwnerNodePath("/kafkaspout", "r", "clicks", 3, false),
            "/kafkaspout/r/@owners/partition_3");
  EXPECT_EQ(OwnerNodePath("/kafkaspout", "r", "clicks", 3, true),
            "/kafkaspout/r/@owners/clicks/partition_3");
}

}  // namespace
}  // namespace tempest::spout
