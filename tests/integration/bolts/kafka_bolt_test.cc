// KafkaBolt against a real Kafka-protocol endpoint (DevKafka over TCP): what
// it writes is read back with a consumer and checked record by record, also
// while the broker is down or rejects produce requests (nothing lost, the
// spout sees the failures and replays, duplicates are counted).
#include "bolts/kafka_bolt.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bolts/builtin_bolts.h"
#include "common/kafka/kafka_reader.h"
#include "spout/builtin_spouts.h"
#include "tests/support/component_harness.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"

namespace tempest::bolts {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::DevKafka;

struct Message {
  std::string key;
  bool has_key = false;
  std::string value;
  bool has_value = false;
};

// Every message of every partition of `topic`, from the log start to the
// log end as of the call (bounded: 60 s).
std::vector<Message> ReadTopic(const std::string& bootstrap, const std::string& topic) {
  kafka::KafkaReaderOptions options;
  options.bootstrap_servers = bootstrap;
  auto reader = kafka::KafkaReader::Create(options);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return {};
  auto partitions = (*reader)->Partitions({topic}, seconds(10));
  EXPECT_TRUE(partitions.ok()) << partitions.status();
  if (!partitions.ok()) return {};
  int64_t want = 0;
  for (const kafka::TopicPartition& tp : *partitions) {
    auto marks = (*reader)->Watermarks(tp, seconds(10));
    EXPECT_TRUE(marks.ok()) << marks.status();
    if (!marks.ok()) return {};
    want += marks->second - marks->first;
    if (marks->second > marks->first) {
      EXPECT_TRUE((*reader)->Start(tp, marks->first).ok());
    }
  }
  std::vector<Message> got;
  testing::Eventually(
      seconds(60),
      [&] {
        (*reader)->Poll(4096, milliseconds(50), [&](const kafka::KafkaRecord& r) {
          got.push_back({std::string(r.key), r.has_key, std::string(r.value), r.has_value});
        });
        return static_cast<int64_t>(got.size()) >= want;
      },
      milliseconds(1));
  EXPECT_EQ(static_cast<int64_t>(got.size()), want);
  return got;
}

struct SeqCheck {
  int64_t received = 0;
  int64_t unique = 0;
  int64_t missing = 0;
  int64_t duplicated = 0;
  int64_t wrong = 0;  // a key that does not belong to its seq, or not a seq
};

// Checks messages written from SequenceSpout's (seq as value, key as key)
// against 0..count-1.
SeqCheck CheckSeqs(const std::vector<Message>& messages, int64_t count, int64_t keys) {
  SeqCheck c;
  std::map<int64_t, int> copies;
  for (const Message& m : messages) {
    ++c.received;
    char* end = nullptr;
    const int64_t seq = std::strtoll(m.value.c_str(), &end, 10);
    if (!m.has_value || m.value.empty() || *end != '\0' || seq < 0 || seq >= count || !m.has_key ||
        m.key != absl::StrCat("k", seq % keys)) {
      ++c.wrong;
      continue;
    }
    ++copies[seq];
  }
  c.unique = static_cast<int64_t>(copies.size());
  c.missing = count - c.unique;
  c.duplicated = c.received - c.wrong - c.unique;
  return c;
}

void Print(const char* name, const SeqCheck& c, const worker::LocalClusterStats& stats,
           int64_t count) {
  std::printf(
      "%s: topic holds %ld messages: %ld unique seqs of %ld, %ld missing, %ld duplicates, %ld "
      "malformed; spout emitted %ld (%ld replays), acked %ld, failed %ld\n",
      name, static_cast<long>(c.received), static_cast<long>(c.unique), static_cast<long>(count),
      static_cast<long>(c.missing), static_cast<long>(c.duplicated), static_cast<long>(c.wrong),
      static_cast<long>(stats.spout_emitted), static_cast<long>(stats.spout_emitted - count),
      static_cast<long>(stats.acked), static_cast<long>(stats.failed));
}

constexpr int64_t kKeys = 16;

// SequenceSpout(reliable, `count` seqs at `rate`/s) -> KafkaBolt(seq as
// value, key as key) into `topic`.
std::unique_ptr<worker::LocalCluster> StartSeqToKafka(api::ComponentRegistry& registry,
                                                      const std::string& bootstrap,
                                                      const std::string& topic, int64_t count,
                                                      int64_t rate, api::ValueMap extra = {}) {
  worker::testing::TopologyBuilder b("seq-to-kafka");
  b.SetSpout("seq", "tempest.SequenceSpout", 1);
  b.SetBolt("kafka", "tempest.KafkaBolt", 2).ShuffleGrouping("seq");
  b.Config(api::kTopologyMaxSpoutPending, 1000);
  core::TopologyDef def = b.Build();
  def.spouts[0].args.properties = {
      {"count", count}, {"rate", rate}, {"keys", kKeys}, {"payloadBytes", 8}, {"reliable", true}};
  api::ValueMap props = {
      {"bootstrap.servers", bootstrap}, {"topic", topic}, {"field", "seq"}, {"keyField", "key"}};
  for (auto& [k, v] : extra) props[k] = v;
  def.bolts[0].args.properties = std::move(props);
  worker::LocalClusterOptions options;
  options.registry = &registry;
  auto cluster = worker::LocalCluster::Create(std::move(def), options);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return nullptr;
  absl::Status started = (*cluster)->Start();
  EXPECT_TRUE(started.ok()) << started;
  if (!started.ok()) return nullptr;
  return std::move(*cluster);
}

class KafkaBoltTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(spout::RegisterBuiltinSpouts(registry_).ok());
    ASSERT_TRUE(RegisterBuiltinBolts(registry_).ok());
  }
  api::ComponentRegistry registry_;
};

TEST_F(KafkaBoltTest, EverySeqArrivesExactlyAsSent) {
  auto kafka = DevKafka::Start(3, {{"out", 4}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  constexpr int64_t kCount = 20000;
  auto cluster = StartSeqToKafka(registry_, (*kafka)->bootstrap_servers(), "out", kCount, 0);
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(cluster->WaitFinished(seconds(120)));
  const worker::LocalClusterStats stats = cluster->Stats();
  ASSERT_TRUE(cluster->Kill(seconds(10)).ok());

  const SeqCheck c = CheckSeqs(ReadTopic((*kafka)->bootstrap_servers(), "out"), kCount, kKeys);
  Print("healthy run", c, stats, kCount);
  EXPECT_EQ(stats.acked, kCount);
  EXPECT_EQ(stats.failed, 0);
  EXPECT_EQ(c.missing, 0);
  EXPECT_EQ(c.duplicated, 0);
  EXPECT_EQ(c.wrong, 0);
  EXPECT_EQ(c.received, kCount);
}

TEST_F(KafkaBoltTest, BrokerDownMidRunLosesNothing) {
  auto kafka = DevKafka::Start(1, {{"out", 2}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  constexpr int64_t kCount = 10000;
  // A short delivery timeout turns the outage into failed deliveries (and
  // replays) quickly.
  auto cluster = StartSeqToKafka(registry_, (*kafka)->bootstrap_servers(), "out", kCount, 2000,
                                 {{"message.timeout.ms", 1000}});
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(seconds(60), [&] { return cluster->Stats().acked >= 1000; }));
  ASSERT_TRUE((*kafka)->SetBrokerDown(1).ok());
  const bool saw_failures =
      testing::Eventually(seconds(60), [&] { return cluster->Stats().failed > 0; });
  ASSERT_TRUE((*kafka)->SetBrokerUp(1).ok());
  EXPECT_TRUE(saw_failures);
  ASSERT_TRUE(cluster->WaitFinished(seconds(180)));
  const worker::LocalClusterStats stats = cluster->Stats();
  ASSERT_TRUE(cluster->Kill(seconds(10)).ok());

  const SeqCheck c = CheckSeqs(ReadTopic((*kafka)->bootstrap_servers(), "out"), kCount, kKeys);
  Print("broker down", c, stats, kCount);
  EXPECT_EQ(c.missing, 0);
  EXPECT_EQ(c.wrong, 0);
  EXPECT_GT(stats.failed, 0);
  EXPECT_GT(stats.spout_emitted, kCount);  // the failed seqs were replayed
  EXPECT_EQ(stats.acked, kCount);
}

TEST_F(KafkaBoltTest, RejectedProduceRequestsLoseNothing) {
  auto kafka = DevKafka::Start(1, {{"out", 2}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  constexpr int64_t kCount = 10000;
  auto cluster = StartSeqToKafka(registry_, (*kafka)->bootstrap_servers(), "out", kCount, 2000,
                                 {{"message.timeout.ms", 1000}});
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(seconds(60), [&] { return cluster->Stats().acked >= 1000; }));
  constexpr int kProduceApi = 0;
  constexpr int kMessageTooLarge = 10;  // not retriable: the batch fails at once
  (*kafka)->PushRequestErrors(kProduceApi, kMessageTooLarge, 20);
  EXPECT_TRUE(testing::Eventually(seconds(60), [&] { return cluster->Stats().failed > 0; }));
  ASSERT_TRUE(cluster->WaitFinished(seconds(180)));
  const worker::LocalClusterStats stats = cluster->Stats();
  ASSERT_TRUE(cluster->Kill(seconds(10)).ok());

  const SeqCheck c = CheckSeqs(ReadTopic((*kafka)->bootstrap_servers(), "out"), kCount, kKeys);
  Print("produce errors", c, stats, kCount);
  EXPECT_EQ(c.missing, 0);
  EXPECT_EQ(c.wrong, 0);
  EXPECT_GT(stats.failed, 0);
  EXPECT_GT(stats.spout_emitted, kCount);
  EXPECT_EQ(stats.acked, kCount);
}

TEST_F(KafkaBoltTest, FatalProducerErrorIsSurvivedWithoutLoss) {
  auto kafka = DevKafka::Start(1, {{"out", 2}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  constexpr int64_t kCount = 10000;
  auto cluster = StartSeqToKafka(registry_, (*kafka)->bootstrap_servers(), "out", kCount, 2000);
  ASSERT_NE(cluster, nullptr);
  ASSERT_TRUE(testing::Eventually(seconds(60), [&] { return cluster->Stats().acked >= 1000; }));
  constexpr int kProduceApi = 0;
  // The idempotent producer treats a sequence gap as fatal: it must be
  // replaced, and what it held failed and replayed.
  constexpr int kOutOfOrderSequence = 45;
  (*kafka)->PushRequestErrors(kProduceApi, kOutOfOrderSequence, 2);
  EXPECT_TRUE(testing::Eventually(seconds(60), [&] { return cluster->Stats().failed > 0; }));
  ASSERT_TRUE(cluster->WaitFinished(seconds(180)));
  const worker::LocalClusterStats stats = cluster->Stats();
  ASSERT_TRUE(cluster->Kill(seconds(10)).ok());

  const SeqCheck c = CheckSeqs(ReadTopic((*kafka)->bootstrap_servers(), "out"), kCount, kKeys);
  Print("fatal producer error", c, stats, kCount);
  EXPECT_EQ(c.missing, 0);
  EXPECT_EQ(c.wrong, 0);
  EXPECT_GT(stats.failed, 0);
  EXPECT_GT(stats.errors, 0);  // the fatal error was reported
  EXPECT_EQ(stats.acked, kCount);
}

// The bolt alone, with a recording collector: value encodings, and inputs it
// must refuse without crashing.
class KafkaBoltHarnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kafka = DevKafka::Start(1, {{"direct", 1}});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka);
  }

  std::unique_ptr<KafkaBolt> Prepared(api::ValueMap extra = {}) {
    api::ValueMap props = {{"bootstrap.servers", kafka_->bootstrap_servers()}, {"topic", "direct"}};
    for (auto& [k, v] : extra) props[k] = v;
    auto bolt = KafkaBolt::Create(testing::MakeArgs("tempest.KafkaBolt", props));
    EXPECT_TRUE(bolt.ok()) << bolt.status();
    if (!bolt.ok()) return nullptr;
    absl::Status prepared = (*bolt)->Prepare({}, context_, collector_);
    EXPECT_TRUE(prepared.ok()) << prepared;
    return std::move(*bolt);
  }

  bool PollUntilSettled(KafkaBolt& bolt, size_t want) {
    return testing::Eventually(seconds(30), [&] {
      bolt.Poll();
      return collector_.acked.size() + collector_.failed.size() >= want;
    });
  }

  std::unique_ptr<DevKafka> kafka_;
  api::TopologyContext context_ = testing::MakeContext("sink");
  testing::FakeOutputCollector collector_;
};

TEST_F(KafkaBoltHarnessTest, WritesStringsBytesAndNumbersAndAcksOnDelivery) {
  auto bolt = Prepared({{"keyField", "k"}});
  ASSERT_NE(bolt, nullptr);
  const std::vector<std::string> fields = {"k", "value"};
  bolt->Execute(testing::MakeTuple(fields, {"a", "text"}));
  bolt->Execute(testing::MakeTuple(fields, {"b", api::Value::OfBytes(std::string("\0\1", 2))}));
  bolt->Execute(testing::MakeTuple(fields, {"c", int64_t{-42}}));
  bolt->Execute(testing::MakeTuple(fields, {"d", 2.5}));
  bolt->Execute(testing::MakeTuple(fields, {nullptr, "no key"}));
  EXPECT_TRUE(collector_.acked.empty());  // only delivery reports ack
  ASSERT_TRUE(PollUntilSettled(*bolt, 5));
  EXPECT_EQ(collector_.acked.size(), 5u);
  EXPECT_TRUE(collector_.failed.empty());
  EXPECT_EQ(bolt->delivered(), 5);
  bolt->Cleanup();

  std::vector<Message> got = ReadTopic(kafka_->bootstrap_servers(), "direct");
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].key, "a");
  EXPECT_EQ(got[0].value, "text");
  EXPECT_EQ(got[1].value, std::string("\0\1", 2));
  EXPECT_EQ(got[2].value, "-42");
  EXPECT_EQ(got[3].value, "2.5");
  EXPECT_FALSE(got[4].has_key);
  EXPECT_EQ(got[4].value, "no key");
}

TEST_F(KafkaBoltHarnessTest, InputWithoutTheFieldIsFailedWithOneClearError) {
  auto bolt = Prepared();
  ASSERT_NE(bolt, nullptr);
  bolt->Execute(testing::MakeTuple({"word"}, {"hello"}, "splitter"));
  ASSERT_EQ(collector_.failed.size(), 1u);
  ASSERT_EQ(collector_.errors.size(), 1u);
  std::printf("reported: %s\n", collector_.errors[0].c_str());
  EXPECT_NE(collector_.errors[0].find("no field 'value'"), std::string::npos);
  EXPECT_NE(collector_.errors[0].find("splitter"), std::string::npos);
  // A list has no message encoding: failed and reported too.
  bolt->Execute(testing::MakeTuple({"value"}, {api::ValueList{1, 2}}));
  EXPECT_EQ(collector_.failed.size(), 2u);
  EXPECT_EQ(collector_.errors.size(), 2u);
  EXPECT_EQ(bolt->rejected_inputs(), 2);
  // The bolt keeps working afterwards.
  bolt->Execute(testing::MakeTuple({"value"}, {"fine"}));
  ASSERT_TRUE(PollUntilSettled(*bolt, 3));
  EXPECT_EQ(collector_.acked.size(), 1u);
  bolt->Cleanup();
}

TEST_F(KafkaBoltHarnessTest, CleanupFlushesOutstandingDeliveries) {
  auto bolt = Prepared({{"linger.ms", 200}});
  ASSERT_NE(bolt, nullptr);
  for (int i = 0; i < 500; ++i) bolt->Execute(testing::MakeTuple({"value"}, {i}));
  bolt->Cleanup();  // no Poll in between: the flush serves every report
  EXPECT_EQ(collector_.acked.size(), 500u);
  EXPECT_EQ(bolt->in_flight(), 0);
  EXPECT_EQ(ReadTopic(kafka_->bootstrap_servers(), "direct").size(), 500u);
}

TEST(KafkaBoltOptionsTest, RejectsBadConfiguration) {
  auto create = [](api::ValueMap props) {
    return KafkaBolt::Create(testing::MakeArgs("tempest.KafkaBolt", std::move(props)));
  };
  EXPECT_FALSE(create({{"topic", "t"}}).ok());                        // no bootstrap.servers
  EXPECT_FALSE(create({{"bootstrap.servers", "127.0.0.1:1"}}).ok());  // no topic
  auto bad = create({{"bootstrap.servers", "127.0.0.1:1"}, {"topic", "t"}, {"lingr.ms", 5}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("lingr.ms"), absl::string_view::npos) << bad.status();
  EXPECT_FALSE(
      create({{"bootstrap.servers", "127.0.0.1:1"}, {"topic", "t"}, {"enable.idempotence", false}})
          .ok());
  EXPECT_FALSE(create({{"bootstrap.servers", "127.0.0.1:1"}, {"topic", "t"}, {"acks", 1}}).ok());
  auto good = create({{"bootstrap.servers", "127.0.0.1:1"},
                      {"topic", "t"},
                      {"kafka.linger.ms", 20},
                      {"compression.type", "lz4"}});
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ((*good)->options().producer_properties.at("linger.ms"), "20");
  EXPECT_EQ((*good)->options().field, "value");
}

}  // namespace
}  // namespace tempest::bolts
