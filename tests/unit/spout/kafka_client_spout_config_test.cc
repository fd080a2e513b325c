// storm-kafka-client's Flux form (KafkaSpoutConfig$Builder -> KafkaSpoutConfig
// -> org.apache.storm.kafka.spout.KafkaSpout), loaded by the real Flux loader
// and read into KafkaSpoutConfig: storm-kafka-client's documented defaults,
// each builder setting by property and by setter, and one clear error for
// what cannot be honoured.
#include <gtest/gtest.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/core/flux/flux_loader.h"
#include "spout/kafka/kafka_client_spout_config.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/retry_schedule.h"

namespace tempest::spout {
namespace {

// A topology in the shape of Storm's flux-examples, with `builder` spliced
// into the builder component (its properties / configMethods lines).
std::string Flux(const std::string& builder, const std::string& ctor = R"(["clicks"])") {
  return absl::StrCat(R"(name: "clicks"
components:
  - id: "translator"
    className: "com.example.flux.OnlyValueRecordTranslator"
  - id: "builder"
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder"
    constructorArgs:
      - "broker-1:9092,broker-2:9092"
      - )", ctor, "\n", builder, R"(
  - id: "config"
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig"
    constructorArgs:
      - ref: "builder"
spouts:
  - id: "reader"
    className: "org.apache.storm.kafka.spout.KafkaSpout"
    constructorArgs:
      - ref: "config"
bolts:
  - id: "sink"
    className: "org.apache.storm.flux.wrappers.bolts.LogInfoBolt"
streams:
  - from: "reader"
    to: "sink"
    grouping:
      type: SHUFFLE
)");
}

absl::StatusOr<KafkaSpoutConfig> Parse(const std::string& text) {
  absl::StatusOr<core::TopologyDef> def = core::FluxLoader().LoadString(text, "clicks.yaml");
  if (!def.ok()) return def.status();
  return ParseKafkaSpoutArgs(def->spouts.at(0).args);
}

TEST(KafkaClientSpoutConfigTest, DefaultsAreStormKafkaClients) {
  auto c = Parse(Flux(""));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->bootstrap_servers, "broker-1:9092,broker-2:9092");
  EXPECT_EQ(c->topics, std::vector<std::string>{"clicks"});
  EXPECT_TRUE(c->offsets_in_kafka());
  EXPECT_EQ(c->group_id, "reader") << "no group.id: the spout's component id";
  EXPECT_EQ(c->guarantee, ProcessingGuarantee::kAtLeastOnce);
  // UNCOMMITTED_EARLIEST: resume from any commit, else the log start.
  EXPECT_EQ(c->start_offset_time, -2);
  EXPECT_FALSE(c->ignore_zk_offsets);
  EXPECT_EQ(c->state_update_interval_ms, 30'000) << "offsetCommitPeriodMs";
  EXPECT_EQ(c->OutputFields(),
            (std::vector<std::string>{"topic", "partition", "offset", "key", "value"}));
  // KafkaSpoutRetryExponentialBackoff(0 s, 2 ms, Integer.MAX_VALUE, 10 s).
  RetrySchedule retry(c->retry);
  EXPECT_EQ(retry.DelayAfter(1).count(), 0);
  EXPECT_EQ(retry.DelayAfter(2).count(), 4);
  EXPECT_EQ(retry.DelayAfter(3).count(), 8);
  EXPECT_EQ(retry.DelayAfter(40).count(), 10'000);
  EXPECT_LE(c->retry.retry_limit, 0) << "no limit";

  api::Config topology;
  ASSERT_TRUE(ResolveKafkaSpoutConfig(*c, topology).ok()) << "needs no ZooKeeper";
  EXPECT_EQ(c->max_uncommitted_offsets, 10'000'000);
  EXPECT_EQ(c->journal_max_entries, 0);
}

TEST(KafkaClientSpoutConfigTest, BuilderPropertiesAndSettersAreBothRead) {
  auto c = Parse(Flux(R"(    properties:
      - name: "firstPollOffsetStrategy"
        value: LATEST
      - name: "recordTranslator"
        ref: "translator"
    configMethods:
      - name: "setProp"
        args:
          - {"group.id": "clicks-v2", "session.timeout.ms": "6000",
             "key.deserializer": "org.apache.kafka.common.serialization.StringDeserializer",
             "auto.offset.reset": "latest"}
      - name: "setProp"
        args: ["fetch.min.bytes", 1]
      - name: "setProcessingGuarantee"
        args: [AT_MOST_ONCE]
      - name: "setOffsetCommitPeriodMs"
        args: [1000]
      - name: "setMaxUncommittedOffsets"
        args: [5000]
      - name: "setEmitNullTuples"
        args: [true])"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->group_id, "clicks-v2");
  EXPECT_EQ(c->start_offset_time, -1);
  EXPECT_TRUE(c->ignore_zk_offsets) << "LATEST ignores an earlier deployment's commit";
  EXPECT_EQ(c->OutputFields(), std::vector<std::string>{"value"});
  EXPECT_EQ(c->guarantee, ProcessingGuarantee::kAtMostOnce);
  EXPECT_EQ(c->state_update_interval_ms, 1000);
  EXPECT_EQ(c->max_uncommitted_offsets, 5000);
  EXPECT_TRUE(c->emit_null_tuples);
  EXPECT_EQ(c->out_of_range, OutOfRangePolicy::kLatest);
  EXPECT_EQ(c->kafka_properties.at("session.timeout.ms"), "6000");
  EXPECT_EQ(c->kafka_properties.at("fetch.min.bytes"), "1");
  EXPECT_EQ(c->kafka_properties.count("key.deserializer"), 0u) << "Java-only settings stay out";
}

TEST(KafkaClientSpoutConfigTest, RetryServiceAndTopicsInSeveralForms) {
  // The retry components must come before the builder that refers to them.
  std::string text = Flux(R"(    configMethods:
      - name: "setRetry"
        args:
          - ref: "retry")",
                          R"("views"
      - "clicks")");
  const std::string retry = R"(  - id: "first"
    className: "org.apache.storm.kafka.spout.KafkaSpoutRetryExponentialBackoff$TimeInterval"
    constructorArgs: [500, MILLISECONDS]
  - id: "period"
    className: "org.apache.storm.kafka.spout.KafkaSpoutRetryExponentialBackoff$TimeInterval"
    factory: "milliSeconds"
    factoryArgs: [100]
  - id: "cap"
    className: "org.apache.storm.kafka.spout.KafkaSpoutRetryExponentialBackoff$TimeInterval"
    factory: "seconds"
    factoryArgs: [5]
  - id: "retry"
    className: "org.apache.storm.kafka.spout.KafkaSpoutRetryExponentialBackoff"
    constructorArgs:
      - ref: "first"
      - ref: "period"
      - 3
      - ref: "cap"
)";
  text.insert(text.find("  - id: \"builder\""), retry);
  auto c = Parse(text);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->topics, (std::vector<std::string>{"clicks", "views"}));
  RetrySchedule schedule(c->retry);
  EXPECT_EQ(schedule.DelayAfter(1).count(), 500);
  EXPECT_EQ(schedule.DelayAfter(2).count(), 200);
  EXPECT_EQ(schedule.DelayAfter(3).count(), 400);
  EXPECT_EQ(schedule.DelayAfter(9).count(), 5000);
  EXPECT_EQ(c->retry.retry_limit, 4) << "3 retries: the 4th failed delivery is the last";
}

TEST(KafkaClientSpoutConfigTest, WhatCannotBeHonouredIsOneClearError) {
  struct Case {
    std::string builder;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {R"(    configMethods:
      - name: "setProp"
        args: ["enable.auto.commit", "true"])",
       "enable.auto.commit"},
      {R"(    properties:
      - name: "firstPollOffsetStrategy"
        value: TIMESTAMP)",
       "Trident"},
      {R"(    properties:
      - name: "processingGuarantee"
        value: EXACTLY_ONCE)",
       "AT_LEAST_ONCE, AT_MOST_ONCE or NO_GUARANTEE"},
      {R"(    configMethods:
      - name: "setOffsetCommitPeriodMs"
        args: [0])",
       "offsetCommitPeriodMs"},
      {R"(    configMethods:
      - name: "setTopicFilter"
        args: ["x"])",
       "unknown setting"},
  };
  for (const Case& k : cases) {
    auto c = Parse(Flux(k.builder));
    ASSERT_FALSE(c.ok()) << k.builder;
    EXPECT_NE(c.status().message().find(k.expect), std::string::npos) << c.status();
  }
  auto pattern = Parse(Flux("", R"(ref: "translator")"));
  ASSERT_FALSE(pattern.ok());
  EXPECT_NE(pattern.status().message().find("list the topics"), std::string::npos)
      << pattern.status();
  std::string custom = Flux(R"(    properties:
      - name: "recordTranslator"
        ref: "custom")");
  custom.insert(custom.find("  - id: \"builder\""),
                "  - id: \"custom\"\n    className: \"com.example.MyTranslator\"\n");
  auto translator = Parse(custom);
  ASSERT_FALSE(translator.ok());
  EXPECT_NE(translator.status().message().find("runs Java code"), std::string::npos)
      << translator.status();
}

TEST(KafkaClientSpoutConfigTest, MigrationCheckKnowsTheBeans) {
  const std::vector<std::string> beans = KafkaSpoutBeanClasses();
  for (const char* cls : {"org.apache.storm.kafka.spout.KafkaSpoutConfig",
                          "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder",
                          "org.apache.storm.kafka.spout.KafkaSpoutRetryExponentialBackoff",
                          "org.apache.storm.flux.examples.OnlyValueRecordTranslator"}) {
    EXPECT_NE(std::find(beans.begin(), beans.end(), cls), beans.end()) << cls;
  }
}

}  // namespace
}  // namespace tempest::spout
