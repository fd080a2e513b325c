// The configuration pages: nimbus's config with where each value came from,
// and a topology's effective config with the cluster's daemon settings.

#include "nimbus/rest_config_views.h"

#include <string>

#include "common/core/config/config_loader.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {
namespace {

using json = nlohmann::json;

v1::StormBase Topology(const std::string& flux_config) {
  v1::StormBase base;
  base.set_name("wc");
  base.set_flux_text(R"(name: wc
config:
)" + flux_config + R"(
spouts:
  - id: gen
    className: tempest.SequenceSpout
bolts:
  - id: sink
    className: tempest.IdentityBolt
streams:
  - from: gen
    to: sink
    grouping:
      type: SHUFFLE
)");
  return base;
}

TEST(RestConfigViewsTest, ClusterConfigurationWithOriginsKeepsThePlainAnswerBesideIt) {
  api::Config config;
  config.Set("storm.zookeeper.port", api::Value(int64_t{2182}));
  config.Set("storm.zookeeper.auth.payload", api::Value("tempest:s3cret"));
  config.Set("nimbus.seeds", api::Value(api::ValueList{"n1"}));
  core::ConfigOrigins origins = {{"storm.zookeeper.port", "file:/etc/tempest/tempest.yaml"},
                                 {"storm.zookeeper.auth.payload", "command line"}};
  const json body = json::parse(RenderClusterConfigurationWithOrigins(config, origins));
  EXPECT_EQ(body["configuration"], json::parse(RenderClusterConfiguration(config)));
  EXPECT_EQ(body["configuration"]["storm.zookeeper.port"], 2182);
  EXPECT_EQ(body["configuration"]["storm.zookeeper.auth.payload"], "<redacted>");
  EXPECT_EQ(body["origins"]["storm.zookeeper.port"], "file:/etc/tempest/tempest.yaml");
  EXPECT_EQ(body["origins"]["storm.zookeeper.auth.payload"], "command line");
  EXPECT_EQ(body["origins"]["nimbus.seeds"], "unknown") << "a key nimbus has no record of";
  EXPECT_EQ(body.dump().find("s3cret"), std::string::npos);
}

TEST(RestConfigViewsTest, TopologyConfigurationLayersTopologyOverClusterOverDefaults) {
  v1::StormBase base = Topology("  topology.workers: 3\n  storm.zookeeper.root: /flux\n"
                                "  my.password: hunter2");
  (*base.mutable_config_overrides())["topology.message.timeout.secs"] = "45";
  api::Config cluster = core::ConfigLoader::Defaults();
  cluster.Set("storm.zookeeper.port", api::Value(int64_t{2182}));
  cluster.Set("storm.zookeeper.root", api::Value("/cluster"));
  cluster.Set("topology.max.spout.pending", api::Value(int64_t{500}));
  cluster.Set("ui.port", api::Value(int64_t{8090}));
  core::ConfigOrigins cluster_origins;
  cluster_origins["ui.port"] = "file:/etc/tempest/tempest.yaml";
  cluster_origins["supervisor.slots.ports"] = std::string(core::kOriginDefault);

  const TopologyConfiguration c =
      EffectiveTopologyConfiguration(base, ClusterConfigRef{&cluster, &cluster_origins});
  EXPECT_EQ(c.values["topology.workers"], 3);
  EXPECT_EQ(c.origins["topology.workers"], "topology");
  EXPECT_EQ(c.values["topology.message.timeout.secs"], 45);
  EXPECT_EQ(c.origins["topology.message.timeout.secs"], "override");
  EXPECT_EQ(c.values["topology.name"], "wc");
  EXPECT_EQ(c.origins["topology.name"], "topology");
  EXPECT_EQ(c.values["my.password"], "<redacted>");
  EXPECT_EQ(c.values["storm.zookeeper.port"], 2182) << "the cluster's ZooKeeper, not 2181";
  EXPECT_EQ(c.origins["storm.zookeeper.port"], "cluster");
  EXPECT_EQ(c.values["storm.zookeeper.root"], "/flux") << "the topology's own setting wins";
  EXPECT_EQ(c.origins["storm.zookeeper.root"], "topology");
  EXPECT_EQ(c.values["ui.port"], 8090);
  EXPECT_EQ(c.origins["ui.port"], "cluster");
  // What nimbus took from Storm's defaults reads as a default, not as the cluster's setting.
  EXPECT_EQ(c.origins["supervisor.slots.ports"], "default");
  // A cluster file's topology.* keys never reach a topology's workers.
  EXPECT_TRUE(c.values["topology.max.spout.pending"].is_null());
  EXPECT_EQ(c.origins["topology.max.spout.pending"], "default");
  EXPECT_EQ(c.values["topology.debug"], false);
  EXPECT_EQ(c.origins["topology.debug"], "default");
  EXPECT_EQ(c.values.dump().find("hunter2"), std::string::npos);
  for (const auto& [key, value] : c.values.items()) EXPECT_TRUE(c.origins.contains(key)) << key;
}

TEST(RestConfigViewsTest, TopologyConfigurationWithoutClusterIsTheTopologysOwn) {
  const TopologyConfiguration c = EffectiveTopologyConfiguration(Topology("  a.b: 1"), {});
  EXPECT_EQ(c.values["storm.zookeeper.port"], 2181);
  EXPECT_EQ(c.origins["storm.zookeeper.port"], "default");
  EXPECT_EQ(c.origins["a.b"], "topology");
}

TEST(RestConfigViewsTest, AnUnloadableTopologyShowsNoConfiguration) {
  v1::StormBase base;
  base.set_flux_text("spouts: [");
  const TopologyConfiguration c = EffectiveTopologyConfiguration(base, {});
  EXPECT_TRUE(c.values.empty());
  EXPECT_TRUE(c.origins.empty());
}

}  // namespace
}  // namespace tempest::nimbus
