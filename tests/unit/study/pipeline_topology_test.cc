#include "study/pipeline_topology.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tempest::study {
namespace {

using ::testing::HasSubstr;

TEST(PipelineTopologyTest, EachGuaranteeGetsItsOwnNameAndSinks) {
  Scenario scenario;
  scenario.name = "slow-bolt";
  scenario.fault = FaultKind::kSlowBolt;
  scenario.delay_ms = 30;
  PipelineSite site;
  site.topic = "study-slow-bolt";
  site.dir = "/out/runs/slow-bolt";
  site.fault_switch_file = "/out/runs/slow-bolt/fault-on";
  const PipelineSpec alo = PipelineFor(scenario, "at-least-once", site);
  EXPECT_EQ(alo.name, "study-slow-bolt-alo");
  EXPECT_EQ(alo.zk_root, kStudyOffsetsRoot);
  EXPECT_EQ(alo.sink_log, "/out/runs/slow-bolt/at-least-once/sink.log");
  EXPECT_EQ(alo.dedup_sink_log, "/out/runs/slow-bolt/at-least-once/dedup-sink.log");
  EXPECT_EQ(alo.delay_micros, 30'000);
  const PipelineSpec amo = PipelineFor(scenario, "at-most-once", site);
  EXPECT_EQ(amo.name, "study-slow-bolt-amo");
  EXPECT_TRUE(amo.dedup_sink_log.empty());
  EXPECT_THAT(PipelineTopologyYaml(amo), HasSubstr("value: AT_MOST_ONCE"));
}

TEST(PipelineTopologyTest, OnlyARevokedAclScenarioGivesItsSpoutsCredentials) {
  PipelineSite site;
  site.topic = "study-zk-permission-lost";
  site.dir = "/out";
  site.spout_credentials = "study-spout:secret";
  auto builtin = [](const std::string& name) {
    for (const Scenario& s : BuiltinScenarios()) {
      if (s.name == name) return s;
    }
    return Scenario{};
  };
  const Scenario acl = builtin("zk-permission-lost");
  ASSERT_EQ(acl.fault, FaultKind::kZkAclRevoked);
  const std::string yaml = PipelineTopologyYaml(PipelineFor(acl, "at-least-once", site));
  EXPECT_THAT(yaml, HasSubstr("  storm.zookeeper.auth.scheme: digest\n"));
  EXPECT_THAT(yaml, HasSubstr("  storm.zookeeper.auth.payload: \"study-spout:secret\"\n"));
  const Scenario overload = builtin("zk-overload");
  ASSERT_EQ(overload.fault, FaultKind::kZkOverload);
  const PipelineSpec plain = PipelineFor(overload, "at-least-once", site);
  EXPECT_TRUE(plain.zk_auth_payload.empty());
  EXPECT_THAT(PipelineTopologyYaml(plain), ::testing::Not(HasSubstr("storm.zookeeper.auth")));
}

}  // namespace
}  // namespace tempest::study
