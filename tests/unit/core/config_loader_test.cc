#include "common/core/config/config_loader.h"

#include <cmath>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "common/core/config/config_keys.h"
#include "common/core/yaml_value.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ConfigLoaderTest, DefaultsMatchStorm) {
  api::Config c = ConfigLoader::Defaults();
  EXPECT_EQ(c.GetInt(api::kTopologyWorkers, 0), 1);
  EXPECT_TRUE(c.Has(api::kTopologyAckerExecutors));
  EXPECT_FALSE(c.GetOptionalInt(api::kTopologyAckerExecutors).has_value());
  EXPECT_EQ(c.GetInt(api::kTopologyMessageTimeoutSecs, 0), 30);
  EXPECT_FALSE(c.GetOptionalInt(api::kTopologyMaxSpoutPending).has_value());
  EXPECT_TRUE(c.GetBool(api::kTopologyEnableMessageTimeouts, false));
  EXPECT_FALSE(c.GetOptionalInt(api::kTopologyTickTupleFreqSecs).has_value());
  EXPECT_FALSE(c.GetBool(api::kTopologyDebug, true));
  EXPECT_EQ(c.GetInt(api::kStormZookeeperPort, 0), 2181);
  EXPECT_EQ(c.GetInt(api::kStormZookeeperSessionTimeout, 0), 20000);
  EXPECT_EQ(c.GetInt(api::kStormZookeeperRetryTimes, 0), 5);
  EXPECT_EQ(c.GetString(api::kStormZookeeperRoot, ""), "/tempest");
}

TEST(ConfigLoaderTest, StormYamlLoadsWithWarningsForUnknownKeys) {
  absl::StatusOr<LoadedConfig> c = ConfigLoader::Parse(
      "storm.zookeeper.servers:\n  - \"zk1\"\n  - \"zk2\"\n"
      "topology.workers: 4\n"
      "nimbus.seeds: [\"n1\"]\n"
      "my.custom.key: yes\n"
      "tempest.log.dir: /var/log/tempest\n",
      "storm.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->config.GetInt(api::kTopologyWorkers, 0), 4);
  EXPECT_EQ(c->config.Get(api::kStormZookeeperServers), api::Value(api::ValueList{"zk1", "zk2"}));
  EXPECT_TRUE(c->config.GetBool("my.custom.key", false));
  EXPECT_EQ(c->config.GetInt(api::kTopologyMessageTimeoutSecs, 0), 30);  // default kept
  EXPECT_THAT(c->warnings, ElementsAre("storm.yaml:6: unknown config key 'my.custom.key'"));
}

TEST(ConfigLoaderTest, SyntaxErrorNamesFileAndLine) {
  absl::StatusOr<LoadedConfig> c =
      ConfigLoader::Parse("topology.workers: 1\nstorm.zookeeper.servers: [a, b\n", "bad.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("bad.yaml:"));
  EXPECT_THAT(c.status().message(), HasSubstr("YAML syntax error"));
  EXPECT_FALSE(ConfigLoader::Parse("- a\n- b\n", "list.yaml").ok());
  EXPECT_TRUE(ConfigLoader::Parse("", "empty.yaml").ok());
  EXPECT_EQ(ConfigLoader::LoadFile("/nonexistent/tempest.yaml").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(ConfigLoaderTest, OverridesParseValuesAsYaml) {
  api::Config c = ConfigLoader::Defaults();
  EXPECT_EQ(*ConfigLoader::ApplyOverride(c, "topology.workers=3"), "");
  EXPECT_EQ(c.Get(api::kTopologyWorkers), api::Value(3));
  ASSERT_TRUE(ConfigLoader::ApplyOverride(c, "topology.max.spout.pending=null").ok());
  EXPECT_TRUE(c.Get(api::kTopologyMaxSpoutPending).is_nil());
  ASSERT_TRUE(ConfigLoader::ApplyOverride(c, "storm.zookeeper.servers=[\"a\", \"b\"]").ok());
  EXPECT_EQ(c.Get(api::kStormZookeeperServers).AsList().size(), 2u);
  ASSERT_TRUE(ConfigLoader::ApplyOverride(c, "topology.debug=true").ok());
  EXPECT_TRUE(c.Get(api::kTopologyDebug).AsBool());
  ASSERT_TRUE(ConfigLoader::ApplyOverride(c, "storm.zookeeper.root=/a=b").ok());
  EXPECT_EQ(c.Get(api::kStormZookeeperRoot).AsString(), "/a=b");
  EXPECT_EQ(*ConfigLoader::ApplyOverride(c, "x.y=1"), "unknown config key 'x.y'");
  EXPECT_FALSE(ConfigLoader::ApplyOverride(c, "no-equals").ok());
  EXPECT_FALSE(ConfigLoader::ApplyOverride(c, "k=[1, 2").ok());
}

TEST(ConfigLoaderTest, SecuritySettingsAreParsedStrictly) {
  // A boolean that is not clearly true or false refuses to load, naming the
  // key and the value, instead of quietly meaning false.
  for (const char* value : {"maybe", "1", "2", "0", "null", "[true]", "\"yes please\""}) {
    const std::string yaml = std::string("ui.port: 0\ntempest.api.auth.reads: ") + value + "\n";
    absl::StatusOr<LoadedConfig> c = ConfigLoader::Parse(yaml, "tempest.yaml");
    ASSERT_FALSE(c.ok()) << value;
    EXPECT_THAT(c.status().message(),
                HasSubstr("tempest.yaml:2: config tempest.api.auth.reads must be true or false"));
    EXPECT_EQ(c.status().message().find('\n'), std::string::npos) << c.status();
  }
  absl::StatusOr<LoadedConfig> maybe =
      ConfigLoader::Parse("tempest.api.auth.reads: maybe\n", "t.yaml");
  EXPECT_THAT(maybe.status().message(), HasSubstr("got \"maybe\""));
  // What YAML calls a boolean, and the quoted words true and false.
  for (const auto& [value, expected] : std::vector<std::pair<std::string, bool>>{
           {"true", true}, {"false", false}, {"yes", true}, {"Off", false}, {"\"TRUE\"", true},
           {"'false'", false}}) {
    absl::StatusOr<LoadedConfig> c =
        ConfigLoader::Parse("tempest.api.auth.reads: " + value + "\n", "t.yaml");
    ASSERT_TRUE(c.ok()) << value << ": " << c.status();
    absl::StatusOr<bool> read = ConfigBool(c->config, "tempest.api.auth.reads", !expected);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, expected) << value;
  }
  api::Config c = ConfigLoader::Defaults();
  EXPECT_FALSE(ConfigLoader::ApplyOverride(c, "tempest.zookeeper.offsets.world.readable=1").ok());
  EXPECT_FALSE(ConfigLoader::ApplyOverride(c, "tempest.api.token.file=[a]").ok());
  EXPECT_FALSE(ConfigLoader::ApplyOverride(c, "nimbus.authorizer={a: b}").ok());
  EXPECT_FALSE(ConfigLoader::ApplyOverride(c, "supervisor.worker.user=[nobody]").ok());
  EXPECT_FALSE(ConfigLoader::ApplyOverride(c, "tempest.api.max.body.bytes=10").ok());
  EXPECT_FALSE(ConfigLoader::ApplyOverride(c, "tempest.api.request.timeout.secs=0").ok());
  EXPECT_TRUE(ConfigLoader::ApplyOverride(c, "tempest.api.max.body.bytes=1048576").ok());
  EXPECT_TRUE(ConfigLoader::ApplyOverride(c, "tempest.api.allowed.hosts=[a.example]").ok());
  EXPECT_TRUE(ConfigLoader::ApplyOverride(c, "tempest.api.token.file=null").ok());
  // The ZooKeeper password is never quoted, not even when it is malformed.
  absl::StatusOr<std::string> secret =
      ConfigLoader::ApplyOverride(c, "storm.zookeeper.auth.payload=[\"user:hunter2\"]");
  ASSERT_FALSE(secret.ok());
  EXPECT_EQ(secret.status().message().find("hunter2"), std::string::npos) << secret.status();
  EXPECT_THAT(secret.status().message(),
              HasSubstr("storm.zookeeper.auth.payload must be a string"));
}

TEST(YamlValueTest, PlainScalarsAreTypedLikeSnakeYaml) {
  EXPECT_TRUE(ResolvePlainScalar("~").is_nil());
  EXPECT_TRUE(ResolvePlainScalar("null").is_nil());
  EXPECT_EQ(ResolvePlainScalar("yes"), api::Value(true));
  EXPECT_EQ(ResolvePlainScalar("OFF"), api::Value(false));
  EXPECT_EQ(ResolvePlainScalar("42"), api::Value(42));
  EXPECT_EQ(ResolvePlainScalar("-1_000"), api::Value(-1000));
  EXPECT_EQ(ResolvePlainScalar("0x1F"), api::Value(31));
  EXPECT_EQ(ResolvePlainScalar("2.5"), api::Value(2.5));
  EXPECT_EQ(ResolvePlainScalar("1e3"), api::Value(1000.0));
  EXPECT_TRUE(std::isinf(ResolvePlainScalar(".inf").AsDouble()));
  EXPECT_EQ(ResolvePlainScalar("localhost:2181"), api::Value("localhost:2181"));
  EXPECT_EQ(ResolvePlainScalar("99999999999999999999"), api::Value("99999999999999999999"));
}

TEST(YamlValueTest, QuotedAndTaggedScalars) {
  absl::StatusOr<api::Value> v =
      ParseYamlValue("{a: \"42\", b: '', c: !!str 7, d: !!float 1, e: [1, 'x'], f: }");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v->Find("a"), api::Value("42"));
  EXPECT_EQ(*v->Find("b"), api::Value(""));
  EXPECT_EQ(*v->Find("c"), api::Value("7"));
  EXPECT_EQ(*v->Find("d"), api::Value(1.0));
  EXPECT_EQ(*v->Find("e"), api::Value(api::ValueList{1, "x"}));
  EXPECT_TRUE(v->Find("f")->is_nil());
  EXPECT_FALSE(ParseYamlValue("!!int abc").ok());
}

// Each key's origin is the last layer that set it: the defaults, the file
// (named by its absolute path), then the command line's overrides in order.
TEST(ConfigLoaderTest, LoadEffectiveRecordsWhereEachValueCameFrom) {
  tempest::testing::TempDir dir;
  const std::string file = dir.File("tempest.yaml");
  std::ofstream(file) << "storm.zookeeper.port: 2182\n"
                         "ui.port: 8090\n"
                         "topology.debug: false\n"
                         "my.custom.key: 7\n";
  absl::StatusOr<EffectiveConfig> c = ConfigLoader::LoadEffective(
      file, {"ui.port=9090", "storm.zookeeper.root=/cli", "ui.port=9191"});
  ASSERT_TRUE(c.ok()) << c.status();
  const std::string from_file = "file:" + file;
  EXPECT_EQ(c->config.GetInt(api::kStormZookeeperPort, 0), 2182);
  EXPECT_EQ(c->origins.at(std::string(api::kStormZookeeperPort)), from_file);
  EXPECT_EQ(c->origins.at("topology.debug"), from_file) << "set in the file, even to the default";
  EXPECT_EQ(c->origins.at("my.custom.key"), from_file);
  EXPECT_EQ(c->config.GetInt("ui.port", 0), 9191) << "the last override wins";
  EXPECT_EQ(c->origins.at("ui.port"), "command line");
  EXPECT_EQ(c->origins.at(std::string(api::kStormZookeeperRoot)), "command line");
  EXPECT_EQ(c->origins.at(std::string(api::kNimbusSeeds)), "default");
  EXPECT_EQ(c->config.GetInt(api::kTopologyWorkers, 0), 1);
  EXPECT_EQ(c->origins.at(std::string(api::kTopologyWorkers)), "default");
  for (const auto& [key, value] : c->config.entries()) EXPECT_TRUE(c->origins.contains(key)) << key;
  EXPECT_THAT(c->warnings, ElementsAre(HasSubstr("unknown config key 'my.custom.key'")));
}

TEST(ConfigLoaderTest, LoadEffectiveMatchesTheLayeredLoad) {
  tempest::testing::TempDir dir;
  const std::string file = dir.File("storm.yaml");
  std::ofstream(file) << "nimbus.seeds: [n1, n2]\nsupervisor.slots.ports: [7000]\n";
  absl::StatusOr<EffectiveConfig> effective =
      ConfigLoader::LoadEffective(file, {"topology.workers=4"});
  ASSERT_TRUE(effective.ok()) << effective.status();
  absl::StatusOr<LoadedConfig> layered = ConfigLoader::LoadFile(file);
  ASSERT_TRUE(layered.ok());
  ASSERT_TRUE(ConfigLoader::ApplyOverride(layered->config, "topology.workers=4").ok());
  EXPECT_EQ(effective->config, layered->config);
}

TEST(ConfigLoaderTest, LoadEffectiveWithoutAFileIsDefaultsAndOverrides) {
  absl::StatusOr<EffectiveConfig> c =
      ConfigLoader::LoadEffective("", {"storm.zookeeper.port=2999"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->origins.at(std::string(api::kStormZookeeperPort)), "command line");
  EXPECT_EQ(c->origins.at(std::string(api::kStormZookeeperServers)), "default");
  EXPECT_TRUE(c->warnings.empty());
}

TEST(ConfigLoaderTest, LoadEffectiveRefusesWhatTheLayeredLoadRefuses) {
  tempest::testing::TempDir dir;
  EXPECT_EQ(ConfigLoader::LoadEffective(dir.File("missing.yaml"), {}).status().code(),
            absl::StatusCode::kNotFound);
  const std::string bad = dir.File("bad.yaml");
  std::ofstream(bad) << "a: [\n";
  absl::StatusOr<EffectiveConfig> c = ConfigLoader::LoadEffective(bad, {});
  EXPECT_THAT(c.status().message(), HasSubstr(bad));
  EXPECT_EQ(ConfigLoader::LoadEffective("", {"no-equals"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tempest::core
