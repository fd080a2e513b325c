// Storm's own configuration keys and core classes: every key of Storm's
// defaults.yaml is known (read or accepted without effect), Storm's Fields is
// no plugin, a connector's settings map is no typo, and the migration report
// names the accepted-but-unused keys on one line.
#include <fstream>
#include <map>

#include "common/core/config/config_loader.h"
#include "cli/migrate/migration_check.h"
#include "common/core/config/storm_default_keys.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/core/test_components.h"

namespace tempest::core {
namespace {

// `tempest migrate check` lives beside its command (cli/migrate/).
using cli::CheckMigration;
using cli::ClassFinding;
using cli::ConfigFinding;
using cli::MigrationCheckOptions;
using cli::MigrationReport;

TEST(StormDefaultKeysTest, KeysOfBothMajorReleasesAreKnownAndTyposAreNot) {
  // 1.x-only, 2.x-only and common keys of Storm's defaults.yaml.
  for (const char* key :
       {"zmq.threads", "storm.messaging.netty.server_worker_threads", "nimbus.thrift.threads",
        "topology.shellbolt.max.pending", "storm.zookeeper.port", "topology.workers",
        "supervisor.localizer.cache.target.size.mb", "pacemaker.max.threads"}) {
    EXPECT_TRUE(ConfigLoader::IsKnownKey(key)) << key;
  }
  EXPECT_FALSE(ConfigLoader::IsKnownKey("nimbus.thrift.threadz"));
  EXPECT_FALSE(ConfigLoader::IsKnownKey("topology.workerz"));
  EXPECT_GT(StormDefaultKeys().size(), 150u);
  for (std::string_view key : StormDefaultKeys()) EXPECT_TRUE(ConfigLoader::IsKnownKey(key)) << key;
  EXPECT_TRUE(IsStormCoreClass("org.apache.storm.tuple.Fields"));
  EXPECT_FALSE(IsStormCoreClass("org.apache.storm.kafka.ZkHosts"));
}

TEST(StormCompatMigrationTest, FieldsIsNativeMapValuesAreSettingsUnusedKeysOnOneLine) {
  auto registry = testing::MakeTestRegistry();
  tempest::testing::TempDir dir("tempest-storm-compat");
  MigrationCheckOptions options;
  options.registry = registry.get();
  options.flux_path = dir.File("topo.yaml");
  std::ofstream(options.flux_path) << R"(name: compat
config:
  hbase.conf:
    hbase.rootdir: "hdfs://nn/hbase"
  worker.childopts: "-Xmx1g"
  nimbus.thrift.threads: 64
  acme.feature.flag: true
components:
  - id: fields
    className: org.apache.storm.tuple.Fields
    constructorArgs: [["word"]]
spouts:
  - id: words
    className: test.WordSpout
bolts:
  - id: sink
    className: test.SinkBolt
streams:
  - from: words
    to: sink
    grouping:
      type: SHUFFLE
)";
  absl::StatusOr<MigrationReport> report = CheckMigration(options);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const ClassFinding& f : report->classes) {
    if (f.id == "fields") {
      EXPECT_EQ(f.verdict, ClassFinding::Verdict::kNative);
    }
  }
  EXPECT_FALSE(report->NeedsPlugins());
  std::map<std::string, ConfigFinding::Effect> seen;
  for (const ConfigFinding& f : report->config) seen[f.key] = f.effect;
  EXPECT_EQ(seen["hbase.conf"], ConfigFinding::Effect::kNoEffect);
  EXPECT_EQ(seen["nimbus.thrift.threads"], ConfigFinding::Effect::kNoEffect);
  EXPECT_EQ(seen["acme.feature.flag"], ConfigFinding::Effect::kUnknown);
  const std::string text = FormatMigrationReport(*report);
  EXPECT_NE(text.find("accepts but does not use (3): hbase.conf, worker.childopts, "
                      "nimbus.thrift.threads\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("unknown (check the spelling) (1)\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace tempest::core
