// Bounds on what enters through Flux files, config files and -c values:
// sizes and names of a topology, integer ranges of config keys, and the
// YAML checks (encoding, unclosed quotes, duplicate keys, depth, aliases).

#include <string>

#include "common/core/config/config_keys.h"
#include "common/core/config/config_loader.h"
#include "common/core/flux/flux_loader.h"
#include "common/core/topology/topology_limits.h"
#include "common/core/topology/topology_validator.h"
#include "common/core/yaml_checks.h"
#include "common/core/yaml_value.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/core/test_components.h"

namespace tempest::core {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// A valid word-count Flux file with `spout_extra` appended to the spout.
std::string Flux(const std::string& spout_extra = "", const std::string& name = "t") {
  return "name: " + name +
         "\n"
         "spouts:\n"
         "  - id: words\n"
         "    className: test.WordSpout\n" +
         spout_extra +
         "bolts:\n"
         "  - id: count\n"
         "    className: test.CountBolt\n"
         "streams:\n"
         "  - from: words\n"
         "    to: count\n"
         "    grouping:\n"
         "      type: FIELDS\n"
         "      args: [word]\n";
}

class InputLimitsTest : public ::testing::Test {
 protected:
  // Loads and validates `text` as f.yaml; "" when it is fine, else the errors.
  std::string Errors(const std::string& text) {
    absl::StatusOr<TopologyDef> def = FluxLoader().LoadString(text, "f.yaml");
    if (!def.ok()) return std::string(def.status().message());
    return std::string(TopologyValidator(*registry_).Check(*def).ToStatus().message());
  }

  std::unique_ptr<api::ComponentRegistry> registry_ = testing::MakeTestRegistry();
};

TEST_F(InputLimitsTest, ValidFileHasNoErrors) { EXPECT_EQ(Errors(Flux()), ""); }

TEST_F(InputLimitsTest, ParallelismAndTasksAreBoundedWithFileAndLine) {
  EXPECT_EQ(Errors(Flux("    parallelism: 1e9\n    numTasks: 8\n")),
            "f.yaml:3: spout 'words': parallelism 1000000000 is above the limit of 1000 "
            "(tempest.limits.max.parallelism)");
  EXPECT_EQ(Errors(Flux("    numTasks: 20000\n")),
            "f.yaml:3: spout 'words': numTasks 20000 is above the limit of 10000 "
            "(tempest.limits.max.tasks)\n"
            "f.yaml: the topology has 20001 tasks; at most 10000 are allowed "
            "(tempest.limits.max.tasks)");
  // Never truncated to an int: 2^32+1 is not 1.
  EXPECT_EQ(Errors(Flux("    parallelism: 4294967297\n")),
            "f.yaml:5: 'parallelism' 4294967297 is out of range (at most 2147483647)");
  // A topology may raise its limits up to the hard ceiling.
  EXPECT_EQ(Errors("config:\n  tempest.limits.max.parallelism: 2000\n"
                   "  tempest.limits.max.executors.per.worker: 2000\n" +
                   Flux("    parallelism: 1500\n")),
            "");
  EXPECT_THAT(Errors("config:\n  tempest.limits.max.parallelism: 99999999\n" + Flux()),
              HasSubstr("config tempest.limits.max.parallelism must be an integer from 1 to "
                        "10000, got 99999999"));
}

TEST_F(InputLimitsTest, WorkersAckersAndComponentCountAreBounded) {
  EXPECT_EQ(Errors("config:\n  topology.workers: 5000\n  topology.acker.executors: 2000\n" +
                   Flux()),
            "f.yaml: config topology.workers is 5000; at most 1000 are allowed "
            "(tempest.limits.max.workers)\n"
            "f.yaml: config topology.acker.executors is 2000; at most 1000 are allowed "
            "(tempest.limits.max.ackers)");
  // 2^31 is out of the int range, not -2147483648.
  EXPECT_THAT(Errors("config:\n  topology.message.timeout.secs: 2147483648\n" + Flux()),
              HasSubstr("config topology.message.timeout.secs must be an integer from 1 to "
                        "2147483647, got 2147483648"));
  TopologyDef def;
  def.name = "many";
  for (int i = 0; i < 1001; ++i) {
    ComponentDef c;
    c.kind = ComponentDef::Kind::kSpout;
    c.id = api::ComponentId("s" + std::to_string(i));
    c.args.class_name = "test.WordSpout";
    def.spouts.push_back(c);
  }
  EXPECT_THAT(TopologyValidator(*registry_).Check(def).errors,
              ::testing::ElementsAre("the topology has 1001 components; at most 1000 are "
                                     "allowed (tempest.limits.max.components)"));
}

TEST_F(InputLimitsTest, ExecutorThreadsPerWorkerAreBounded) {
  // words + count + one acker (topology.workers 1): 3 threads in one worker.
  EXPECT_EQ(Errors("config:\n  tempest.limits.max.executors.per.worker: 2\n" + Flux()),
            "f.yaml: 3 executors over 1 worker make 3 executor threads in one worker; at "
            "most 2 are allowed (tempest.limits.max.executors.per.worker, at most 2000): add "
            "workers or lower parallelism");
  EXPECT_EQ(Errors("config:\n  tempest.limits.max.executors.per.worker: 2\n"
                   "  topology.workers: 2\n" +
                   Flux()),
            "")
      << "4 executors over 2 workers: 2 per worker";
  // A topology cannot raise the limit past its ceiling.
  EXPECT_THAT(Errors("config:\n  tempest.limits.max.executors.per.worker: 5000\n" + Flux()),
              HasSubstr("tempest.limits.max.executors.per.worker must be an integer from 1 to "
                        "2000, got 5000"));
  EXPECT_EQ(ExecutorsPerWorker(10001, 4), 2501);
  EXPECT_EQ(ExecutorsPerWorker(3, 0), 3);
}

TEST_F(InputLimitsTest, NamesAreRestricted) {
  EXPECT_THAT(Errors(Flux("", std::string(20000, 'n'))),
              HasSubstr("topology name 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn... (20000 "
                        "bytes)' is longer than 128 characters"));
  EXPECT_THAT(Errors(Flux("", "\"caf\xc3\xa9\"")),
              HasSubstr("topology name 'caf\\xc3\\xa9' may hold only ASCII letters, digits, "
                        "'-', '_'"));
  EXPECT_THAT(Errors(Flux("", "a.b")), HasSubstr("(not '.')"));
  std::string text = Flux();
  text.replace(text.find("id: words"), 9, "id: \"w/x\"");
  EXPECT_THAT(Errors(text), HasSubstr("f.yaml:3: spout id 'w/x' may hold only ASCII letters, "
                                      "digits, '-', '_' and '.$:' (not '/')"));
  EXPECT_TRUE(CheckComponentOrStreamId("stream id", "out.errors$1:x").ok());
  EXPECT_TRUE(CheckTopologyName("word-count_2").ok());
  EXPECT_FALSE(CheckTopologyName("").ok());
}

TEST_F(InputLimitsTest, YamlDuplicateKeysUnclosedQuotesAndEncodings) {
  EXPECT_EQ(Errors("name: a\nname: b\n"), "f.yaml:2: duplicate key 'name' (first at line 1)");
  EXPECT_EQ(Errors("name: \"t\nspouts:\n  - id: s\n"),
            "f.yaml:1: YAML syntax error: the double-quoted string starting here is never "
            "closed");
  EXPECT_EQ(Errors("name: ok\nx: 'it''s\n"),
            "f.yaml:2: YAML syntax error: the single-quoted string starting here is never "
            "closed");
  EXPECT_EQ(Errors("name: \"\xff\xfe\"\n"), "f.yaml:1: the file is not valid UTF-8 (byte 0xff)");
  EXPECT_EQ(Errors(std::string("\xff\xfen\0a\0", 6)),
            "f.yaml:1: the file is UTF-16 (or another wide encoding); save it as UTF-8");
  EXPECT_EQ(Errors("name: \"\xed\xa0\x80\"\n"), "f.yaml:1: the file is not valid UTF-8 (byte 0xed)");
  EXPECT_EQ(Errors(Flux("    properties:\n      - name: note\n        value: \"caf\xc3\xa9 \xf0\x9f\x99\x82\"\n")),
            "");
}

TEST_F(InputLimitsTest, YamlDepthAndAliasExpansionAreBounded) {
  std::string deep = "x: ";
  for (int i = 0; i < 1000; ++i) deep += "[";
  for (int i = 0; i < 1000; ++i) deep += "]";
  absl::StatusOr<YAML::Node> n = LoadCheckedYaml(deep, "d.yaml");
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(std::string(n.status().message()), StartsWith("d.yaml:1: "));
  // Deeper than yaml-cpp's own guard (its message is just "bad file").
  std::string deeper = "x: " + std::string(50000, '[') + std::string(50000, ']');
  absl::StatusOr<YAML::Node> d = LoadCheckedYaml(deeper, "d.yaml");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(std::string(d.status().message()),
              AllOf(StartsWith("d.yaml:1: "), HasSubstr("nested deeper than 64 levels")));
  // Billion laughs: nine levels of ten aliases each.
  std::string laughs = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    std::string prev(1, c - 1);
    laughs += std::string(1, c) + ": &" + c + " [*" + prev + ",*" + prev + ",*" + prev + ",*" +
              prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + ",*" + prev + "]\n";
  }
  EXPECT_THAT(std::string(LoadCheckedYaml(laughs, "l.yaml").status().message()),
              HasSubstr("the document expands to more than 200000 values"));
  EXPECT_THAT(Errors("config:\n" + laughs.substr(0, 0) + "  x: 1\n" + Flux()), IsEmpty());
  absl::StatusOr<api::Value> v = ParseYamlValue(deep.substr(3));
  EXPECT_FALSE(v.ok());
}

TEST(ConfigRangesTest, IntegersAreRangeChecked) {
  auto parse = [](const std::string& text) {
    absl::StatusOr<LoadedConfig> c = ConfigLoader::Parse(text, "tempest.yaml");
    return c.ok() ? std::string() : std::string(c.status().message());
  };
  EXPECT_EQ(parse("ui.port: abc\n"),
            "tempest.yaml:1: config ui.port must be an integer from 0 to 65535, got \"abc\"");
  EXPECT_EQ(parse("topology.workers: 1\nnimbus.monitor.freq.secs: -5\n"),
            "tempest.yaml:2: config nimbus.monitor.freq.secs must be an integer from 1 to "
            "86400, got -5");
  EXPECT_EQ(parse("storm.zookeeper.session.timeout: 0\n"),
            "tempest.yaml:1: config storm.zookeeper.session.timeout must be an integer from 1 "
            "to 3600000, got 0");
  EXPECT_EQ(parse("supervisor.slots.ports: [6700, 70000]\n"),
            "tempest.yaml:1: config supervisor.slots.ports must be a list of integers from 1 "
            "to 65535, got [6700, 70000]");
  EXPECT_EQ(parse("ui.port: 8080\nui.port: 9090\n"),
            "tempest.yaml:2: duplicate key 'ui.port' (first at line 1)");
  EXPECT_EQ(parse("topology.max.spout.pending: null\nui.port: 0\n"), "");
  api::Config config = ConfigLoader::Defaults();
  absl::StatusOr<std::string> o = ConfigLoader::ApplyOverride(config, "topology.workers=4294967297");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(std::string(o.status().message()), HasSubstr("config override 'topology.workers': config "
                                              "topology.workers must be an integer from 1"));
  EXPECT_EQ(config.GetInt(api::kTopologyWorkers, 0), 1);  // unchanged
  EXPECT_TRUE(CheckConfigValue("some.other.key", api::Value("anything")).ok());
  EXPECT_FALSE(RangeOfKey("ui.host").has_value());
}

}  // namespace
}  // namespace tempest::core
