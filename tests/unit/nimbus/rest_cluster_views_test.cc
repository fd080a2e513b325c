// The cluster-level REST pages rendered from hand-built models: Storm's
// field names, the slots model of the resource fields, the supervisor and
// owner filters, and the per-stream metrics.

#include "nimbus/rest_cluster_views.h"

#include <tuple>

#include "common/coord/cluster_paths.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {
namespace {

using json = nlohmann::json;

v1::SupervisorInfo Supervisor(const std::string& id, const std::string& host, int slots,
                              int used) {
  v1::SupervisorInfo s;
  s.set_supervisor_id(id);
  s.set_hostname(host);
  s.set_uptime_secs(61);
  s.set_version("tempest-0.1.0");
  for (int i = 0; i < slots; ++i) s.add_slot_ports(6700 + i);
  for (int i = 0; i < used; ++i) s.add_used_ports(6700 + i);
  return s;
}

// "wc-1-100" owned by alice, 2 workers requested: spout "gen" [1-1] and the
// acker [4-4] on sup-a:6700, bolt "sink" [2-3] on sup-b:6700; a beat for
// sup-a:6700 only.
TopologyView WordCount() {
  TopologyView v;
  v.topology.id = "wc-1-100";
  v1::StormBase& base = v.topology.base;
  base.set_name("wc");
  base.set_status(v1::ACTIVE);
  base.set_launch_time_secs(100);
  base.set_num_workers(2);
  base.set_num_executors(3);
  base.set_num_tasks(4);
  base.set_owner("alice");
  for (auto [id, spout, executors, tasks] :
       {std::tuple{"__acker", false, 1, 1}, std::tuple{"gen", true, 1, 1},
        std::tuple{"sink", false, 1, 2}}) {
    v1::ComponentSummary* c = base.add_components();
    c->set_id(id);
    c->set_spout(spout);
    c->set_executors(executors);
    c->set_tasks(tasks);
  }
  v1::Assignment a;
  (*a.mutable_node_host())["sup-a"] = "host-a";
  (*a.mutable_node_host())["sup-b"] = "host-b";
  for (auto [start, end, component, node] :
       {std::tuple{1, 1, "gen", "sup-a"}, std::tuple{2, 3, "sink", "sup-b"},
        std::tuple{4, 4, "__acker", "sup-a"}}) {
    v1::ExecutorRange* r = base.add_executors();
    r->set_start_task(start);
    r->set_end_task(end);
    r->set_component(component);
    v1::ExecutorAssignment* e = a.add_executors();
    e->set_start_task(start);
    e->set_end_task(end);
    e->set_node(node);
    e->set_port(6700);
  }
  v.assignment = a;
  StoredBeat b;
  b.name = coord::ClusterPaths::WorkerBeatName("sup-a", 6700);
  b.slot = WorkerSlot{"sup-a", 6700};
  b.parsed = true;
  b.beat.set_uptime_secs(65);
  v.beats.push_back(b);
  return v;
}

ClusterView Cluster() {
  ClusterView view;
  view.now_secs = 200;
  view.nimbuses = 2;
  view.supervisors = {Supervisor("sup-a", "host-a", 2, 1), Supervisor("sup-b", "host-b", 2, 1)};
  view.topologies.push_back(WordCount());
  return view;
}

TEST(RestClusterViewsTest, ClusterSummaryReportsSlotsAsResources) {
  ClusterView view = Cluster();
  view.supervisors.push_back(Supervisor("sup-c", "host-c", 4, 0));
  const json body = json::parse(RenderClusterSummary(view));
  EXPECT_EQ(body["slotsTotal"], 8);
  EXPECT_EQ(body["slotsUsed"], 2);
  EXPECT_EQ(body["slotsFree"], 6);
  EXPECT_EQ(body["schedulerDisplayResource"], false);
  EXPECT_EQ(body["totalMem"], 8.0);
  EXPECT_EQ(body["totalCpu"], 8.0);
  EXPECT_EQ(body["availMem"], 6.0);
  EXPECT_EQ(body["availCpu"], 6.0);
  EXPECT_EQ(body["memAssignedPercentUtil"], 25.0);
  EXPECT_EQ(body["cpuAssignedPercentUtil"], 25.0);
}

TEST(RestClusterViewsTest, ClusterSummaryWithoutSlotsIsZeroPercentNotNan) {
  ClusterView view;
  const json body = json::parse(RenderClusterSummary(view));
  EXPECT_EQ(body["memAssignedPercentUtil"], 0.0);
  EXPECT_EQ(body["availMem"], 0.0);
}

TEST(RestClusterViewsTest, SupervisorSummaryCarriesSlotResources) {
  const json body = json::parse(RenderSupervisorSummary(Cluster()));
  EXPECT_EQ(body["schedulerDisplayResource"], false);
  const json& s = body["supervisors"][0];
  EXPECT_EQ(s["id"], "sup-a");
  EXPECT_EQ(s["totalMem"], 2.0);
  EXPECT_EQ(s["totalCpu"], 2.0);
  EXPECT_EQ(s["usedMem"], 1.0);
  EXPECT_EQ(s["usedCpu"], 1.0);
  EXPECT_EQ(s["uptime"], "1m 1s");
}

TEST(RestClusterViewsTest, NimbusSummaryHasAnEmptyLogLink) {
  NimbusPeer p;
  p.id = "127.0.0.1:8080";
  p.leader = true;
  p.summary.set_host("127.0.0.1");
  p.summary.set_port(8080);
  p.summary.set_launch_time_secs(100);
  const json n = json::parse(RenderNimbusSummary({p}, 130))["nimbuses"][0];
  EXPECT_EQ(n["status"], "Leader");
  EXPECT_EQ(n["nimbusUpTimeSeconds"], 30);
  EXPECT_EQ(n["nimbusLogLink"], "");
}

TEST(RestClusterViewsTest, TopologySummaryHasReplicationAndSlotResources) {
  const json body = json::parse(RenderTopologySummary(Cluster()));
  EXPECT_EQ(body["schedulerDisplayResource"], false);
  const json& t = body["topologies"][0];
  EXPECT_EQ(t["id"], "wc-1-100");
  EXPECT_EQ(t["replicationCount"], 2);
  EXPECT_EQ(t["workersTotal"], 2);
  EXPECT_EQ(t["requestedMemOnHeap"], 2.0);
  EXPECT_EQ(t["requestedMemOffHeap"], 0.0);
  EXPECT_EQ(t["requestedTotalMem"], 2.0);
  EXPECT_EQ(t["requestedCpu"], 2.0);
  EXPECT_EQ(t["assignedMemOnHeap"], 2.0);
  EXPECT_EQ(t["assignedTotalMem"], 2.0);
  EXPECT_EQ(t["assignedCpu"], 2.0);
  EXPECT_EQ(t["uptimeSeconds"], 100);
  // What `tempest list` needs to show a change in progress.
  EXPECT_TRUE(t.contains("assignmentVersion")) << t.dump();
  EXPECT_TRUE(t["workersApplying"].is_number()) << t.dump();
  EXPECT_TRUE(t.contains("lastAssignmentChange")) << t.dump();
}

TEST(RestClusterViewsTest, ResourceFieldsForTheTopologyAndComponentPages) {
  TopologyView view = WordCount();
  view.assignment.reset();
  json body = json::object();
  AddTopologyResources(view, 3, body);
  EXPECT_EQ(body, json::parse(R"({"replicationCount":3,"schedulerDisplayResource":false,
      "requestedMemOnHeap":2.0,"requestedMemOffHeap":0.0,"requestedTotalMem":2.0,
      "requestedCpu":2.0,"assignedMemOnHeap":0.0,"assignedMemOffHeap":0.0,
      "assignedTotalMem":0.0,"assignedCpu":0.0})"));
  json component = json::object();
  AddComponentResources(component);
  EXPECT_EQ(component, json::parse(R"({"requestedMemOnHeap":0.0,"requestedMemOffHeap":0.0,
      "requestedCpu":0.0})"));
}

TEST(RestClusterViewsTest, WorkerSlotCountsTasksPerUserComponent) {
  const TopologyView view = WordCount();
  const json w = WorkerSlotJson(view, "sup-a", 6700, &view.beats[0]);
  EXPECT_EQ(w["supervisorId"], "sup-a");
  EXPECT_EQ(w["host"], "host-a");
  EXPECT_EQ(w["topologyId"], "wc-1-100");
  EXPECT_EQ(w["topologyName"], "wc");
  EXPECT_EQ(w["executorsTotal"], 2) << "the acker runs there too";
  EXPECT_EQ(w["componentNumTasks"], json({{"gen", 1}})) << "system components left out";
  EXPECT_EQ(w["uptimeSeconds"], 65);
  EXPECT_EQ(w["assignedMemOnHeap"], 1.0);
  EXPECT_EQ(w["assignedCpu"], 1.0);
  EXPECT_EQ(w["workerLogLink"], "");
  const json b = WorkerSlotJson(view, "sup-b", 6700, nullptr);
  EXPECT_EQ(b["componentNumTasks"], json({{"sink", 2}}));
  EXPECT_EQ(b["uptimeSeconds"], 0) << "no beat yet";
}

TEST(RestClusterViewsTest, SupervisorDetailByIdByHostAndUnknown) {
  const ClusterView view = Cluster();
  const json by_id = json::parse(*RenderSupervisorDetail(view, "sup-b", "host-a"));
  ASSERT_EQ(by_id["supervisors"].size(), 1u) << "the id wins over the host";
  EXPECT_EQ(by_id["supervisors"][0]["id"], "sup-b");
  ASSERT_EQ(by_id["workers"].size(), 1u);
  EXPECT_EQ(by_id["workers"][0]["componentNumTasks"], json({{"sink", 2}}));
  EXPECT_EQ(by_id["schedulerDisplayResource"], false);

  const json by_host = json::parse(*RenderSupervisorDetail(view, "", "host-a"));
  ASSERT_EQ(by_host["supervisors"].size(), 1u);
  EXPECT_EQ(by_host["workers"][0]["uptimeSeconds"], 65);

  const json all = json::parse(*RenderSupervisorDetail(view, "", ""));
  EXPECT_EQ(all["supervisors"].size(), 2u);
  EXPECT_EQ(all["workers"].size(), 2u);

  EXPECT_FALSE(RenderSupervisorDetail(view, "nope", "").has_value());
  const json no_host = json::parse(*RenderSupervisorDetail(view, "", "elsewhere"));
  EXPECT_EQ(no_host["supervisors"], json::array());
  EXPECT_EQ(no_host["workers"], json::array());
}

TEST(RestClusterViewsTest, HistoryListsEveryTopologyId) {
  EXPECT_EQ(json::parse(RenderHistorySummary(Cluster())), json({{"topo-history", {"wc-1-100"}}}));
}

TEST(RestClusterViewsTest, OwnerResourcesGroupByOwner) {
  ClusterView view = Cluster();
  TopologyView other = WordCount();
  other.topology.id = "other-2-100";
  other.topology.base.set_owner("bob");
  other.assignment.reset();
  view.topologies.push_back(other);
  const json all = json::parse(RenderOwnerResources(view, std::nullopt));
  ASSERT_EQ(all["owners"].size(), 2u);
  const json& alice = all["owners"][0];
  EXPECT_EQ(alice["owner"], "alice");
  EXPECT_EQ(alice["totalTopologies"], 1);
  EXPECT_EQ(alice["totalWorkers"], 2);
  EXPECT_EQ(alice["totalExecutors"], 3);
  EXPECT_EQ(alice["totalTasks"], 4);
  EXPECT_EQ(alice["totalMemoryUsage"], 2.0);
  EXPECT_EQ(alice["memoryGuarantee"], "N/A");
  EXPECT_EQ(all["owners"][1]["totalWorkers"], 0) << "bob's topology is not assigned";
  EXPECT_EQ(all["owners"][1]["totalReqMem"], 2.0);
  const json bob = json::parse(RenderOwnerResources(view, "bob"));
  ASSERT_EQ(bob["owners"].size(), 1u);
  EXPECT_EQ(bob["owners"][0]["owner"], "bob");
  EXPECT_EQ(json::parse(RenderOwnerResources(view, "carol"))["owners"], json::array());
}

TEST(RestClusterViewsTest, TopologyWorkersListsAssignedSlots) {
  const json body = json::parse(RenderTopologyWorkers(WordCount()));
  EXPECT_EQ(body["hostPortList"],
            json::parse(R"([{"host":"host-a","port":6700},{"host":"host-b","port":6700}])"));
  EXPECT_TRUE(body["logviewerPort"].is_null());
  TopologyView unassigned = WordCount();
  unassigned.assignment.reset();
  EXPECT_EQ(json::parse(RenderTopologyWorkers(unassigned))["hostPortList"], json::array());
}

v1::StreamStats Stream(const std::string& component, const std::string& stream) {
  v1::StreamStats s;
  s.set_component(component);
  s.set_stream(stream);
  return s;
}

TEST(RestClusterViewsTest, MetricsAreByStreamInStormsShape) {
  TopologyView view = WordCount();
  v1::ExecutorStats gen;
  gen.set_component("gen");
  gen.set_spout(true);
  v1::StreamStats out = Stream("", "default");
  out.set_emitted(10);
  out.set_transferred(10);
  out.set_acked(8);
  out.set_complete_latency_us_sum(6000);
  out.set_complete_latency_samples(4);
  *gen.add_outputs() = out;
  v1::StreamStats init = Stream("", "__ack_init");
  init.set_emitted(10);
  *gen.add_outputs() = init;
  v1::ExecutorStats sink;
  sink.set_component("sink");
  v1::StreamStats in = Stream("gen", "default");
  in.set_executed(9);
  in.set_acked(8);
  in.set_failed(1);
  in.set_execute_latency_us_sum(300);
  in.set_execute_latency_samples(3);
  in.set_process_latency_us_sum(1000);
  in.set_process_latency_samples(2);
  *sink.add_inputs() = in;
  // Two executors of one bolt add up.
  const std::vector<v1::ExecutorStats> stats = {gen, sink, sink};

  const json body = json::parse(RenderTopologyMetrics(view, stats, 0, /*include_sys=*/false));
  EXPECT_EQ(body["window"], ":all-time");
  EXPECT_EQ(body["windowHint"], "All time");
  EXPECT_EQ(body["window-hint"], "All time");
  ASSERT_EQ(body["spouts"].size(), 1u);
  const json& s = body["spouts"][0];
  EXPECT_EQ(s["id"], "gen");
  EXPECT_EQ(s["emitted"], json::parse(R"([{"stream_id":"default","value":10}])"))
      << "system streams only with sys=1";
  EXPECT_EQ(s["acked"], json::parse(R"([{"stream_id":"default","value":8}])"));
  EXPECT_EQ(s["failed"], json::array());
  EXPECT_EQ(s["complete_ms_avg"], json::parse(R"([{"stream_id":"default","value":"1.500"}])"));
  ASSERT_EQ(body["bolts"].size(), 1u) << "the acker only with sys=1";
  const json& b = body["bolts"][0];
  EXPECT_EQ(b["id"], "sink");
  EXPECT_EQ(b["executed"],
            json::parse(R"([{"component_id":"gen","stream_id":"default","value":18}])"));
  EXPECT_EQ(b["acked"], json::parse(R"([{"component_id":"gen","stream_id":"default","value":16}])"));
  EXPECT_EQ(b["failed"], json::parse(R"([{"component_id":"gen","stream_id":"default","value":2}])"));
  EXPECT_EQ(b["process_ms_avg"],
            json::parse(R"([{"component_id":"gen","stream_id":"default","value":"0.500"}])"));
  EXPECT_EQ(b["executed_ms_avg"],
            json::parse(R"([{"component_id":"gen","stream_id":"default","value":"0.100"}])"));
  EXPECT_EQ(b["emitted"], json::array());

  const json sys = json::parse(RenderTopologyMetrics(view, stats, 0, /*include_sys=*/true));
  EXPECT_EQ(sys["bolts"].size(), 2u);
  EXPECT_EQ(sys["spouts"][0]["emitted"].size(), 2u);
}

TEST(RestClusterViewsTest, MetricsOfAWindowWithoutStatisticsAreEmptyLists) {
  const json body = json::parse(RenderTopologyMetrics(WordCount(), {}, 600, false));
  EXPECT_EQ(body["window"], "600");
  EXPECT_EQ(body["windowHint"], "10m 0s");
  EXPECT_EQ(body["spouts"][0]["emitted"], json::array());
  EXPECT_EQ(body["bolts"][0]["executed"], json::array());
}

}  // namespace
}  // namespace tempest::nimbus
