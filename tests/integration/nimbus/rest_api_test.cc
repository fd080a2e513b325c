// The nimbus REST API over real loopback HTTP: good requests, malformed
// ones (which must get JSON 4xx answers, never crash the server), and a
// standby's answer to writes.

#include "nimbus/rest_api.h"

#include <chrono>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "common/net/http_client.h"
#include "nlohmann/json.hpp"
#include "tests/integration/nimbus/nimbus_fixture.h"
#include "tests/support/eventually.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::nimbus::testing {
namespace {

using json = nlohmann::json;
using tempest::testing::Eventually;

// Prometheus's own linter (Debian's prometheus package, installed by
// deploy/install-deps.sh) accepts the exposition: names, types, units.
void ExpectPromtoolAccepts(const std::string& exposition) {
  tempest::testing::TempDir dir("tempest-promtool");
  std::ofstream(dir.File("metrics.txt")) << exposition;
  tempest::testing::CommandRun lint = tempest::testing::RunCommand(
      {"/bin/sh", "-c", "promtool check metrics < " + dir.File("metrics.txt")}, dir.File("lint"),
      std::chrono::seconds(60));
  EXPECT_EQ(lint.exit_code, 0) << "promtool check metrics: " << lint.out << lint.err;
}

class RestApiTest : public NimbusTest {
 protected:
  void SetUp() override {
    NimbusTest::SetUp();
    nimbus_ = StartNimbus();
    ASSERT_NE(nimbus_, nullptr);
    ASSERT_TRUE(Eventually(milliseconds(20000), [&] { return nimbus_->IsLeader(); }));
  }
  void TearDown() override {
    nimbus_.reset();
    NimbusTest::TearDown();
  }
  net::HttpClientResponse Call(const std::string& method, const std::string& path,
                               const std::string& body = "", Nimbus* n = nullptr) {
    if (n == nullptr) n = nimbus_.get();
    net::HttpClient client("127.0.0.1", n->port(), milliseconds(20000));
    auto r = client.Request(method, path, body, "application/json");
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : net::HttpClientResponse{};
  }
  json Body(const net::HttpClientResponse& r) {
    json j = json::parse(r.body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.body;
    return j;
  }
  std::string SubmitDemo() {
    auto r = Call("POST", "/api/v1/topology",
                  json{{"flux", std::string(kDemoFlux)}, {"fileName", "demo.yaml"}}.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return Body(r).value("topologyId", "");
  }
  std::string SubmitNamed(const std::string& name) {
    auto r = Call("POST", "/api/v1/topology",
                  json{{"flux", std::string(kDemoFlux)}, {"name", name}}.dump());
    EXPECT_EQ(r.status, 200) << r.body;
    return Body(r).value("topologyId", "");
  }
  std::unique_ptr<Nimbus> nimbus_;
};

TEST_F(RestApiTest, ServesTheWebUiAtRoot) {
  auto page = Call("GET", "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type.rfind("text/html", 0), 0u) << page.content_type;
  EXPECT_NE(page.body.find("<title>Tempest</title>"), std::string::npos);
  // The page only reads endpoints the API serves.
  for (const char* path : {"/api/v1/cluster/summary", "/api/v1/nimbus/summary",
                           "/api/v1/supervisor/summary", "/api/v1/topology/summary"}) {
    EXPECT_NE(page.body.find(path), std::string::npos) << path;
    EXPECT_EQ(Call("GET", path).status, 200) << path;
  }
}

TEST_F(RestApiTest, SubmitListDetailAndStateChanges) {
  auto empty = Call("GET", "/api/v1/topology/summary");
  EXPECT_EQ(empty.status, 200);
  EXPECT_EQ(Body(empty)["topologies"].size(), 0u);

  auto submitted = Call("POST", "/api/v1/topology",
                        json{{"flux", std::string(kDemoFlux)},
                             {"fileName", "demo.yaml"},
                             {"name", "renamed"},
                             {"config", {{"topology.workers", 1}}}}
                            .dump());
  ASSERT_EQ(submitted.status, 200) << submitted.body;
  json s = Body(submitted);
  EXPECT_EQ(s["status"], "success");
  EXPECT_EQ(s["topologyName"], "renamed");
  const std::string id = s["topologyId"];

  json list = Body(Call("GET", "/api/v1/topology/summary"))["topologies"];
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["id"], id);
  EXPECT_EQ(list[0]["name"], "renamed");
  EXPECT_EQ(list[0]["status"], "ACTIVE");
  EXPECT_EQ(list[0]["tasksTotal"], 6);    // one acker for one worker
  EXPECT_EQ(list[0]["workersTotal"], 0);  // no supervisors, nothing assigned

  auto detail = Call("GET", "/api/v1/topology/" + id);
  ASSERT_EQ(detail.status, 200) << detail.body;
  json d = Body(detail);
  EXPECT_EQ(d["spouts"][0]["spoutId"], "gen");
  EXPECT_EQ(d["spouts"][0]["executors"], 2);
  EXPECT_EQ(d["executorsTotal"], 6);
  // Nothing assigned yet: no version, no change.
  EXPECT_EQ(d["assignmentVersion"], 0);
  EXPECT_TRUE(d["lastAssignmentChange"].is_null());

  auto deactivated = Call("POST", "/api/v1/topology/" + id + "/deactivate");
  EXPECT_EQ(deactivated.status, 200) << deactivated.body;
  EXPECT_EQ(Body(deactivated)["topologyOperation"], "deactivate");
  EXPECT_EQ(Body(Call("GET", "/api/v1/topology/" + id))["status"], "INACTIVE");
  EXPECT_EQ(Call("POST", "/api/v1/topology/" + id + "/activate").status, 200);
  auto killed = Call("POST", "/api/v1/topology/" + id + "/kill/300");
  EXPECT_EQ(killed.status, 200) << killed.body;
  EXPECT_EQ(Body(killed)["topologyStatus"], "KILLED");
  // Storm has no activate for a killed topology.
  auto conflict = Call("POST", "/api/v1/topology/" + id + "/activate");
  EXPECT_EQ(conflict.status, 409) << conflict.body;
  EXPECT_EQ(Body(conflict)["errorMessage"], "cannot activate a topology that is KILLED");

  json cluster = Body(Call("GET", "/api/v1/cluster/summary"));
  EXPECT_EQ(cluster["topologies"], 1);
  EXPECT_EQ(cluster["supervisors"], 0);
  json nimbuses = Body(Call("GET", "/api/v1/nimbus/summary"))["nimbuses"];
  ASSERT_EQ(nimbuses.size(), 1u);
  EXPECT_EQ(nimbuses[0]["status"], "Leader");
  EXPECT_EQ(nimbuses[0]["port"], nimbus_->port());
}

TEST_F(RestApiTest, MalformedRequestsGetJsonErrorsAndStoreNothing) {
  struct Case {
    std::string method, path, body;
    int status;
  } cases[] = {
      {"POST", "/api/v1/topology", "{not json", 400},
      {"POST", "/api/v1/topology", "[1,2]", 400},
      {"POST", "/api/v1/topology", "{}", 400},
      {"POST", "/api/v1/topology", R"({"flux": 7})", 400},
      {"POST", "/api/v1/topology", R"({"flux": "name: x", "config": [1]})", 400},
      {"POST", "/api/v1/topology", R"({"flux": "name: x", "inactive": "yes"})", 400},
      {"POST", "/api/v1/topology", R"({"flux": "spouts: [\n  - id: a\n"})", 400},
      {"POST", "/api/v1/topology", "", 400},
      {"GET", "/api/v1/topology/no-such-1-1", "", 404},
      {"POST", "/api/v1/topology/no-such-1-1/kill/0", "", 404},
      {"POST", "/api/v1/topology/no-such-1-1/kill/abc", "", 400},
      {"POST", "/api/v1/topology/no-such-1-1/kill/-3", "", 400},
      {"POST", "/api/v1/topology/no-such-1-1/activate", "", 404},
      {"DELETE", "/api/v1/topology/summary", "", 405},
      {"GET", "/api/v1/nothing-here", "", 404},
  };
  for (const Case& c : cases) {
    auto r = Call(c.method, c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.path << " " << c.body << " -> " << r.body;
    json j = json::parse(r.body, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.body;
    EXPECT_TRUE(j.contains("errorMessage")) << r.body;
  }
  // An unknown class is a validation error naming the class.
  std::string flux = kDemoFlux;
  flux.replace(flux.find("tempest.IdentityBolt"), 20, "com.example.Missing");
  auto invalid = Call("POST", "/api/v1/topology", json{{"flux", flux}}.dump());
  EXPECT_EQ(invalid.status, 400);
  EXPECT_NE(Body(invalid)["errorMessage"].get<std::string>().find("com.example.Missing"),
            std::string::npos);
  // A duplicate name is a conflict.
  SubmitDemo();
  auto dup = Call("POST", "/api/v1/topology", json{{"flux", std::string(kDemoFlux)}}.dump());
  EXPECT_EQ(dup.status, 409) << dup.body;
  EXPECT_EQ(CountChildren(root_ + "/storms"), 1);
  // The server is still fine.
  EXPECT_EQ(Call("GET", "/api/v1/cluster/summary").status, 200);
}

TEST_F(RestApiTest, StandbyAnswersWritesWith503NamingTheLeader) {
  auto standby = StartNimbus();
  ASSERT_NE(standby, nullptr);
  auto r = Call("POST", "/api/v1/topology", json{{"flux", std::string(kDemoFlux)}}.dump(),
                standby.get());
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_EQ(Body(r)["leader"], nimbus_->id());
  const std::string id = SubmitDemo();
  // Reads are served by the standby too.
  auto list = Call("GET", "/api/v1/topology/summary", "", standby.get());
  EXPECT_EQ(list.status, 200);
  EXPECT_EQ(Body(list)["topologies"][0]["id"], id);
  json nimbuses = Body(Call("GET", "/api/v1/nimbus/summary", "", standby.get()))["nimbuses"];
  EXPECT_EQ(nimbuses.size(), 2u);
}

TEST_F(RestApiTest, RebalanceGoodAndMalformedRequests) {
  const std::string id = SubmitNamed("first");
  const std::string other = SubmitNamed("second");
  const std::string base = "/api/v1/topology/" + other + "/rebalance";
  struct Case {
    std::string path, body;
    int status;
    std::string message;  // part of errorMessage
  } cases[] = {
      {base + "/0", "{not json", 400, "not a JSON object"},
      {base + "/0", "[1]", 400, "not a JSON object"},
      {base + "/0", R"({"rebalanceOptions": 3})", 400, "is an object"},
      {base + "/0", R"({"rebalanceOptions": {"numWorkers": "many"}})", 400, "whole number"},
      {base + "/0", R"({"rebalanceOptions": {"numWorkers": 1.5}})", 400, "whole number"},
      {base + "/0", R"({"rebalanceOptions": {"numWorkers": 0}})", 400, "at least 1"},
      {base + "/0", R"({"rebalanceOptions": {"executors": [1]}})", 400, "component: count"},
      {base + "/0", R"({"rebalanceOptions": {"executors": {"sink": "x"}}})", 400, "'sink'"},
      {base + "/0", R"({"rebalanceOptions": {"executors": {"nope": 1}}})", 400,
       "no component 'nope'"},
      {base + "/0", R"({"rebalanceOptions": {"executors": {"sink": 4}}})", 400, "has 3 tasks"},
      {base + "/0", R"({"rebalanceOptions": {"executors": {"sink": 0}}})", 400,
       "at least 1 executor"},
      {base + "/abc", "", 400, "whole number of seconds"},
      {base + "/-1", "", 400, "whole number of seconds"},
      {"/api/v1/topology/no-such-1-1/rebalance/0", "", 404, "no topology"},
  };
  for (const Case& c : cases) {
    auto r = Call("POST", c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.path << " " << c.body << " -> " << r.body;
    json j = Body(r);
    EXPECT_NE(j.value("errorMessage", "").find(c.message), std::string::npos)
        << c.body << " -> " << r.body;
  }
  // Nothing changed.
  EXPECT_EQ(Body(Call("GET", "/api/v1/topology/" + other))["status"], "ACTIVE");

  // Storm UI's body, counts as strings and numbers.
  auto ok =
      Call("POST", "/api/v1/topology/" + id + "/rebalance/3600",
           R"({"rebalanceOptions": {"numWorkers": "3", "executors": {"sink": "2", "gen": 1}}})");
  ASSERT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(Body(ok)["topologyOperation"], "rebalance");
  EXPECT_EQ(Body(ok)["topologyStatus"], "REBALANCING");
  json d = Body(Call("GET", "/api/v1/topology/" + id));
  EXPECT_EQ(d["status"], "REBALANCING");
  EXPECT_GT(d["rebalanceInSeconds"].get<int>(), 3000);
  EXPECT_EQ(d["pendingExecutors"]["sink"], 2);
  EXPECT_EQ(d["pendingExecutors"]["gen"], 1);
  EXPECT_EQ(d["pendingWorkers"], 3);
  EXPECT_TRUE(d["componentExecutors"].empty());
  EXPECT_EQ(d["requestedWorkers"], 2);  // applied only after the wait
  // Rebalancing again is a conflict; the list shows REBALANCING.
  EXPECT_EQ(Call("POST", "/api/v1/topology/" + id + "/rebalance/0").status, 409);
  json list = Body(Call("GET", "/api/v1/topology/summary"))["topologies"];
  EXPECT_EQ(list[0]["status"], "REBALANCING");

  // No wait and no body: the message timeout, nothing else changes.
  auto plain = Call("POST", "/api/v1/topology/" + other + "/rebalance");
  ASSERT_EQ(plain.status, 200) << plain.body;
  json p = Body(Call("GET", "/api/v1/topology/" + other));
  EXPECT_EQ(p["status"], "REBALANCING");
  EXPECT_LE(p["rebalanceInSeconds"].get<int>(), 30);
}

TEST_F(RestApiTest, StatsWorkersComponentPageAndMetricsComeFromTheWorkerbeats) {
  AddSupervisor("sup-a", {6700, 6701});
  const std::string id = SubmitDemo();
  ASSERT_TRUE(Eventually(milliseconds(20000), [&] {
    auto a = StoredAssignment(id);
    return a && a->executors_size() == 7;
  }));
  const v1::Assignment a = *StoredAssignment(id);
  // Each executor's component, as the topology page lists them.
  std::map<std::string, std::string> component_of;
  const json before = Body(Call("GET", "/api/v1/topology/" + id));
  for (const json& e : before["executorStats"]) {
    component_of[e["id"].get<std::string>()] = e["component"].get<std::string>();
  }
  std::map<int, std::vector<v1::ExecutorRange>> by_port;
  const std::map<int, int64_t> counter_of = {{6700, 5}, {6701, 8}};
  // What the executors' statistics add up to (see WriteBeat).
  int64_t spout_acked = 0, spout_emitted = 0, sink_executed = 0;
  for (const auto& e : a.executors()) {
    v1::ExecutorRange r;
    r.set_start_task(e.start_task());
    r.set_end_task(e.end_task());
    r.set_component(component_of[absl::StrCat("[", e.start_task(), "-", e.end_task(), "]")]);
    const int64_t counter = counter_of.at(e.port());
    if (r.component() == "gen") {
      spout_acked += counter;
      spout_emitted += 10 * counter;
    }
    if (r.component() == "sink") sink_executed += counter;
    by_port[e.port()].push_back(r);
  }
  ASSERT_EQ(by_port.size(), 2u);
  ASSERT_GT(spout_acked, 0) << before.dump();
  WriteBeat(id, "sup-a", 6700, by_port[6700], 5);  // emitted 50, acked 5, p99 1005us
  WriteBeat(id, "sup-a", 6701, by_port[6701], 8);  // emitted 80, acked 8, p99 1008us

  auto detail = Call("GET", "/api/v1/topology/" + id);
  ASSERT_EQ(detail.status, 200);
  EXPECT_EQ(detail.body.find("secret"), std::string::npos);
  json d = Body(detail);
  EXPECT_EQ(d["emitted"], 130) << "the workers' totals";
  EXPECT_EQ(d["acked"], 13);
  // Storm's windows from the executors' statistics: a topology younger than
  // every window shows its whole life in each.
  ASSERT_EQ(d["topologyStats"].size(), 4u);
  EXPECT_EQ(d["topologyStats"][0]["window"], "600");
  EXPECT_EQ(d["topologyStats"][3]["window"], ":all-time");
  for (const json& w : d["topologyStats"]) {
    EXPECT_EQ(w["acked"], spout_acked) << w;
    EXPECT_EQ(w["emitted"], spout_emitted) << "bolts emit nothing here: " << w;
    EXPECT_EQ(w["completeLatency"], "1.000") << w;
  }
  ASSERT_EQ(d["spouts"].size(), 1u);
  EXPECT_EQ(d["spouts"][0]["acked"], spout_acked);
  for (const json& b : d["bolts"]) {
    EXPECT_NE(b["boltId"], "__acker") << "system components are not listed";
    if (b["boltId"] == "sink") {
      EXPECT_EQ(b["executed"], sink_executed);
    }
  }
  EXPECT_EQ(Body(Call("GET", "/api/v1/topology/" + id + "?window=600"))["windowHint"], "10m 0s");
  EXPECT_EQ(Call("GET", "/api/v1/topology/" + id + "?window=7").status, 400);
  json graph = Body(Call("GET", "/api/v1/topology/" + id + "/visualization"));
  EXPECT_EQ(graph["gen"][":type"], "spout");
  EXPECT_EQ(graph["sink"][":inputs"][0][":component"], "gen");
  ASSERT_EQ(d["workers"].size(), 2u);
  EXPECT_EQ(d["workers"][0]["supervisorId"], "sup-a");
  EXPECT_EQ(d["workers"][0]["host"], "127.0.0.1");
  EXPECT_EQ(d["workers"][0]["port"], 6700);
  EXPECT_EQ(d["workers"][0]["executors"].size(), by_port[6700].size());
  EXPECT_EQ(d["workers"][0]["uptimeSeconds"], 5);
  EXPECT_TRUE(d["workers"][0].contains("lastBeatSecsAgo"));

  json summary = Body(Call("GET", "/api/v1/topology/summary"))["topologies"][0];
  EXPECT_EQ(summary["emitted"], 130);
  EXPECT_EQ(summary["topologyStats"][0]["acked"], 13);

  // sink's 3 executors are dealt over both workers: both workers count.
  auto comp = Call("GET", "/api/v1/topology/" + id + "/component/sink");
  ASSERT_EQ(comp.status, 200) << comp.body;
  json c = Body(comp);
  EXPECT_EQ(c["componentType"], "bolt");
  EXPECT_EQ(c["executors"], 3);
  ASSERT_EQ(c["executorStats"].size(), 3u);
  for (const json& e : c["executorStats"]) {
    EXPECT_EQ(e["supervisorId"], "sup-a");
    EXPECT_TRUE(e["port"] == 6700 || e["port"] == 6701) << e;
  }
  EXPECT_EQ(c["boltStats"][3]["executed"], sink_executed);
  ASSERT_EQ(c["inputStats"].size(), 1u);
  EXPECT_EQ(c["inputStats"][0]["component"], "gen");
  EXPECT_EQ(c["inputStats"][0]["executed"], sink_executed);
  EXPECT_EQ(Body(Call("GET", "/api/v1/topology/" + id + "/component/gen"))["componentType"],
            "spout");
  EXPECT_EQ(Call("GET", "/api/v1/topology/" + id + "/component/nope").status, 404);
  EXPECT_EQ(Call("GET", "/api/v1/topology/no-such-1-1/component/sink").status, 404);

  auto metrics = Call("GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  const std::string& m = metrics.body;
  for (const std::string& line :
       {std::string("tempest_supervisors 1\n"), std::string("tempest_slots_offered 2\n"),
        std::string("tempest_slots_used 2\n"), std::string("tempest_nimbus_leader 1\n"),
        std::string("tempest_topologies{status=\"ACTIVE\"} 1\n"),
        std::string("tempest_topologies{status=\"KILLED\"} 0\n"),
        absl::StrCat("tempest_topology_emitted{topology_id=\"", id, "\",topology=\"demo\"} 130\n"),
        absl::StrCat("tempest_topology_acked{topology_id=\"", id, "\",topology=\"demo\"} 13\n"),
        absl::StrCat("tempest_topology_complete_latency_p99_seconds{topology_id=\"", id,
                     "\",topology=\"demo\"} 0.001008\n")}) {
    EXPECT_NE(m.find(line), std::string::npos) << line << " not in:\n" << m;
  }
  EXPECT_NE(m.find("# TYPE tempest_topology_emitted gauge"), std::string::npos);
  ExpectPromtoolAccepts(m);
}

}  // namespace
}  // namespace tempest::nimbus::testing
