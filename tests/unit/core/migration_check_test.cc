// CheckMigration: a Storm Flux file (and storm.yaml) sorted into what runs
// natively, through multilang, or needs a plugin, with file:line, and what
// happens to each config key.
#include "cli/migrate/migration_check.h"

#include <fstream>
#include <map>

#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/core/test_components.h"

namespace tempest::core {
namespace {

// `tempest migrate check` lives beside its command (cli/migrate/).
using cli::CheckMigration;
using cli::ClassFinding;
using cli::ConfigFinding;
using cli::FormatMigrationReport;
using cli::MigrationCheckOptions;
using cli::MigrationReport;

using Verdict = ClassFinding::Verdict;
using Effect = ConfigFinding::Effect;

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// Stands in for a multilang bolt: the validator only asks for its streams.
class WordBolt final : public api::Bolt {
 public:
  absl::Status Prepare(const api::Config&, const api::TopologyContext&,
                       api::OutputCollector&) override {
    return absl::OkStatus();
  }
  void Execute(const api::Tuple&) override {}
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override {
    declarer.Declare(api::Fields({"word"}));
  }
};

class MigrationCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = testing::MakeTestRegistry();
    (void)registry_->RegisterBolt(
        "storm.ShellLike",
        [](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::Bolt>> {
          return std::make_unique<WordBolt>();
        });
    options_.registry = registry_.get();
    options_.known_bean_classes = {"org.apache.storm.kafka.ZkHosts"};
    options_.multilang_classes = {"storm.ShellLike"};
    options_.flux.resource_dirs.push_back(dir_.path());
  }
  absl::StatusOr<MigrationReport> Check(const std::string& flux, const std::string& storm = "") {
    options_.flux_path = dir_.File("topo.yaml");
    Write(options_.flux_path, flux);
    if (!storm.empty()) {
      options_.storm_yaml = dir_.File("storm.yaml");
      Write(options_.storm_yaml, storm);
    }
    return CheckMigration(options_);
  }
  const ClassFinding* Find(const MigrationReport& r, const std::string& id) {
    for (const ClassFinding& f : r.classes) {
      if (f.id == id) return &f;
    }
    return nullptr;
  }

  tempest::testing::TempDir dir_;
  std::unique_ptr<api::ComponentRegistry> registry_;
  MigrationCheckOptions options_;
};

TEST_F(MigrationCheckTest, SortsClassesWithTheirLines) {
  Write(dir_.File("split.py"), "# a multilang bolt\n");
  auto report = Check(R"(name: legacy
components:
  - id: hosts
    className: org.apache.storm.kafka.ZkHosts
  - id: reporter
    className: com.acme.MetricsReporter
spouts:
  - id: words
    className: test.WordSpout
bolts:
  - id: split
    className: storm.ShellLike
    constructorArgs:
      - ["python3", "split.py"]
      - ["word"]
  - id: enrich
    className: com.acme.storm.EnrichBolt
streams:
  - from: words
    to: split
    grouping:
      type: SHUFFLE
  - from: split
    to: enrich
    grouping:
      type: CUSTOM
      customClass:
        className: com.acme.RackGrouping
)");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->topology_name, "legacy");
  ASSERT_NE(Find(*report, "hosts"), nullptr);
  EXPECT_EQ(Find(*report, "hosts")->verdict, Verdict::kNative);
  EXPECT_EQ(Find(*report, "reporter")->verdict, Verdict::kNeedsPlugin);
  EXPECT_EQ(Find(*report, "reporter")->location.line, 6);
  EXPECT_EQ(Find(*report, "words")->verdict, Verdict::kNative);
  const ClassFinding* split = Find(*report, "split");
  EXPECT_EQ(split->verdict, Verdict::kMultilang);
  EXPECT_NE(split->note.find("python3 split.py"), std::string::npos) << split->note;
  const ClassFinding* enrich = Find(*report, "enrich");
  EXPECT_EQ(enrich->verdict, Verdict::kNeedsPlugin);
  EXPECT_EQ(enrich->location.line, 17);
  EXPECT_EQ(enrich->location.file, options_.flux_path);
  const ClassFinding* grouping = Find(*report, "split -> enrich");
  ASSERT_NE(grouping, nullptr);
  EXPECT_EQ(grouping->class_name, "com.acme.RackGrouping");
  EXPECT_EQ(grouping->verdict, Verdict::kNeedsPlugin);
  EXPECT_TRUE(report->NeedsPlugins());
  EXPECT_FALSE(report->RunsUnchanged());
  const std::string text = FormatMigrationReport(*report);
  EXPECT_NE(text.find("topo.yaml:17: bolts 'enrich': com.acme.storm.EnrichBolt"), std::string::npos)
      << text;
  EXPECT_NE(text.find("needs plugins"), std::string::npos);
}

TEST_F(MigrationCheckTest, ConfigKeysFromFluxAndStormYamlAreClassified) {
  auto report = Check(R"(name: cfg
config:
  topology.message.timeout.secs: 60
  topology.kryo.register: ["com.acme.Event"]
  acme.feature.flag: true
spouts:
  - id: words
    className: test.WordSpout
bolts:
  - id: sink
    className: test.SinkBolt
    config:
      topology.tick.tuple.freq.secs: 5
streams:
  - from: words
    to: sink
    grouping:
      type: SHUFFLE
)",
                      "storm.zookeeper.servers: [\"zk1\"]\nworker.childopts: \"-Xmx1g\"\n"
                      "nimbus.thrift.max_buffer_sizee: 1\n");
  ASSERT_TRUE(report.ok()) << report.status();
  std::map<std::string, std::pair<Effect, int>> seen;
  for (const ConfigFinding& f : report->config) seen[f.key] = {f.effect, f.location.line};
  EXPECT_EQ(seen["topology.message.timeout.secs"], std::make_pair(Effect::kApplied, 3));
  EXPECT_EQ(seen["topology.kryo.register"].first, Effect::kNoEffect);
  EXPECT_EQ(seen["acme.feature.flag"].first, Effect::kUnknown);
  EXPECT_EQ(seen["sink: topology.tick.tuple.freq.secs"].first, Effect::kApplied);
  EXPECT_EQ(seen["storm.zookeeper.servers"], std::make_pair(Effect::kApplied, 1));
  EXPECT_EQ(seen["worker.childopts"].first, Effect::kNoEffect);
  EXPECT_EQ(seen["nimbus.thrift.max_buffer_sizee"], std::make_pair(Effect::kUnknown, 3));
  EXPECT_TRUE(report->problems.empty()) << report->problems[0];
  EXPECT_TRUE(report->RunsUnchanged());
}

TEST_F(MigrationCheckTest, MissingMultilangScriptAndBrokenStreamsAreProblems) {
  auto report = Check(R"(name: broken
spouts:
  - id: words
    className: test.WordSpout
bolts:
  - id: split
    className: storm.ShellLike
    constructorArgs:
      - ["python3", "missing.py"]
      - ["word"]
streams:
  - from: words
    to: nowhere
    grouping:
      type: SHUFFLE
)");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->problems.empty());
  bool script = false, stream = false;
  for (const std::string& p : report->problems) {
    script = script || p.find("multilang script 'missing.py' not found") != std::string::npos;
    stream = stream || p.find("nowhere") != std::string::npos;
  }
  EXPECT_TRUE(script);
  EXPECT_TRUE(stream);
  EXPECT_EQ(report->problems.size(), 2u) << ::testing::PrintToString(report->problems);
  EXPECT_FALSE(report->RunsUnchanged());
}

// A component entry pasted under streams (no grouping, scalars where a map
// was expected): the class survey skips it and the loader's errors, each with its
// line, are the problems. It used to abort migrate check.
TEST_F(MigrationCheckTest, MalformedStreamEntriesAreAProblemNotACrash) {
  auto report = Check(R"(name: misplaced
spouts:
  - id: words
    className: test.WordSpout
streams:
  - from: words
    to: words
    grouping: {type: SHUFFLE}
  - id: count
    className: test.WordBolt
  - just a string
  - grouping: 7
)");
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->problems.empty());
  bool misplaced = false;
  for (const std::string& p : report->problems) {
    EXPECT_NE(p.find("topo.yaml:"), std::string::npos) << p;
    misplaced = misplaced || p.find("unknown key 'id' in stream") != std::string::npos;
  }
  EXPECT_TRUE(misplaced) << ::testing::PrintToString(report->problems);
  EXPECT_FALSE(report->RunsUnchanged());
}

// A range-checked key still holding its placeholder: a warning for
// `migrate check` without substitution (the value exists only at submit),
// a problem once substitution was asked for and left it unreplaced.
TEST_F(MigrationCheckTest, UnsubstitutedPlaceholderInARangedKeyIsAWarningUntilSubstituted) {
  const std::string flux = R"(name: placeholders
config:
  storm.zookeeper.port: "${ENV-TEMPEST_TEST_UNSET_PORT}"
spouts:
  - id: words
    className: test.WordSpout
)";
  auto report = Check(flux);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->problems.empty()) << ::testing::PrintToString(report->problems);
  ASSERT_EQ(report->warnings.size(), 1u) << ::testing::PrintToString(report->warnings);
  EXPECT_NE(report->warnings[0].find("storm.zookeeper.port"), std::string::npos);
  EXPECT_NE(report->warnings[0].find("--env-filter"), std::string::npos) << report->warnings[0];
  EXPECT_TRUE(report->RunsUnchanged());

  options_.flux.env_filter = true;  // asked for, and the variable is unset
  auto substituted = Check(flux);
  ASSERT_TRUE(substituted.ok()) << substituted.status();
  EXPECT_FALSE(substituted->RunsUnchanged());
  ASSERT_FALSE(substituted->problems.empty());
}

TEST_F(MigrationCheckTest, MalformedYamlIsOneErrorWithFileAndLine) {
  auto report = Check("name: x\nspouts:\n  - id: [unclosed\n");
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("topo.yaml:"), std::string::npos)
      << report.status();
  auto not_a_map = Check("- just\n- a list\n");
  ASSERT_FALSE(not_a_map.ok());
  EXPECT_NE(not_a_map.status().message().find("YAML map"), std::string::npos);
}

}  // namespace
}  // namespace tempest::core
