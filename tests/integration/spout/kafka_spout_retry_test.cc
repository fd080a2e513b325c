// KafkaSpout retries against a real ZooKeeper and DevKafka (librdkafka's mock
// cluster over TCP): a deterministic poison record under tempest.KafkaSpout's
// defaults is retried with growing delays and reported periodically; with a
// dead-letter topic it lands there (read back from the cluster) and commits
// move past it, through the engine with IdentityBolt `failValues` too; the
// storm-kafka form warns once at open about its immediate retries.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bolts/builtin_bolts.h"
#include "common/coord/zk_session.h"
#include "spdlog/sinks/base_sink.h"
#include "spdlog/spdlog.h"
#include "common/kafka/kafka_reader.h"
#include "spout/kafka/kafka_spout.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/zk_offset_store.h"
#include "tests/integration/spout/spout_harness.h"
#include "tests/integration/spout/spout_cluster_fixture.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/log_capture.h"
#include "tests/support/zk_ensemble.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"

namespace tempest::spout {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;
using testing::DevKafka;
using testing::SpoutUnderTest;
using testing::StoredOffset;
using testing::ZkEnsemble;

constexpr char kPoison[] = "13";

std::vector<DevKafka::Record> Numbered(int n) {
  std::vector<DevKafka::Record> out;
  for (int i = 0; i < n; ++i) out.push_back({absl::StrCat("k", i), absl::StrCat(i)});
  return out;
}

bool IsPoison(const testing::RecordingCollector::Emitted& e) {
  return e.values.size() == 5 && e.values[4].is_string() && e.values[4].AsString() == kPoison;
}

using testing::LogCapture;

class KafkaSpoutRetryTest : public testing::SpoutClusterTest<1> {
 protected:
  void SetUp() override {
    client_ = ConnectClient(seconds(20));
    ASSERT_NE(client_, nullptr);
  }

  // Opens a spout of either form; the retry settings are the form's defaults
  // unless `args` sets them.
  std::unique_ptr<SpoutUnderTest> Open(const api::ComponentArgs& args) {
    auto config = ParseKafkaSpoutArgs(args);
    EXPECT_TRUE(config.ok()) << config.status();
    if (!config.ok()) return nullptr;
    auto t = std::make_unique<SpoutUnderTest>();
    t->spout = std::make_unique<KafkaSpout>(std::move(*config));
    api::TopologyContext ctx = testing::SpoutContext(TopologyConfig());
    absl::Status s = t->spout->Open(ctx.config(), ctx, t->collector);
    EXPECT_TRUE(s.ok()) << s;
    return t;
  }

  // tempest.KafkaSpout with nothing about retries but `extra`.
  std::unique_ptr<SpoutUnderTest> TempestSpout(const std::string& topic, const std::string& root,
                                               api::ValueMap extra = {}) {
    api::ComponentArgs args = KafkaSpoutArgs(topic, root, extra);
    return Open(args);
  }

  std::string OffsetPath(const std::string& root, const std::string& topic) {
    return OffsetNodePath(root, "spout", topic, 0, false);
  }

  // Every value in partition 0 of `topic`, read until `want` arrived (or 20 s).
  std::vector<std::string> ReadTopic(const std::string& topic, size_t want) {
    kafka::KafkaReaderOptions ro;
    ro.bootstrap_servers = kafka_->bootstrap_servers();
    auto reader = kafka::KafkaReader::Create(ro);
    EXPECT_TRUE(reader.ok()) << reader.status();
    std::vector<std::string> values;
    if (!reader.ok() || !(*reader)->Start({topic, 0}, 0).ok()) return values;
    testing::Eventually(seconds(20), [&] {
      (*reader)->Poll(100, milliseconds(50),
                      [&](const kafka::KafkaRecord& r) { values.emplace_back(r.value); });
      return values.size() >= want;
    });
    // A little longer: nothing more may arrive.
    for (int i = 0; i < 10; ++i) {
      (*reader)->Poll(100, milliseconds(50),
                      [&](const kafka::KafkaRecord& r) { values.emplace_back(r.value); });
    }
    return values;
  }

  std::unique_ptr<coord::ZkSession> client_;
};


// The poison record fails on every delivery. Under the defaults (100 ms, x2,
// 10 s max, limit 10, no dead-letter topic) its deliveries in 10 s are a
// handful, each gap at least the scheduled backoff, commits wait at it, and
// the spout reports it periodically.
TEST_F(KafkaSpoutRetryTest, PoisonRecordUnderDefaultsIsRetriedWithGrowingDelays) {
  ASSERT_TRUE(kafka_->CreateTopic("poison", 1).ok());
  ASSERT_TRUE(kafka_->Produce("poison", 0, Numbered(30)).ok());
  LogCapture logs;
  auto t = TempestSpout("poison", "/poison");
  ASSERT_NE(t, nullptr);
  std::vector<steady_clock::time_point> deliveries;
  t->collector.on_emit = [&](const testing::RecordingCollector::Emitted& e) {
    if (IsPoison(e)) deliveries.push_back(steady_clock::now());
  };
  t->decide = [](const auto& e) { return !IsPoison(e); };
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return !deliveries.empty(); }));
  // 10 s from its first delivery (wall time; bounded by the step count too).
  for (int i = 0; i < 10'000'000 && steady_clock::now() < deliveries.front() + seconds(10); ++i) {
    t->Step();
  }
  const size_t in_10s = static_cast<size_t>(
      std::count_if(deliveries.begin(), deliveries.end(),
                    [&](auto at) { return at < deliveries.front() + seconds(10); }));
  std::printf("poison record delivered %zu times in 10 s under the defaults\n", in_10s);
  EXPECT_GE(in_10s, 4u);   // it is retried ...
  EXPECT_LE(in_10s, 24u);  // ... but not in a hot loop (the old default gave millions)
  // The spout never retries early: gap n is at least 100 ms * 2^(n-1).
  for (size_t n = 1; n < deliveries.size() && n < 8; ++n) {
    const auto gap = std::chrono::duration_cast<milliseconds>(deliveries[n] - deliveries[n - 1]);
    EXPECT_GE(gap.count(), (100 << (n - 1)) - 1) << "gap " << n;
  }
  // Everything else is done; the commit waits at the poison record.
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] {
    return StoredOffset(*client_, OffsetPath("/poison", "poison")) == 13;
  }));
  EXPECT_EQ(t->Unique(0).size(), 30u);
  // Reported with its counts, at most once per 10 s.
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] { return t->spout->repeated_failure_reports() >= 1; }));
  EXPECT_GE(logs.Count("worst: poison/0 offset 13 failed"), 1);
  EXPECT_EQ(logs.Count("failed deliveries in the last"), t->spout->repeated_failure_reports());
  t->spout->Close();
}

// A dead-letter topic alone: the default limit (10 deliveries) sends the
// record there and the commit moves past it.
TEST_F(KafkaSpoutRetryTest, DeadLetterTopicAloneUsesTheDefaultRetryLimit) {
  ASSERT_TRUE(kafka_->CreateTopic("dl-default", 1).ok());
  ASSERT_TRUE(kafka_->CreateTopic("dl-default-dead", 1).ok());
  ASSERT_TRUE(kafka_->Produce("dl-default", 0, Numbered(20)).ok());
  auto t = TempestSpout("dl-default", "/dl-default", {{"deadLetterTopic", "dl-default-dead"}});
  ASSERT_NE(t, nullptr);
  t->decide = [](const auto& e) { return !IsPoison(e); };
  // About 33 s of backoff before the tenth failure.
  ASSERT_TRUE(t->RunUntil(seconds(120), [&] {
    return StoredOffset(*client_, OffsetPath("/dl-default", "dl-default")) == 20;
  }));
  EXPECT_EQ((t->spout->Stats()[TopicPartition{"dl-default", 0}].dead_lettered), 1);
  EXPECT_EQ(std::count(t->offsets[0].begin(), t->offsets[0].end(), 13), 10);
  EXPECT_EQ(ReadTopic("dl-default-dead", 1), std::vector<std::string>{kPoison});
  t->spout->Close();
}

// Through the engine: KafkaSpout (default delays, retryLimit 3, a dead-letter
// topic) -> IdentityBolt failing the record whose value is the poison. The
// finite topology finishes, the record is in the dead-letter topic once, and
// the committed offset is the log end.
TEST_F(KafkaSpoutRetryTest, PoisonRecordWithLimitReachesDeadLetterTopicThroughIdentityBolt) {
  ASSERT_TRUE(kafka_->CreateTopic("dl-engine", 1).ok());
  ASSERT_TRUE(kafka_->CreateTopic("dl-engine-dead", 1).ok());
  ASSERT_TRUE(kafka_->Produce("dl-engine", 0, Numbered(50)).ok());
  api::ComponentRegistry registry;
  ASSERT_TRUE(RegisterKafkaSpout(registry).ok());
  ASSERT_TRUE(bolts::RegisterBuiltinBolts(registry).ok());
  worker::testing::TopologyBuilder b("dl-engine");
  b.SetSpout("kafka", "tempest.KafkaSpout", 1);
  b.SetBolt("poisoned", "tempest.IdentityBolt", 1).ShuffleGrouping("kafka");
  core::TopologyDef def = b.Build();
  def.spouts[0].args.properties = {{"bootstrap.servers", kafka_->bootstrap_servers()},
                                   {"topics", "dl-engine"},
                                   {"zkRoot", "/dl-engine"},
                                   {"id", "spout"},
                                   {"zkServers", zk_->ConnectString()},
                                   {"stateUpdateIntervalMs", 200},
                                   {"retryLimit", 3},
                                   {"deadLetterTopic", "dl-engine-dead"},
                                   {"stopAtEnd", true}};
  def.bolts[0].args.properties = {
      {"fields", api::ValueList{"topic", "partition", "offset", "key", "value"}},
      {"failField", "value"},
      {"failValues", api::ValueList{kPoison}}};
  worker::LocalClusterOptions options;
  options.registry = &registry;
  auto cluster = worker::LocalCluster::Create(std::move(def), options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->Start().ok());
  ASSERT_TRUE((*cluster)->WaitFinished(seconds(120)));
  const worker::LocalClusterStats stats = (*cluster)->Stats();
  std::printf("spout emitted %ld (50 records), acked %ld, failed %ld\n",
              static_cast<long>(stats.spout_emitted), static_cast<long>(stats.acked),
              static_cast<long>(stats.failed));
  EXPECT_EQ(stats.failed, 3);         // every one of its retryLimit deliveries failed
  EXPECT_EQ(stats.spout_emitted, 52);  // 50 records + 2 retries of the poison one
  ASSERT_TRUE((*cluster)->Kill(seconds(5)).ok());
  EXPECT_EQ(ReadTopic("dl-engine-dead", 1), std::vector<std::string>{kPoison});
  EXPECT_EQ(StoredOffset(*client_, OffsetPath("/dl-engine", "dl-engine")), 50);
}

// org.apache.storm.kafka.KafkaSpout keeps storm-kafka's immediate retries
// and says so once at open, with how to change it.
TEST_F(KafkaSpoutRetryTest, StormKafkaFormWarnsOnceAtOpenAboutImmediateRetries) {
  ASSERT_TRUE(kafka_->CreateTopic("legacy-retry", 1).ok());
  ASSERT_TRUE(kafka_->Produce("legacy-retry", 0, Numbered(20)).ok());
  auto bean = [](const std::string& id, const std::string& cls, api::ValueList ctor,
                 api::ValueMap props) {
    return api::Value(api::ValueMap{{"id", id},
                                    {"className", cls},
                                    {"constructorArgs", std::move(ctor)},
                                    {"properties", std::move(props)}});
  };
  api::ComponentArgs args;
  args.class_name = "org.apache.storm.kafka.KafkaSpout";
  args.id = api::ComponentId("kafka");
  args.constructor_args = {
      bean("cfg", "org.apache.storm.kafka.SpoutConfig",
           {bean("hosts", "org.apache.storm.kafka.ZkHosts", {zk_->ConnectString()},
                 {{"bootstrap.servers", kafka_->bootstrap_servers()}}),
            "legacy-retry", "/legacy-retry", "spout"},
           {{"zkServers", zk_->ConnectString()}, {"stateUpdateIntervalMs", 200}})};
  LogCapture logs;
  auto t = Open(args);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->spout->config().retry.retry_initial_delay_ms, 0);
  EXPECT_EQ(t->spout->config().retry.retry_limit, -1);
  EXPECT_EQ(logs.Count("retryInitialDelayMs is 0"), 1);
  // Storm's behaviour is kept: a failing record comes straight back.
  int failures = 0;
  t->decide = [&](const auto& e) {
    const bool poison =
        e.values.size() == 1 && e.values[0].is_bytes() && e.values[0].AsBytes() == kPoison;
    failures += poison;
    return !poison;
  };
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return failures >= 50; }));
  EXPECT_EQ(logs.Count("retryInitialDelayMs is 0"), 1);  // once, not per retry
  t->spout->Close();
}

}  // namespace
}  // namespace tempest::spout
