#include "common/core/flux/flux_loader.h"

#include <map>
#include <string>

#include "common/core/topology/topology_validator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/core/test_components.h"

namespace tempest::core {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::SizeIs;

const std::string kTestData = TEMPEST_CORE_TESTDATA;

std::string Data(const std::string& name) { return kTestData + "/" + name; }

// How `tempest local` loads the user's own files, includes and all.
const FluxOptions kReadIncludes = [] {
  FluxOptions options;
  options.read_includes = true;
  return options;
}();

class FluxLoaderTest : public ::testing::Test {
 protected:
  // Loads and validates; returns the combined status message ("" if OK).
  std::string LoadAndValidate(const std::string& name, FluxOptions options = {}) {
    absl::StatusOr<TopologyDef> def = FluxLoader(std::move(options)).LoadFile(Data(name));
    if (!def.ok()) return std::string(def.status().message());
    ValidationReport report = TopologyValidator(*registry_).Check(*def);
    return std::string(report.ToStatus().message());
  }

  std::unique_ptr<api::ComponentRegistry> registry_ = testing::MakeTestRegistry();
};

TEST_F(FluxLoaderTest, LoadsWordCount) {
  absl::StatusOr<TopologyDef> def = FluxLoader().LoadFile(Data("wordcount.yaml"));
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->name, "wordcount");
  EXPECT_EQ(def->config.GetInt(api::kTopologyWorkers, 0), 2);
  EXPECT_EQ(def->config.GetInt(api::kTopologyMaxSpoutPending, 0), 1000);
  EXPECT_FALSE(def->config.GetBool(api::kTopologyDebug, true));
  ASSERT_THAT(def->spouts, SizeIs(1));
  ASSERT_THAT(def->bolts, SizeIs(7));
  const ComponentDef& spout = def->spouts[0];
  EXPECT_EQ(spout.id.value(), "sentences");
  EXPECT_EQ(spout.kind, ComponentDef::Kind::kSpout);
  EXPECT_EQ(spout.args.class_name, "test.WordSpout");
  EXPECT_EQ(spout.parallelism, 2);
  EXPECT_EQ(spout.location.line, 10);
  EXPECT_EQ(spout.args.Property("rate")->AsInt(), 100);
  const ComponentDef& split = def->bolts[0];
  EXPECT_EQ(split.parallelism, 3);
  EXPECT_EQ(split.num_tasks, 6);
  EXPECT_EQ(def->bolts[1].config.GetInt(api::kTopologyTickTupleFreqSecs, 0), 5);
  EXPECT_EQ(def->bolts[2].parallelism, 1);  // default
  EXPECT_EQ(def->bolts[2].num_tasks, -1);   // unset

  ASSERT_THAT(def->streams, SizeIs(7));
  EXPECT_EQ(def->streams[0].name, "sentences --> split");
  EXPECT_EQ(def->streams[0].grouping.type, GroupingType::kShuffle);
  EXPECT_EQ(def->streams[0].stream.value(), "default");
  EXPECT_EQ(def->streams[1].grouping.type, GroupingType::kFields);
  EXPECT_EQ(def->streams[1].grouping.fields, std::vector<std::string>{"word"});
  EXPECT_EQ(def->streams[2].grouping.type, GroupingType::kGlobal);
  EXPECT_EQ(def->streams[3].grouping.type, GroupingType::kAll);
  EXPECT_EQ(def->streams[4].grouping.type, GroupingType::kLocalOrShuffle);
  EXPECT_EQ(def->streams[5].grouping.type, GroupingType::kNone);
  EXPECT_EQ(def->streams[5].stream.value(), "errors");
  EXPECT_EQ(def->streams[6].grouping.type, GroupingType::kPartialKey);
  EXPECT_EQ(def->streams[6].location.line, 66);

  ValidationReport report = TopologyValidator(*registry_).Check(*def);
  EXPECT_TRUE(report.ok()) << report.ToStatus();
  EXPECT_EQ(report.streams.at(api::ComponentId("split")).at(api::DefaultStreamId()).fields,
            api::Fields({"word"}));
}

TEST_F(FluxLoaderTest, ResolvesComponentReferences) {
  absl::StatusOr<TopologyDef> def = FluxLoader().LoadFile(Data("kafka_legacy.yaml"));
  ASSERT_TRUE(def.ok()) << def.status();
  const api::ComponentArgs& kafka = def->spouts[0].args;
  ASSERT_THAT(kafka.constructor_args, SizeIs(1));
  const api::Value& spout_config = kafka.constructor_args[0];
  ASSERT_TRUE(spout_config.is_map());
  EXPECT_EQ(spout_config.Find("className")->AsString(), "org.apache.storm.kafka.SpoutConfig");
  EXPECT_EQ(spout_config.Find("id")->AsString(), "spoutConfig");
  const api::ValueList& ctor = spout_config.Find("constructorArgs")->AsList();
  ASSERT_THAT(ctor, SizeIs(4));
  EXPECT_EQ(ctor[0].Find("className")->AsString(), "org.apache.storm.kafka.ZkHosts");
  EXPECT_EQ(ctor[0].Find("constructorArgs")->AsList()[0].AsString(), "localhost:2181");
  EXPECT_EQ(ctor[1].AsString(), "events");
  const api::Value* props = spout_config.Find("properties");
  EXPECT_TRUE(props->Find("ignoreZkOffsets")->AsBool());
  // A ref inside a ref'd bean is resolved too.
  const api::Value* scheme = props->Find("scheme");
  EXPECT_EQ(scheme->Find("className")->AsString(), "org.apache.storm.spout.SchemeAsMultiScheme");
  EXPECT_EQ(scheme->Find("constructorArgs")->AsList()[0].Find("className")->AsString(),
            "org.apache.storm.kafka.StringScheme");
  const api::ValueList& methods = spout_config.Find("configMethods")->AsList();
  ASSERT_THAT(methods, SizeIs(1));
  EXPECT_EQ(methods[0].Find("name")->AsString(), "setRetryLimit");
  EXPECT_EQ(methods[0].Find("args")->AsList()[0].AsInt(), 5);
  // reflist -> a list of beans; {name, ref} properties on a bolt.
  const api::Value* schemes = def->bolts[0].args.Property("schemes");
  ASSERT_NE(schemes, nullptr);
  const api::ValueList& both = schemes->Find("constructorArgs")->AsList()[0].AsList();
  ASSERT_THAT(both, SizeIs(2));
  EXPECT_EQ(both[1].Find("id")->AsString(), "multiScheme");

  EXPECT_TRUE(TopologyValidator(*registry_).Check(*def).ok());
}

TEST_F(FluxLoaderTest, IncludeWithoutOverrideKeepsOwnDefinitions) {
  absl::StatusOr<TopologyDef> def = FluxLoader(kReadIncludes).LoadFile(Data("with_include.yaml"));
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->name, "included-topology");
  EXPECT_EQ(def->config.GetInt(api::kTopologyWorkers, 0), 1);              // own value wins
  EXPECT_EQ(def->config.GetInt(api::kTopologyMessageTimeoutSecs, 0), 60);  // from include
  ASSERT_THAT(def->spouts, SizeIs(1));
  EXPECT_EQ(def->spouts[0].parallelism, 1);
  // The including file's component may reference the included one.
  const api::Value* bean = def->bolts[0].args.Property("bean");
  ASSERT_NE(bean, nullptr);
  EXPECT_EQ(bean->Find("constructorArgs")->AsList()[0].Find("id")->AsString(), "shared");
  // Nested includes are ignored with a warning.
  EXPECT_THAT(def->warnings, ::testing::Contains(HasSubstr("includes are not recursive")));
  EXPECT_THAT(def->warnings, ::testing::Contains(HasSubstr("shadowed by the including file")));
}

TEST_F(FluxLoaderTest, IncludeWithOverrideReplacesDefinitions) {
  absl::StatusOr<TopologyDef> def =
      FluxLoader(kReadIncludes).LoadFile(Data("with_override_include.yaml"));
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->name, "override-topology");
  EXPECT_EQ(def->config.GetInt(api::kTopologyWorkers, 0), 4);
  EXPECT_TRUE(def->config.GetBool(api::kTopologyDebug, false));
  ASSERT_THAT(def->spouts, SizeIs(1));
  EXPECT_EQ(def->spouts[0].parallelism, 3);
  EXPECT_THAT(def->spouts[0].location.file, HasSubstr("common_include.yaml"));
}

TEST_F(FluxLoaderTest, SubstitutesPropertiesAndEnvironment) {
  std::map<std::string, std::string> env{{"TEMPEST_TEST_HOME", "/home/storm"}};
  FluxOptions options;
  options.filter_file = Data("filter.properties");
  options.env_filter = true;
  options.env = &env;
  absl::StatusOr<TopologyDef> def = FluxLoader(options).LoadFile(Data("filtered.yaml"));
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->name, "filtered-topology");
  EXPECT_EQ(def->config.Get(api::kTopologyWorkers), api::Value(3));  // typed after substitution
  EXPECT_EQ(def->spouts[0].args.Property("home")->AsString(), "/home/storm");
}

TEST_F(FluxLoaderTest, ApplyFiltersReturnsTheTextLoadStringWouldParse) {
  std::map<std::string, std::string> env{{"TEMPEST_TEST_HOME", "/home/storm"}};
  FluxOptions options;
  options.filter_file = Data("filter.properties");
  options.env_filter = true;
  options.env = &env;
  const std::string text = "name: ${topology.name}\nhome: ${ENV-TEMPEST_TEST_HOME}\n";
  absl::StatusOr<std::string> out = FluxLoader(options).ApplyFilters(text, "t.yaml");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "name: filtered-topology\nhome: /home/storm\n");
  // An unresolved placeholder is an error naming file:line.
  env.clear();
  absl::StatusOr<std::string> missing = FluxLoader(options).ApplyFilters(text, "t.yaml");
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("t.yaml:2"));
  EXPECT_THAT(missing.status().message(), HasSubstr("TEMPEST_TEST_HOME"));
}

TEST_F(FluxLoaderTest, WithoutFiltersPlaceholdersStayLiteral) {
  absl::StatusOr<TopologyDef> def = FluxLoader().LoadFile(Data("filtered.yaml"));
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->name, "${topology.name}");
}

TEST_F(FluxLoaderTest, DirectAndCustomGroupings) {
  absl::StatusOr<TopologyDef> def = FluxLoader().LoadFile(Data("direct_custom.yaml"));
  ASSERT_TRUE(def.ok()) << def.status();
  EXPECT_EQ(def->streams[0].grouping.type, GroupingType::kDirect);
  EXPECT_EQ(def->streams[0].stream.value(), "direct");
  EXPECT_EQ(def->streams[1].grouping.type, GroupingType::kCustom);
  EXPECT_EQ(def->streams[1].grouping.custom.class_name, "test.EvenGrouping");
  EXPECT_EQ(def->streams[1].grouping.custom.constructor_args[0].AsInt(), 2);
  // Storm's PartialKeyGrouping class becomes the native partial-key grouping.
  EXPECT_EQ(def->streams[2].grouping.type, GroupingType::kPartialKey);
  EXPECT_EQ(def->streams[2].grouping.fields, std::vector<std::string>{"word"});
  ValidationReport report = TopologyValidator(*registry_).Check(*def);
  EXPECT_TRUE(report.ok()) << report.ToStatus();
}

TEST(FluxPropertiesTest, ParsesJavaPropertiesSyntax) {
  auto p = FluxLoader::ParseProperties(
      "# c\n! c\na=1\nb : two words\nc   spaced\nlong = x \\\n   y\n\nempty=\n");
  EXPECT_EQ(p["a"], "1");
  EXPECT_EQ(p["b"], "two words");
  EXPECT_EQ(p["c"], "spaced");
  EXPECT_EQ(p["long"], "x y");
  EXPECT_EQ(p["empty"], "");
  EXPECT_EQ(p.size(), 5u);
}

// Each malformed file yields its message at file:line.
struct BadCase {
  std::string file;
  std::string expected;  // "<file>:<line>: <message>" (substring)
};

class FluxLoaderBadFileTest : public FluxLoaderTest,
                              public ::testing::WithParamInterface<BadCase> {};

TEST_P(FluxLoaderBadFileTest, ReportsErrorWithFileAndLine) {
  const BadCase& c = GetParam();
  FluxOptions options = kReadIncludes;
  if (c.file == "unresolved_key.yaml") options.filter_file = Data("filter.properties");
  std::string message = LoadAndValidate("bad/" + c.file, options);
  EXPECT_THAT(message, HasSubstr(c.expected)) << "file: " << c.file;
}

INSTANTIATE_TEST_SUITE_P(
    MalformedFiles, FluxLoaderBadFileTest,
    ::testing::Values(
        BadCase{"bad_syntax.yaml", "bad_syntax.yaml:13: YAML syntax error: "},
        BadCase{"unknown_class.yaml",
                "unknown_class.yaml:6: unknown bolt class 'tempest.NoSuchBolt' for 'b'"},
        BadCase{"undeclared_stream.yaml",
                "undeclared_stream.yaml:9: component 's' does not declare stream 'nope' "
                "(declared: default, direct, errors)"},
        BadCase{"unknown_field.yaml",
                "unknown_field.yaml:9: FIELDS grouping field 'wrod' is not in stream 'default' "
                "of 's' [word, n]"},
        BadCase{"bad_parallelism.yaml",
                "bad_parallelism.yaml:3: spout 's': parallelism must be >= 1, got 0"},
        BadCase{"parallelism_not_int.yaml",
                "parallelism_not_int.yaml:5: 'parallelism' must be an integer, got 'two'"},
        BadCase{"unknown_ref.yaml",
                "unknown_ref.yaml:9: unknown ref 'confg' (no component with that id)"},
        BadCase{"ref_before_declaration.yaml",
                "ref_before_declaration.yaml:6: ref 'inner' is used before its declaration at "},
        BadCase{"missing_from.yaml", "missing_from.yaml:9: stream is missing 'from'"},
        BadCase{"bad_grouping_type.yaml",
                "bad_grouping_type.yaml:12: unknown grouping type 'SHUFLE'"},
        BadCase{"fields_without_args.yaml",
                "fields_without_args.yaml:12: FIELDS grouping needs args (the field names)"},
        BadCase{"duplicate_id.yaml", "duplicate_id.yaml:8: duplicate id 'b' (first declared at "},
        BadCase{"missing_include.yaml",
                "missing_include.yaml:3: include file 'no_such_file.yaml' not found"},
        BadCase{"unresolved_key.yaml",
                "unresolved_key.yaml:7: unresolved ${kafka.topic} (no such key in the --filter "
                "properties file)"},
        BadCase{"direct_on_regular_stream.yaml",
                "direct_on_regular_stream.yaml:9: DIRECT grouping on stream 'default' of 's', "
                "which is not declared direct"},
        BadCase{"unknown_top_level_key.yaml",
                "unknown_top_level_key.yaml:5: unknown top-level key 'bolt'"},
        BadCase{"not_a_map.yaml", "not_a_map.yaml:1: a Flux file must be a map"}),
    [](const ::testing::TestParamInfo<BadCase>& info) {
      std::string name = info.param.file.substr(0, info.param.file.find('.'));
      return name;
    });

TEST_F(FluxLoaderTest, ReportsEveryProblemAtOnce) {
  std::string message = LoadAndValidate("bad/many_problems.yaml");
  EXPECT_THAT(message,
              AllOf(HasSubstr("many_problems.yaml: topology has no name"),
                    HasSubstr("many_problems.yaml:2: spout 's': parallelism must be >= 1, got -1"),
                    HasSubstr("many_problems.yaml:6: unknown bolt class 'test.Missing' for 'b'"),
                    HasSubstr("many_problems.yaml:8: bolt 'c': numTasks must be >= 1, got 0"),
                    HasSubstr("many_problems.yaml:12: stream to unknown component 'ghost'"),
                    HasSubstr("many_problems.yaml:16: FIELDS grouping field 'nope'"),
                    HasSubstr("many_problems.yaml:21: stream 'direct' of 's' is direct; "
                              "its consumers must use DIRECT grouping, not SHUFFLE")));
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 6);
}

TEST_F(FluxLoaderTest, MissingFileAndFilter) {
  absl::StatusOr<TopologyDef> def = FluxLoader().LoadFile(Data("nope.yaml"));
  EXPECT_EQ(def.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(def.status().message(), HasSubstr("nope.yaml: cannot read file"));
  FluxOptions options;
  options.filter_file = Data("nope.properties");
  def = FluxLoader(options).LoadFile(Data("wordcount.yaml"));
  EXPECT_THAT(def.status().message(), HasSubstr("cannot read --filter properties file"));
}

TEST_F(FluxLoaderTest, EnvPlaceholderNeedsEnvFilter) {
  FluxOptions options;
  options.filter_file = Data("filter.properties");
  absl::StatusOr<TopologyDef> def = FluxLoader(options).LoadFile(Data("filtered.yaml"));
  ASSERT_FALSE(def.ok());
  EXPECT_THAT(def.status().message(),
              HasSubstr("filtered.yaml:9: unresolved ${ENV-TEMPEST_TEST_HOME} (environment "
                        "substitution needs --env-filter)"));
}

TEST_F(FluxLoaderTest, GarbageNeverCrashes) {
  for (std::string text : {"{", "name: [", ": :", "spouts: {a: b}", "streams: [1, 2]",
                           "spouts:\n  - [1, 2]\n", "name: {x: y}\nspouts:\n  - id: {a: 1}\n",
                           "? [a, b]\n: c\n", "bolts:\n  - id: b\n    properties: [1]\n",
                           "streams:\n  - grouping: {type: [x]}\n", "\t\tname: x"}) {
    absl::StatusOr<TopologyDef> def = FluxLoader().LoadString(text, "garbage.yaml");
    EXPECT_FALSE(def.ok()) << text;
    EXPECT_THAT(def.status().message(), HasSubstr("garbage.yaml")) << text;
  }
}

}  // namespace
}  // namespace tempest::core
