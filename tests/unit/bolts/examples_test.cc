// The Flux files in examples/ load with the Flux loader and pass the
// topology validator with the built-in components.
#include <cstdlib>
#include <fstream>
#include <map>

#include "bolts/builtin_bolts.h"
#include "common/core/flux/flux_loader.h"
#include "common/core/topology/topology_validator.h"
#include "gtest/gtest.h"
#include "spout/builtin_spouts.h"
#include "spout/kafka/kafka_spout_config.h"

namespace tempest::bolts {
namespace {

std::string ExamplePath(const std::string& name) {
  const char* root = std::getenv("TEMPEST_SOURCE_DIR");
  return std::string(root != nullptr ? root : TEMPEST_EXAMPLES_SOURCE_DIR) + "/examples/" + name;
}

class ExamplesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterBuiltinBolts(registry_).ok());
    ASSERT_TRUE(spout::RegisterBuiltinSpouts(registry_).ok());
  }
  core::TopologyDef LoadAndValidate(const std::string& name) {
    absl::StatusOr<core::TopologyDef> def = core::FluxLoader().LoadFile(ExamplePath(name));
    EXPECT_TRUE(def.ok()) << def.status();
    if (!def.ok()) return {};
    core::ValidationReport report = core::TopologyValidator(registry_).Check(*def);
    EXPECT_TRUE(report.ok()) << report.ToStatus();
    return *std::move(def);
  }
  api::ComponentRegistry registry_;
};

TEST_F(ExamplesTest, WordCountLoadsAndValidates) {
  core::TopologyDef def = LoadAndValidate("word-count.yaml");
  EXPECT_EQ(def.name, "word-count");
  EXPECT_EQ(def.config.GetInt(api::kTopologyAckerExecutors, 0), 1);
  const core::ComponentDef* count = def.FindComponent(api::ComponentId("count"));
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->args.class_name, "tempest.WordCountBolt");
  // No tick setting: the counter emits on its own timer.
  EXPECT_FALSE(count->config.GetOptionalInt(api::kTopologyTickTupleFreqSecs).has_value());
  bool fields_on_word = false;
  for (const core::StreamDef& s : def.streams) {
    if (s.to.value() == "count") {
      fields_on_word = s.grouping.type == core::GroupingType::kFields &&
                       s.grouping.fields == std::vector<std::string>{"word"};
    }
  }
  EXPECT_TRUE(fields_on_word);
  // The data file the spout reads ships next to the topology.
  EXPECT_TRUE(std::ifstream(ExamplePath("data/sentences.txt")).good());
}

TEST_F(ExamplesTest, GeneratorVerifierLoadsAndValidates) {
  core::TopologyDef def = LoadAndValidate("generator-verifier.yaml");
  EXPECT_EQ(def.config.GetInt(api::kTopologyAckerExecutors, 0), 1);
  EXPECT_GT(def.config.GetInt(api::kTopologyMessageTimeoutSecs, 0), 0);
  const core::ComponentDef* gen = def.FindComponent(api::ComponentId("generator"));
  ASSERT_NE(gen, nullptr);
  EXPECT_EQ(gen->args.IntProperty("count", 0).value_or(0), 100000);
  EXPECT_TRUE(gen->args.BoolProperty("reliable", false).value_or(false));
  const core::ComponentDef* verifier = def.FindComponent(api::ComponentId("verifier"));
  ASSERT_NE(verifier, nullptr);
  EXPECT_EQ(verifier->args.IntProperty("expected", 0).value_or(0), 100000);
  // No tick setting: the verifier flushes from Poll.
  EXPECT_FALSE(verifier->config.GetOptionalInt(api::kTopologyTickTupleFreqSecs).has_value());
  // Every built-in it names constructs from its Flux arguments.
  for (const core::ComponentDef* c : def.AllComponents()) {
    if (c->kind == core::ComponentDef::Kind::kSpout) {
      EXPECT_TRUE(registry_.CreateSpout(c->args).ok()) << c->id;
    } else {
      EXPECT_TRUE(registry_.CreateBolt(c->args).ok()) << c->id;
    }
  }
}

TEST_F(ExamplesTest, KafkaTransformLoadsAndValidatesWithItsEnvironment) {
  const std::map<std::string, std::string> env = {{"ZK", "127.0.0.1:2181"},
                                                  {"BOOTSTRAP", "127.0.0.1:9092"}};
  core::FluxOptions options;
  options.env_filter = true;
  options.env = &env;
  absl::StatusOr<core::TopologyDef> def =
      core::FluxLoader(options).LoadFile(ExamplePath("kafka-transform.yaml"));
  ASSERT_TRUE(def.ok()) << def.status();
  core::ValidationReport report = core::TopologyValidator(registry_).Check(*def);
  EXPECT_TRUE(report.ok()) << report.ToStatus();
  const core::ComponentDef* sink = def->FindComponent(api::ComponentId("words-out"));
  ASSERT_NE(sink, nullptr);
  EXPECT_EQ(sink->args.class_name, "tempest.KafkaBolt");
  EXPECT_EQ(sink->args.StringProperty("bootstrap.servers", "").value_or(""), "127.0.0.1:9092");
  for (const core::ComponentDef* c : def->AllComponents()) {
    if (c->kind == core::ComponentDef::Kind::kSpout) {
      EXPECT_TRUE(registry_.CreateSpout(c->args).ok()) << c->id;
    } else {
      EXPECT_TRUE(registry_.CreateBolt(c->args).ok()) << c->id;
    }
  }
}


TEST_F(ExamplesTest, StormKafkaClientLoadsWithItsEnvironmentAndKeepsOffsetsInTheGroup) {
  const std::map<std::string, std::string> env = {{"BOOTSTRAP", "127.0.0.1:9092"},
                                                  {"OUT", "/tmp/out"}};
  core::FluxOptions options;
  options.env_filter = true;
  options.env = &env;
  absl::StatusOr<core::TopologyDef> def =
      core::FluxLoader(options).LoadFile(ExamplePath("storm-kafka-client.yaml"));
  ASSERT_TRUE(def.ok()) << def.status();
  core::ValidationReport report = core::TopologyValidator(registry_).Check(*def);
  EXPECT_TRUE(report.ok()) << report.ToStatus();
  const core::ComponentDef* spout = def->FindComponent(api::ComponentId("kafka"));
  ASSERT_NE(spout, nullptr);
  absl::StatusOr<spout::KafkaSpoutConfig> config = spout::ParseKafkaSpoutArgs(spout->args);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->group_id, "words-verifier");
  EXPECT_EQ(config->bootstrap_servers, "127.0.0.1:9092");
  EXPECT_EQ(config->OutputFields(),
            (std::vector<std::string>{"topic", "partition", "offset", "key", "value"}));
}

}  // namespace
}  // namespace tempest::bolts
