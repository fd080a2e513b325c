// Both Flux forms of the KafkaSpout: tempest.KafkaSpout properties and
// Storm's org.apache.storm.kafka.KafkaSpout(SpoutConfig(ZkHosts, ...)).
#include "spout/kafka/kafka_spout_config.h"

#include <gtest/gtest.h>

#include "common/api/component_registry.h"
#include "spout/kafka/kafka_spout.h"

namespace tempest::spout {
namespace {

using api::Value;
using api::ValueList;
using api::ValueMap;

api::ComponentArgs Tempest(ValueMap props) {
  api::ComponentArgs a;
  a.class_name = "tempest.KafkaSpout";
  a.id = api::ComponentId("kafka");
  a.properties = {{"bootstrap.servers", "127.0.0.1:9092"}, {"topics", "events"}};
  for (auto& [k, v] : props) a.properties[k] = v;
  return a;
}

Value Bean(const std::string& id, const std::string& cls, ValueList ctor, ValueMap props = {}) {
  return Value(ValueMap{{"id", id},
                        {"className", cls},
                        {"constructorArgs", std::move(ctor)},
                        {"properties", std::move(props)}});
}

api::ComponentArgs Legacy(ValueMap spout_config_props, ValueList hosts_ctor = {"zk1:2181"},
                          ValueList extra_ctor = {}) {
  ValueList ctor = {Bean("hosts", "org.apache.storm.kafka.ZkHosts", std::move(hosts_ctor)),
                    "events"};
  if (!extra_ctor.empty()) {
    ctor.insert(ctor.end(), extra_ctor.begin(), extra_ctor.end());
  } else {
    ctor.push_back("/kafkaspout");
    ctor.push_back("my-id");
  }
  api::ComponentArgs a;
  a.class_name = "org.apache.storm.kafka.KafkaSpout";
  a.id = api::ComponentId("kafka");
  a.constructor_args = {
      Bean("cfg", "org.apache.storm.kafka.SpoutConfig", std::move(ctor), spout_config_props)};
  return a;
}

TEST(KafkaSpoutConfigTest, TempestFormDefaults) {
  auto c = ParseKafkaSpoutArgs(Tempest({}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->topics, std::vector<std::string>{"events"});
  EXPECT_EQ(c->zk_root, "/kafkaspout");
  EXPECT_EQ(c->id, "kafka");  // the component id
  EXPECT_EQ(c->guarantee, ProcessingGuarantee::kAtLeastOnce);
  EXPECT_EQ(c->start_offset_time, -2);
  EXPECT_EQ(c->state_update_interval_ms, 2000);
  EXPECT_EQ(c->out_of_range, OutOfRangePolicy::kEarliest);
  EXPECT_EQ(c->retry.retry_initial_delay_ms, 100);  // backs off (retry_defaults_test.cc)
  EXPECT_EQ(c->retry.retry_limit, 10);
  EXPECT_FALSE(c->stop_at_end);
  EXPECT_EQ(c->OutputFields(),
            (std::vector<std::string>{"topic", "partition", "offset", "key", "value"}));
}

TEST(KafkaSpoutConfigTest, TempestFormEveryProperty) {
  auto c = ParseKafkaSpoutArgs(Tempest({{"topics", ValueList{"b", "a"}},
                                        {"zkRoot", "/offsets/"},
                                        {"id", "reader"},
                                        {"zkServers", "h1, h2"},
                                        {"zkPort", 2182},
                                        {"processingGuarantee", "at_most_once"},
                                        {"startOffsetTime", -1},
                                        {"ignoreZkOffsets", true},
                                        {"maxOffsetBehind", 1000},
                                        {"stateUpdateIntervalMs", 500},
                                        {"retryInitialDelayMs", 5},
                                        {"retryDelayMultiplier", 2.5},
                                        {"retryDelayMaxMs", 100},
                                        {"retryLimit", 4},
                                        {"outOfRangePolicy", "LATEST"},
                                        {"deadLetterTopic", "dead"},
                                        {"maxUncommittedOffsets", 77},
                                        {"stopAtEnd", "true"},
                                        {"kafka.fetch.wait.max.ms", 10}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->topics, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(c->topic_level());
  EXPECT_EQ(c->zk_root, "/offsets");
  EXPECT_EQ(c->id, "reader");
  EXPECT_EQ(c->zk_servers, (std::vector<std::string>{"h1", "h2"}));
  EXPECT_EQ(c->zk_port, 2182);
  EXPECT_EQ(c->guarantee, ProcessingGuarantee::kAtMostOnce);
  EXPECT_EQ(c->start_offset_time, -1);
  EXPECT_TRUE(c->ignore_zk_offsets);
  EXPECT_EQ(c->max_offset_behind, 1000);
  EXPECT_EQ(c->state_update_interval_ms, 500);
  EXPECT_EQ(c->retry.retry_initial_delay_ms, 5);
  EXPECT_DOUBLE_EQ(c->retry.retry_delay_multiplier, 2.5);
  EXPECT_EQ(c->retry.retry_delay_max_ms, 100);
  EXPECT_EQ(c->retry.retry_limit, 4);
  EXPECT_EQ(c->out_of_range, OutOfRangePolicy::kLatest);
  EXPECT_EQ(c->dead_letter_topic, "dead");
  EXPECT_EQ(c->max_uncommitted_offsets, 77);
  EXPECT_TRUE(c->stop_at_end);
  EXPECT_EQ(c->kafka_properties.at("fetch.wait.max.ms"), "10");
}

TEST(KafkaSpoutConfigTest, TempestFormErrorsNameTheProblem) {
  struct Case {
    ValueMap props;
    std::string needle;
  };
  std::vector<Case> cases = {
      {{{"processingGuarantee", "EXACTLY_ONCE"}}, "processingGuarantee"},
      {{{"outOfRangePolicy", "skip"}}, "outOfRangePolicy"},
      {{{"zkRoot", "relative"}}, "zkRoot"},
      {{{"stateUpdateIntervalMs", 0}}, "stateUpdateIntervalMs"},
      {{{"maxUncommittedOffsets", -3}}, "maxUncommittedOffsets"},
      {{{"startOffsetTime", -7}}, "startOffsetTime"},
      {{{"retryDelayMaxMs", 1}, {"retryInitialDelayMs", 5}}, "retryDelayMaxMs"},
      {{{"topics", ""}}, "no topics"},
      {{{"topics", "a/b"}}, "bad topic"},
      {{{"deadLetterTopic", "events"}}, "deadLetterTopic"},
      {{{"zkPort", 70000}}, "zkPort"},
      {{{"stopAtEnd", "maybe"}}, "stopAtEnd"},
      {{{"colour", "blue"}}, "unknown property 'colour'"},
      {{{"retryLimt", 3}}, "unknown property 'retryLimt' (did you mean 'retryLimit'?)"},
      {{{"stopatend", true}}, "(did you mean 'stopAtEnd'?)"},
  };
  for (const Case& c : cases) {
    auto r = ParseKafkaSpoutArgs(Tempest(c.props));
    ASSERT_FALSE(r.ok()) << c.needle;
    EXPECT_TRUE(absl::IsInvalidArgument(r.status()));
    EXPECT_NE(r.status().message().find(c.needle), absl::string_view::npos) << r.status();
  }
  api::ComponentArgs no_bootstrap = Tempest({});
  no_bootstrap.properties.erase("bootstrap.servers");
  auto r = ParseKafkaSpoutArgs(no_bootstrap);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bootstrap.servers"), absl::string_view::npos);
}

TEST(KafkaSpoutConfigTest, LegacySpoutConfigWithZkHosts) {
  Value scheme = Bean("scheme", "org.apache.storm.spout.SchemeAsMultiScheme",
                      {Bean("s", "org.apache.storm.kafka.StringScheme", {})});
  auto c = ParseKafkaSpoutArgs(Legacy({{"scheme", scheme},
                                       {"startOffsetTime", -1},
                                       {"ignoreZkOffsets", true},
                                       {"zkServers", ValueList{"zka", "zkb"}},
                                       {"zkPort", 2181},
                                       {"stateUpdateIntervalMs", 1000},
                                       {"retryLimit", 5},
                                       {"fetchMaxWait", 0},
                                       {"fetchSizeBytes", 2048},
                                       {"useStartOffsetTimeIfOffsetOutOfRange", false},
                                       {"metricsTimeBucketSizeInSecs", 60}},
                                      {"zk1:2181,zk2:2181/kafka", "/brokers2"}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->topics, std::vector<std::string>{"events"});
  EXPECT_EQ(c->zk_root, "/kafkaspout");
  EXPECT_EQ(c->id, "my-id");
  ASSERT_TRUE(c->broker_zk.has_value());
  EXPECT_EQ(c->broker_zk->connect, "zk1:2181,zk2:2181/kafka");
  EXPECT_EQ(c->broker_zk->path, "/brokers2");
  EXPECT_TRUE(c->bootstrap_servers.empty());
  EXPECT_EQ(c->scheme, RecordScheme::kString);
  EXPECT_EQ(c->OutputFields(), std::vector<std::string>{"str"});
  EXPECT_EQ(c->start_offset_time, -1);
  EXPECT_TRUE(c->ignore_zk_offsets);
  EXPECT_EQ(c->zk_servers, (std::vector<std::string>{"zka", "zkb"}));
  EXPECT_EQ(c->retry.retry_limit, 5);
  EXPECT_EQ(c->kafka_properties.at("fetch.wait.max.ms"), "1");
  EXPECT_EQ(c->kafka_properties.at("fetch.message.max.bytes"), "2048");
  EXPECT_EQ(c->out_of_range, OutOfRangePolicy::kFail);
}

TEST(KafkaSpoutConfigTest, LegacyDefaultsToRawSchemeAndAcceptsClientIdForm) {
  auto c = ParseKafkaSpoutArgs(Legacy({}, {"zk1:2181"}, {"client-x", "/root", "id2"}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->OutputFields(), std::vector<std::string>{"bytes"});
  EXPECT_EQ(c->broker_zk->path, "/brokers");
  EXPECT_EQ(c->kafka_properties.at("client.id"), "client-x");
  EXPECT_EQ(c->zk_root, "/root");
  EXPECT_EQ(c->id, "id2");
}

TEST(KafkaSpoutConfigTest, LegacyBootstrapExtensionOnZkHosts) {
  api::ComponentArgs a = Legacy({});
  a.constructor_args[0]
      .MutableMap()["constructorArgs"]
      .MutableList()[0]
      .MutableMap()["properties"] =
      ValueMap{{"bootstrap.servers", "k1:9092"}, {"refreshFreqSecs", 5}};
  auto c = ParseKafkaSpoutArgs(a);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->bootstrap_servers, "k1:9092");
  EXPECT_EQ(c->partition_refresh_secs, 5);
}

TEST(KafkaSpoutConfigTest, LegacyErrors) {
  api::ComponentArgs no_ctor = Legacy({});
  no_ctor.constructor_args.clear();
  EXPECT_FALSE(ParseKafkaSpoutArgs(no_ctor).ok());
  api::ComponentArgs static_hosts = Legacy({});
  static_hosts.constructor_args[0].MutableMap()["constructorArgs"].MutableList()[0] =
      Bean("h", "org.apache.storm.kafka.StaticHosts", {});
  auto r = ParseKafkaSpoutArgs(static_hosts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("only ZkHosts"), absl::string_view::npos);
  r = ParseKafkaSpoutArgs(Legacy({{"scheme", Bean("x", "com.example.MyScheme", {})}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("scheme"), absl::string_view::npos);
  r = ParseKafkaSpoutArgs(Legacy({{"failedMsgRetryManagerClass", "com.example.Mine"}}));
  EXPECT_FALSE(r.ok());
  r = ParseKafkaSpoutArgs(Legacy({{"noSuchField", 1}}));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("noSuchField"), absl::string_view::npos);
}

TEST(KafkaSpoutConfigTest, ZooKeeperFallsBackToTopologyConfig) {
  auto c = ParseKafkaSpoutArgs(Tempest({}));
  ASSERT_TRUE(c.ok());
  api::Config topo;
  EXPECT_FALSE(ResolveKafkaSpoutConfig(*c, topo).ok());  // nowhere to store offsets
  topo.Set(api::kStormZookeeperServers, ValueList{"z1", "z2:2999"});
  topo.Set(api::kStormZookeeperPort, 2888);
  topo.Set(kMaxUncommittedOffsetsKey, 12);
  topo.Set(kPartitionRefreshSecsKey, 9);
  auto connect = ResolveKafkaSpoutConfig(*c, topo);
  ASSERT_TRUE(connect.ok()) << connect.status();
  EXPECT_EQ(*connect, "z1:2888,z2:2999");
  EXPECT_EQ(c->max_uncommitted_offsets, 12);
  EXPECT_EQ(c->partition_refresh_secs, 9);
  // The spout's own settings win over the topology's.
  auto own = ParseKafkaSpoutArgs(
      Tempest({{"zkServers", "mine"}, {"zkPort", 1234}, {"maxUncommittedOffsets", 3}}));
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(*ResolveKafkaSpoutConfig(*own, topo), "mine:1234");
  EXPECT_EQ(own->max_uncommitted_offsets, 3);
  // Defaults: port 2181, limit 100000, refresh 60 s.
  auto d = ParseKafkaSpoutArgs(Tempest({{"zkServers", "z"}}));
  EXPECT_EQ(*ResolveKafkaSpoutConfig(*d, api::Config()), "z:2181");
  EXPECT_EQ(d->max_uncommitted_offsets, kDefaultMaxUncommittedOffsets);
  EXPECT_EQ(d->partition_refresh_secs, 60);
}

// In a cluster the worker names the cluster's ZooKeeper; a spout and
// topology that name none keep offsets there (as Storm does), not at
// localhost:2181.
TEST(KafkaSpoutConfigTest, OffsetsFallBackToTheClusterZookeeperInACluster) {
  api::Config topo;
  topo.Set(api::kStormZookeeperServers, ValueList{"localhost"});  // Storm's defaults
  topo.Set(api::kStormZookeeperPort, 2181);
  topo.Set(api::kTempestClusterZookeeperConnect, "127.0.0.1:2999,127.0.0.2:2998");
  auto c = ParseKafkaSpoutArgs(Tempest({}));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*ResolveKafkaSpoutConfig(*c, topo), "127.0.0.1:2999,127.0.0.2:2998");
  // A topology or spout that names its own ZooKeeper keeps it.
  auto own = ParseKafkaSpoutArgs(Tempest({{"zkServers", "mine"}}));
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(*ResolveKafkaSpoutConfig(*own, topo), "mine:2181");
  topo.Set(api::kStormZookeeperServers, ValueList{"zk1"});
  auto named = ParseKafkaSpoutArgs(Tempest({}));
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(*ResolveKafkaSpoutConfig(*named, topo), "zk1:2181");
}

TEST(KafkaSpoutConfigTest, BothClassNamesAreRegisteredAndDeclareTheirFields) {
  api::ComponentRegistry registry;
  ASSERT_TRUE(RegisterKafkaSpout(registry).ok());
  ASSERT_TRUE(RegisterKafkaSpout(registry).ok());  // idempotent
  EXPECT_TRUE(registry.HasSpout("tempest.KafkaSpout"));
  EXPECT_TRUE(registry.HasSpout("org.apache.storm.kafka.KafkaSpout"));
  EXPECT_TRUE(api::ComponentRegistry::Global().HasSpout("tempest.KafkaSpout"));
  auto spout = registry.CreateSpout(Tempest({}));
  ASSERT_TRUE(spout.ok()) << spout.status();
  api::OutputFieldsDeclarer d;
  (*spout)->DeclareOutputFields(d);
  ASSERT_EQ(d.streams().size(), 1u);
  EXPECT_EQ(d.streams().begin()->second.fields.size(), 5);
  auto legacy = registry.CreateSpout(Legacy({}));
  ASSERT_TRUE(legacy.ok()) << legacy.status();
  auto bad = registry.CreateSpout(Tempest({{"processingGuarantee", "x"}}));
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
}

}  // namespace
}  // namespace tempest::spout
