// The REST views rendered from hand-built models, without ZooKeeper or a
// nimbus: field names, values and the Prometheus text.

#include "nimbus/rest_views.h"
#include "nimbus/prometheus_view.h"
#include "nimbus/rest_cluster_views.h"
#include "nimbus/rest_json.h"
#include "nimbus/stats_history.h"

#include <tuple>

#include "common/coord/cluster_paths.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {
namespace {

using json = nlohmann::json;

// "wc-1-100": spout "gen" [1-1] and bolt "sink" [2-3], both on sup-a:6700,
// launched at 100 s; one beat on that slot and a stale one on sup-b:6701.
TopologyView WordCount() {
  TopologyView v;
  v.topology.id = "wc-1-100";
  v1::StormBase& base = v.topology.base;
  base.set_name("wc");
  base.set_status(v1::ACTIVE);
  base.set_launch_time_secs(100);
  base.set_num_workers(1);
  base.set_num_executors(2);
  base.set_num_tasks(3);
  base.set_owner("alice");
  base.set_message_timeout_secs(30);
  v1::ComponentSummary* gen = base.add_components();
  gen->set_id("gen");
  gen->set_spout(true);
  gen->set_executors(1);
  gen->set_tasks(1);
  v1::ComponentSummary* sink = base.add_components();
  sink->set_id("sink");
  sink->set_executors(1);
  sink->set_tasks(2);
  for (auto [start, end, component] : {std::tuple{1, 1, "gen"}, std::tuple{2, 3, "sink"}}) {
    v1::ExecutorRange* r = base.add_executors();
    r->set_start_task(start);
    r->set_end_task(end);
    r->set_component(component);
  }
  v1::Assignment a;
  (*a.mutable_node_host())["sup-a"] = "host-a";
  for (auto [start, end] : {std::pair{1, 1}, std::pair{2, 3}}) {
    v1::ExecutorAssignment* e = a.add_executors();
    e->set_start_task(start);
    e->set_end_task(end);
    e->set_node("sup-a");
    e->set_port(6700);
  }
  v.assignment = a;
  for (auto [node, port, emitted] : {std::tuple{"sup-a", 6700, 40}, std::tuple{"sup-b", 6701, 7}}) {
    StoredBeat b;
    b.name = coord::ClusterPaths::WorkerBeatName(node, port);
    b.slot = WorkerSlot{node, port};
    b.parsed = true;
    b.beat.set_emitted(emitted);
    b.beat.set_acked(emitted / 2);
    b.beat.set_failed(1);
    b.beat.set_uptime_secs(65);
    b.beat.set_time_secs(195);
    b.beat.set_complete_latency_p99_us(1500);
    v1::ExecutorRange* r = b.beat.add_executors();
    r->set_start_task(1);
    r->set_end_task(1);
    v.beats.push_back(b);
  }
  return v;
}

TEST(RestViewsTest, PrettyUptimeLeavesOutLeadingZeroUnits) {
  EXPECT_EQ(PrettyUptime(4), "4s");
  EXPECT_EQ(PrettyUptime(3 * 60 + 4), "3m 4s");
  EXPECT_EQ(PrettyUptime(86400 + 2 * 3600 + 4), "1d 2h 0m 4s");
  EXPECT_EQ(PrettyUptime(-5), "0s");
}

TEST(RestViewsTest, ClusterSummaryCountsSlotsOfAssignedWorkers) {
  ClusterView view;
  view.supervisors.resize(2);
  view.supervisors[0].set_supervisor_id("sup-a");  // WordCount's worker runs there
  view.supervisors[0].add_slot_ports(6700);
  view.supervisors[0].add_slot_ports(6701);
  view.supervisors[1].set_supervisor_id("sup-b");
  view.supervisors[1].add_slot_ports(6700);
  view.topologies.push_back(WordCount());
  const json body = json::parse(RenderClusterSummary(view));
  // The supervisor rows count the same slots: they add up to slotsUsed.
  const json rows = json::parse(RenderSupervisorSummary(view))["supervisors"];
  EXPECT_EQ(rows[0]["slotsUsed"].get<int>() + rows[1]["slotsUsed"].get<int>(), 1);
  EXPECT_EQ(body["stormVersion"], "tempest-0.1.0");
  EXPECT_EQ(body["supervisors"], 2);
  EXPECT_EQ(body["topologies"], 1);
  EXPECT_EQ(body["slotsTotal"], 3);
  EXPECT_EQ(body["slotsUsed"], 1);
  EXPECT_EQ(body["slotsFree"], 2);
  EXPECT_EQ(body["executorsTotal"], 2);
  EXPECT_EQ(body["tasksTotal"], 3);
}

TEST(RestViewsTest, TopologySummaryLeavesOutStaleBeats) {
  ClusterView view;
  view.now_secs = 200;
  view.topologies.push_back(WordCount());
  const json t = json::parse(RenderTopologySummary(view))["topologies"][0];
  EXPECT_EQ(t["id"], "wc-1-100");
  EXPECT_EQ(t["status"], "ACTIVE");
  EXPECT_EQ(t["uptime"], "1m 40s");
  EXPECT_EQ(t["uptimeSeconds"], 100);
  EXPECT_EQ(t["workersTotal"], 1);
  EXPECT_EQ(t["assignedExecutors"], 2);
  EXPECT_EQ(t["owner"], "alice");
  EXPECT_EQ(t["emitted"], 40);  // the beat of sup-b:6701 is not counted
  EXPECT_EQ(t["completeLatency"], "1.500");
  EXPECT_EQ(t["topologyStats"][0]["window"], ":all-time");
  EXPECT_EQ(t["topologyStats"][0]["acked"], 20);
}

TEST(RestViewsTest, TopologyDetailListsExecutorsAndWorkers) {
  const json body = json::parse(RenderTopologyDetail(WordCount(), 200));
  EXPECT_EQ(body["msgTimeout"], 30);
  EXPECT_EQ(body["window"], ":all-time");
  EXPECT_EQ(body["windowHint"], "All time");
  EXPECT_EQ(body["replicationCount"], 1);
  EXPECT_EQ(body["debug"], false);
  EXPECT_EQ(body["schedulerDisplayResource"], false);
  // Storm's last-error fields are empty for components that reported none.
  const json no_error = json::parse(
      R"({"lastError":"","errorHost":"","errorPort":"","errorTime":null,"errorLapsedSecs":null,
          "errorWorkerLogLink":""})");
  json gen = json::parse(R"({"spoutId":"gen","encodedSpoutId":"gen","executors":1,"tasks":1,
      "emitted":0,"transferred":0,"acked":0,"failed":0,"completeLatency":"0.000"})");
  json sink = json::parse(R"({"boltId":"sink","encodedBoltId":"sink","executors":1,"tasks":2,
      "emitted":0,"transferred":0,"acked":0,"failed":0,"executed":0,"executeLatency":"0.000",
      "processLatency":"0.000","capacity":"0.000"})");
  // The slots model: components request no memory or CPU of their own.
  const json no_resources =
      json::parse(R"({"requestedMemOnHeap":0.0,"requestedMemOffHeap":0.0,"requestedCpu":0.0})");
  gen.update(no_error);
  sink.update(no_error);
  gen.update(no_resources);
  sink.update(no_resources);
  EXPECT_EQ(body["spouts"], json::array({gen}));
  EXPECT_EQ(body["bolts"], json::array({sink}));
  ASSERT_EQ(body["executorStats"].size(), 2u);
  EXPECT_EQ(body["executorStats"][1],
            json::parse(R"({"id":"[2-3]","component":"sink","supervisorId":"sup-a",
                            "host":"host-a","port":6700})"));
  ASSERT_EQ(body["workers"].size(), 1u);
  EXPECT_EQ(body["workers"][0]["host"], "host-a");
  EXPECT_EQ(body["workers"][0]["lastBeatSecsAgo"], 5);
  EXPECT_EQ(body["workers"][0]["executors"], json::parse(R"(["[1-1]"])"));
  EXPECT_EQ(body["workers"][0]["uptime"], "1m 5s");
  EXPECT_EQ(body["workers"][0]["assignmentVersion"], 0);
  // An assignment written before versions existed.
  EXPECT_EQ(body["assignmentVersion"], 0);
  EXPECT_EQ(body["lastAssignmentChange"], nullptr);
  EXPECT_FALSE(body.contains("removeInSeconds"));
  EXPECT_FALSE(body.contains("rebalanceInSeconds"));
}

TEST(RestViewsTest, TopologyDetailShowsTheAssignmentsVersionAndWhatEachWorkerRuns) {
  TopologyView view = WordCount();
  view.assignment->set_version(3);
  v1::AssignmentChange* change = view.assignment->mutable_last_change();
  change->set_time_secs(190);
  change->set_reason("rebalance");
  change->set_kept(5);
  change->set_moved(1);
  change->set_started(2);
  change->set_stopped(1);
  view.beats[0].beat.set_assignment_version(2);
  const json body = json::parse(RenderTopologyDetail(view, 200));
  EXPECT_EQ(body["assignmentVersion"], 3);
  EXPECT_EQ(body["lastAssignmentChange"],
            json::parse(R"({"time":190000,"reason":"rebalance","kept":5,"moved":1,"started":2,
                            "stopped":1})"));
  // The worker has not applied version 3 yet.
  ASSERT_EQ(body["workers"].size(), 1u);
  EXPECT_EQ(body["workers"][0]["assignmentVersion"], 2);
  EXPECT_EQ(body["workersApplying"], 1);
  view.beats[0].beat.set_assignment_version(3);
  EXPECT_EQ(json::parse(RenderTopologyDetail(view, 200))["workersApplying"], 0);
  view.beats.clear();  // restarting: no beat on the slot counts as applying
  EXPECT_EQ(json::parse(RenderTopologyDetail(view, 200))["workersApplying"], 1);
  view.assignment.reset();
  const json unassigned = json::parse(RenderTopologyDetail(view, 200));
  EXPECT_EQ(unassigned["assignmentVersion"], 0);
  EXPECT_EQ(unassigned["lastAssignmentChange"], nullptr);
}

TEST(RestViewsTest, TopologyDetailSaysWhereEachKafkaSpoutKeepsItsOffsets) {
  TopologyView view = WordCount();
  EXPECT_EQ(json::parse(RenderTopologyDetail(view, 200))["kafkaSpouts"], json::array());
  spout::SpoutLagTarget zk;
  zk.component = "legacy";
  zk.config.topics = {"events"};
  zk.config.zk_root = "/kafkaspout";
  zk.config.id = "reader";
  zk.zk_connect = "zk1:2181";
  spout::SpoutLagTarget group;
  group.component = "client";
  group.config.topics = {"events"};
  group.config.group_id = "readers";
  group.config.bootstrap_servers = "k1:9092";
  view.kafka_spouts = {zk, group};
  const json spouts = json::parse(RenderTopologyDetail(view, 200))["kafkaSpouts"];
  ASSERT_EQ(spouts.size(), 2u);
  EXPECT_EQ(spouts[0]["spoutId"], "legacy");
  EXPECT_EQ(spouts[0]["offsetsIn"], "zookeeper");
  EXPECT_EQ(spouts[0]["zkConnect"], "zk1:2181");
  EXPECT_EQ(spouts[0]["zkRoot"], "/kafkaspout");
  EXPECT_EQ(spouts[0]["id"], "reader");
  EXPECT_EQ(spouts[0]["topics"], json::array({"events"}));
  EXPECT_EQ(spouts[1]["offsetsIn"], "kafka");
  EXPECT_EQ(spouts[1]["groupId"], "readers");
  EXPECT_EQ(spouts[1]["bootstrapServers"], "k1:9092");
  EXPECT_FALSE(spouts[1].contains("errorInfo"));
}

TEST(RestViewsTest, TopologyDetailOfAKilledTopologyCountsDownItsRemoval) {
  TopologyView view = WordCount();
  view.topology.base.set_status(v1::KILLED);
  view.topology.base.set_remove_at_secs(230);
  EXPECT_EQ(json::parse(RenderTopologyDetail(view, 200))["removeInSeconds"], 30);
  EXPECT_EQ(json::parse(RenderTopologyDetail(view, 300))["removeInSeconds"], 0);
}

TEST(RestViewsTest, ComponentDetailListsItsExecutors) {
  const std::optional<std::string> text = RenderComponentDetail(WordCount(), "sink", 1000);
  ASSERT_TRUE(text.has_value());
  const json body = json::parse(*text);
  EXPECT_EQ(body["componentType"], "bolt");
  EXPECT_EQ(body["topologyId"], "wc-1-100");
  EXPECT_EQ(body["tasks"], 2);
  ASSERT_EQ(body["executorStats"].size(), 1u);
  EXPECT_EQ(body["executorStats"][0]["id"], "[2-3]");
  EXPECT_EQ(body["executorStats"][0]["host"], "host-a");
  EXPECT_EQ(body["executorStats"][0]["uptimeSeconds"], 65);
  EXPECT_EQ(body["executorStats"][0]["executed"], 0) << "no statistics reported yet";
  EXPECT_EQ(body["boltStats"].size(), 4u) << "10 min, 3 h, 1 day and all time";
  EXPECT_FALSE(RenderComponentDetail(WordCount(), "nope", 1000).has_value());
  EXPECT_EQ(body["componentErrors"], json::array()) << "no error reported";
}

// Executor statistics as a worker reports them: `gen` emitted 100 on
// "default" (90 acked, 10 failed, complete latency 2 ms on average), `sink`
// executed 90 from gen:default at 1 ms each and emitted nothing.
std::vector<v1::ExecutorStats> ReportedStats(int64_t scale) {
  v1::ExecutorStats gen;
  gen.set_component("gen");
  gen.set_spout(true);
  gen.set_start_task(1);
  gen.set_end_task(1);
  v1::StreamStats* out = gen.add_outputs();
  out->set_stream("default");
  out->set_emitted(100 * scale);
  out->set_transferred(100 * scale);
  out->set_acked(90 * scale);
  out->set_failed(10 * scale);
  out->set_complete_latency_us_sum(2000 * 9 * scale);
  out->set_complete_latency_samples(9 * scale);
  v1::StreamStats* ack_init = gen.add_outputs();  // a system stream: not shown
  ack_init->set_stream("__ack_init");
  ack_init->set_emitted(100 * scale);
  v1::ExecutorStats sink;
  sink.set_component("sink");
  sink.set_start_task(2);
  sink.set_end_task(3);
  v1::StreamStats* in = sink.add_inputs();
  in->set_component("gen");
  in->set_stream("default");
  in->set_executed(90 * scale);
  in->set_acked(90 * scale);
  in->set_execute_latency_us_sum(1000 * 9 * scale);
  in->set_execute_latency_samples(9 * scale);
  in->set_process_latency_us_sum(1500 * 9 * scale);
  in->set_process_latency_samples(9 * scale);
  return {gen, sink};
}

TEST(RestViewsTest, ComponentStatisticsInStormsFields) {
  TopologyView view = WordCount();
  for (int64_t w : kStatsWindows) view.stats[w] = ReportedStats(w == 0 ? 2 : 1);
  view.window_secs = 600;
  const json body = json::parse(RenderTopologyDetail(view, 200));
  EXPECT_EQ(body["window"], "600");
  EXPECT_EQ(body["windowHint"], "10m 0s");
  const json& gen = body["spouts"][0];
  EXPECT_EQ(gen["emitted"], 100) << "system streams left out";
  EXPECT_EQ(gen["acked"], 90);
  EXPECT_EQ(gen["failed"], 10);
  EXPECT_EQ(gen["completeLatency"], "2.000");
  const json& sink = body["bolts"][0];
  EXPECT_EQ(sink["executed"], 90);
  EXPECT_EQ(sink["executeLatency"], "1.000");
  EXPECT_EQ(sink["processLatency"], "1.500");
  // 90 executions of 1 ms in the 100 s the topology has run.
  EXPECT_EQ(sink["capacity"], "0.001");
  ASSERT_EQ(body["topologyStats"].size(), 4u);
  EXPECT_EQ(body["topologyStats"][0]["window"], "600");
  EXPECT_EQ(body["topologyStats"][0]["acked"], 90);
  EXPECT_EQ(body["topologyStats"][3]["window"], ":all-time");
  EXPECT_EQ(body["topologyStats"][3]["acked"], 180);
  EXPECT_EQ(body["topologyStats"][3]["emitted"], 200);

  const json spout = json::parse(*RenderComponentDetail(view, "gen", 200));
  EXPECT_EQ(spout["spoutSummary"][3]["acked"], 180);
  ASSERT_EQ(spout["outputStats"].size(), 1u);
  EXPECT_EQ(spout["outputStats"][0]["stream"], "default");
  EXPECT_EQ(spout["outputStats"][0]["emitted"], 100);
  EXPECT_EQ(spout["executorStats"][0]["acked"], 90);
  const json bolt = json::parse(*RenderComponentDetail(view, "sink", 200));
  ASSERT_EQ(bolt["inputStats"].size(), 1u);
  EXPECT_EQ(bolt["inputStats"][0]["component"], "gen");
  EXPECT_EQ(bolt["inputStats"][0]["executed"], 90);
  EXPECT_EQ(bolt["boltStats"][3]["executed"], 180);
  EXPECT_EQ(bolt["executorStats"][0]["capacity"], "0.001");
}

TEST(RestViewsTest, VisualizationIsStormsGraph) {
  TopologyView view = WordCount();
  view.topology.base.set_flux_text(R"(name: wc
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
  for (int64_t w : kStatsWindows) view.stats[w] = ReportedStats(1);
  const json graph = json::parse(RenderTopologyVisualization(view, 200));
  EXPECT_EQ(graph["gen"][":type"], "spout");
  EXPECT_EQ(graph["gen"][":transferred"], 100);
  EXPECT_EQ(graph["sink"][":type"], "bolt");
  ASSERT_EQ(graph["sink"][":inputs"].size(), 1u);
  EXPECT_EQ(graph["sink"][":inputs"][0][":component"], "gen");
  EXPECT_EQ(graph["sink"][":inputs"][0][":stream"], "default");
  EXPECT_EQ(graph["sink"][":inputs"][0][":grouping"], "SHUFFLE");
  EXPECT_EQ(graph["sink"][":inputs"][0]["executed"], 90);
}

TEST(RestViewsTest, ErrorsShowAsStormsLastErrorAndComponentErrors) {
  TopologyView view = WordCount();
  const std::string node = view.beats[0].slot.node;
  const int port = view.beats[0].slot.port;
  view.errors = {{"sink", 900, node, port, 3, "first failure"},
                 {"sink", 950, node, port, 4, "second failure"}};
  const json topology = json::parse(RenderTopologyDetail(view, 1000));
  json sink, gen;
  for (const json& b : topology["bolts"]) {
    if (b["boltId"] == "sink") sink = b;
  }
  for (const json& sp : topology["spouts"]) gen = sp;
  ASSERT_FALSE(sink.is_null());
  EXPECT_EQ(sink["lastError"], "second failure");
  EXPECT_EQ(sink["errorPort"], port);
  EXPECT_EQ(sink["errorTime"], 950000) << "ms, as Storm's UI";
  EXPECT_EQ(sink["errorLapsedSecs"], 50);
  EXPECT_FALSE(sink["errorHost"].get<std::string>().empty());
  EXPECT_EQ(gen["lastError"], "") << "a component without errors";

  const json component = json::parse(*RenderComponentDetail(view, "sink", 1000));
  ASSERT_EQ(component["componentErrors"].size(), 2u);
  EXPECT_EQ(component["componentErrors"][0]["error"], "second failure") << "newest first";
  EXPECT_EQ(component["componentErrors"][1]["errorLapsedSecs"], 100);
  for (const char* key : {"errorTime", "errorHost", "errorPort", "error", "errorLapsedSecs",
                          "errorWorkerLogLink"}) {
    EXPECT_TRUE(component["componentErrors"][0].contains(key)) << key;
  }
}

TEST(RestViewsTest, ClusterConfigurationShowsEveryKeyButCredentials) {
  api::Config config;
  config.Set("storm.zookeeper.servers", api::Value(api::ValueList{"zk1", "zk2"}));
  config.Set("storm.zookeeper.port", api::Value(int64_t{2181}));
  config.Set("storm.zookeeper.auth.payload", api::Value("tempest:s3cret"));
  config.Set("tempest.api.token.file", api::Value("/etc/tempest/api-token"));
  config.Set("nimbus.seeds", api::Value(api::ValueList{"n1"}));
  const json body = json::parse(RenderClusterConfiguration(config));
  EXPECT_EQ(body["storm.zookeeper.servers"], json::parse(R"(["zk1","zk2"])"));
  EXPECT_EQ(body["storm.zookeeper.port"], 2181);
  EXPECT_EQ(body["storm.zookeeper.auth.payload"], "<redacted>");
  EXPECT_EQ(body["tempest.api.token.file"], "<redacted>");
  EXPECT_EQ(body.dump().find("s3cret"), std::string::npos);
}

TEST(RestViewsTest, LagShowsWhatNimbusMeasuredWithTheSpoutsBeat) {
  TopologyView view = WordCount();
  // The spout's beat: its latest emitted offset and lag in time, and a stale
  // log head (it stopped fetching) that the answer must not use.
  v1::SpoutPartitionLag* p = view.beats[0].beat.add_kafka_partitions();
  p->set_component("gen");
  p->set_task(4);
  p->set_topic("events");
  p->set_partition(2);
  p->set_committed_offset(10);
  p->set_latest_emitted_offset(12);
  p->set_log_end_offset(15);
  p->set_lag(5);
  p->set_lag_ms(2500);
  spout::SpoutLag gen;
  gen.component = "gen";
  spout::StoredPartitionOffset committed;
  committed.topic = "events";
  committed.partition = 2;
  committed.state = spout::StormKafkaOffset{};
  committed.state->offset = 10;
  committed.log_start_offset = 0;
  committed.log_end_offset = 700;
  committed.lag = 690;
  committed.lag_basis = "committed";
  spout::StoredPartitionOffset unstored;
  unstored.topic = "events";
  unstored.partition = 3;
  unstored.stored = false;
  unstored.log_start_offset = 100;
  unstored.log_end_offset = 400;
  unstored.lag = 300;
  unstored.lag_basis = "earliest";
  spout::StoredPartitionOffset failed;
  failed.topic = "events";
  failed.partition = 4;
  failed.kafka_error = "Local: Timed out";
  gen.partitions = {committed, unstored, failed};
  gen.totals = spout::SumLag(gen.partitions);
  view.kafka_lag.push_back(gen);
  spout::SpoutLag down;
  down.component = "other";
  down.status = absl::UnavailableError("Kafka at 127.0.0.1:1 did not answer");
  view.kafka_lag.push_back(down);

  // Storm's shape: the top-level keys are the spout ids.
  const json body = json::parse(RenderTopologyLag(view));
  const json& rows = body["gen"]["spoutLagResult"];
  EXPECT_EQ(body["gen"]["spoutType"], "KAFKA");
  ASSERT_EQ(rows.size(), 3u) << body.dump();
  EXPECT_EQ(rows[0]["logHeadOffset"], 700);
  EXPECT_EQ(rows[0]["lag"], 690);
  EXPECT_EQ(rows[0]["consumerCommittedOffset"], 10);
  EXPECT_EQ(rows[0]["latestEmittedOffset"], 12);
  EXPECT_EQ(rows[0]["task"], 4);
  EXPECT_EQ(rows[0]["lagSeconds"], 2.5);
  // No stored offset: counted from the start policy.
  EXPECT_EQ(rows[1]["consumerCommittedOffset"], -1);
  EXPECT_EQ(rows[1]["lag"], 300);
  EXPECT_EQ(rows[1]["lagBasis"], "earliest");
  EXPECT_EQ(rows[1]["task"], -1);
  EXPECT_EQ(rows[2]["lag"], -1);
  EXPECT_EQ(rows[2]["errorInfo"], "Kafka: Local: Timed out");
  EXPECT_EQ(body["gen"]["totalLag"], 990);
  EXPECT_EQ(body["gen"]["partitionsWithUnknownLag"], 1);
  // Not measured: the reason, and no total.
  EXPECT_TRUE(body["other"]["totalLag"].is_null()) << body.dump();
  EXPECT_EQ(body["other"]["errorInfo"], "Kafka at 127.0.0.1:1 did not answer");
}

TEST(RestViewsTest, NimbusAndSupervisorSummaries) {
  NimbusPeer peer;
  peer.id = "127.0.0.1:8080";
  peer.leader = true;
  peer.summary.set_launch_time_secs(140);
  const json nimbus = json::parse(RenderNimbusSummary({peer}, 200))["nimbuses"][0];
  EXPECT_EQ(nimbus["status"], "Leader");
  EXPECT_EQ(nimbus["nimbusUpTimeSeconds"], 60);
  v1::SupervisorInfo s;
  s.set_supervisor_id("sup-a");
  s.add_slot_ports(6700);
  s.add_used_ports(6700);
  s.set_uptime_secs(3);
  ClusterView cluster;
  cluster.supervisors = {s};
  const json sup = json::parse(RenderSupervisorSummary(cluster))["supervisors"][0];
  EXPECT_EQ(sup["id"], "sup-a");
  // Used counts assignments (none here); running is what the supervisor says.
  EXPECT_EQ(sup["slotsUsed"], 0);
  EXPECT_EQ(sup["slotsRunning"], 1);
  EXPECT_EQ(sup["uptime"], "3s");
}

TEST(RestViewsTest, MetricsAreGaugesWithTopologyLabelsInOrder) {
  ClusterView view;
  view.leader = true;
  view.supervisors.resize(1);
  view.supervisors[0].set_supervisor_id("sup-a");
  view.supervisors[0].add_slot_ports(6700);
  view.topologies.push_back(WordCount());
  view.topologies[0].topology.base.set_name("w\"c");
  const std::string text = RenderNimbusMetrics(view);
  EXPECT_EQ(text.substr(0, text.find("# HELP tempest_supervisors")),
            "# HELP tempest_nimbus_leader 1 if this nimbus is the leader.\n"
            "# TYPE tempest_nimbus_leader gauge\n"
            "tempest_nimbus_leader 1\n");
  EXPECT_NE(text.find("tempest_topologies{status=\"ACTIVE\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("tempest_topologies{status=\"KILLED\"} 0\n"), std::string::npos);
  EXPECT_NE(
      text.find("tempest_topology_emitted{topology_id=\"wc-1-100\",topology=\"w\\\"c\"} 40\n"),
      std::string::npos);
  EXPECT_NE(text.find("tempest_slots_used 1\n"), std::string::npos);
}

}  // namespace
}  // namespace tempest::nimbus
