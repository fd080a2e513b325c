// Field parity with Storm's UI REST API documentation: a real cluster
// (ZooKeeper, nimbus, two supervisors and their workers) runs a topology
// whose statistics and errors are populated, and every GET endpoint that
// storm_ui_rest_fields.json lists (Storm's documented field names) is asked
// for; each documented field that is missing is one line of the failure,
// "GET <endpoint>  <path>.<field>". The endpoints the data file excludes
// must answer 404 and be named, with their reason, in nimbus/README.md and
// docs/user-guide.md.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/os/loopback.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json FieldsData() {
  return json::parse(ReadText(SourceDir() + "/tests/system/rest_api/storm_ui_rest_fields.json"),
                     nullptr, false);
}

// The pages whose statistics fields are rendered by RenderTopologyDetail and
// RenderComponentDetail; StatisticsPages checks them, ClusterPages the rest.
bool IsStatisticsPage(const std::string& endpoint) {
  return endpoint == "/api/v1/topology/:id" || endpoint.find("/component/") != std::string::npos;
}

class StormRestFieldsTest : public ClusterFixture {
 protected:
  // (HTTP status, parsed body) of a GET on the nimbus.
  std::pair<int, json> Get(const std::string& target) {
    const std::string address = AnyNimbus();
    const size_t colon = address.rfind(':');
    auto response = os::TcpRequest(
        address.substr(0, colon), std::stoi(address.substr(colon + 1)),
        absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: ", address, "\r\nConnection: close\r\n\r\n"),
        milliseconds(10000));
    if (!response.ok() || response->size() < 12) return {0, json()};
    const int status = std::atoi(response->substr(9, 3).c_str());
    const size_t body = response->find("\r\n\r\n");
    json j = body == std::string::npos ? json()
                                       : json::parse(response->substr(body + 4), nullptr, false);
    return {status, j.is_discarded() ? json() : j};
  }

  // Starts the cluster and a topology with a reliable spout ("numbers"), a
  // bolt that re-emits ("identity") and a Python bolt that reports an error
  // every 25th tuple ("narrow") on two workers, and waits until its
  // workers beat, its statistics count acks and the errors are published.
  void StartTopology() {
    StartCluster({});
    ASSERT_FALSE(HasFatalFailure());
    const std::string resources = ErringBoltResources();
    std::ofstream(dir_.File("fields.yaml")) << R"(name: fields
config:
  topology.workers: 2
spouts:
  - id: numbers
    className: tempest.SequenceSpout
    properties:
      - name: count
        value: -1
      - name: rate
        value: 200
      - name: reliable
        value: true
bolts:
  - id: identity
    className: tempest.IdentityBolt
    parallelism: 2
  - id: narrow
    className: org.apache.storm.flux.wrappers.bolts.FluxShellBolt
    constructorArgs:
      - ["python3", "erring_bolt.py"]
      - []
streams:
  - from: numbers
    to: identity
    grouping:
      type: SHUFFLE
  - from: identity
    to: narrow
    grouping:
      type: SHUFFLE
)";
    CommandRun submit = Tempest(
        {"submit", dir_.File("fields.yaml"), "--resources", resources, "--until-running"});
    ASSERT_EQ(submit.exit_code, 0) << submit.err;
    id_ = submit.out.substr(0, submit.out.find('\n'));
    ASSERT_FALSE(id_.empty());
    // Populated, as far as the pages' own names tell; a page that never
    // gets there still has its fields checked below.
    const bool ready = Eventually(seconds(120), [&] {
      const json t = Get("/api/v1/topology/" + id_).second;
      const json m = Get("/api/v1/topology/" + id_ + "/metrics").second;
      const json c = Get("/api/v1/topology/" + id_ + "/component/narrow").second;
      const bool workers = t.is_object() && t.value("workers", json::array()).size() == 2;
      bool acked = false;
      if (m.is_object()) {
        for (const json& s : m.value("spouts", json::array())) {
          acked = acked || !s.value("acked", json::array()).empty();
        }
      }
      const bool errors = c.is_object() && !c.value("componentErrors", json::array()).empty();
      return workers && acked && errors;
    }, milliseconds(1000));
    if (!ready) std::printf("the topology's pages did not all fill within 120 s\n");
  }

  // What replaces each :name of the data file's endpoints: every value is
  // tried (one GET each).
  std::map<std::string, std::vector<std::string>> Substitutions() {
    std::map<std::string, std::vector<std::string>> subs;
    subs[":id"] = {id_};
    for (const json& s : Get("/api/v1/supervisor/summary").second.value("supervisors", json::array())) {
      subs[":supervisor"].push_back(s.value("id", ""));
      if (subs[":host"].empty()) subs[":host"].push_back(s.value("host", ""));
    }
    for (const json& t : Get("/api/v1/topology/summary").second.value("topologies", json::array())) {
      if (t.value("id", "") == id_) subs[":owner"] = {t.value("owner", "")};
    }
    subs[":spout"] = {"numbers"};
    subs[":bolt"] = {"identity", "narrow"};
    return subs;
  }

  // Checks every endpoint `select` picks; returns one line per missing
  // field (or refused request, or array that was empty everywhere).
  std::vector<std::string> MissingFields(const std::function<bool(const std::string&)>& select) {
    const json data = FieldsData();
    EXPECT_TRUE(data.is_object()) << "storm_ui_rest_fields.json does not parse";
    if (!data.is_object()) return {"storm_ui_rest_fields.json"};
    const auto subs = Substitutions();
    std::vector<std::string> missing;
    for (const auto& [endpoint, spec] : data["endpoints"].items()) {
      if (!select(endpoint)) continue;
      // Every concrete URL of the endpoint.
      std::vector<std::string> targets = {endpoint};
      for (const auto& [name, values] : subs) {
        std::vector<std::string> next;
        for (const std::string& t : targets) {
          if (t.find(name) == std::string::npos) {
            next.push_back(t);
            continue;
          }
          for (const std::string& v : values) next.push_back(absl::StrReplaceAll(t, {{name, v}}));
        }
        targets = std::move(next);
      }
      std::set<std::string> lines;
      std::map<std::string, int> elements;  // path -> elements seen on every target
      for (const std::string& target : targets) {
        const auto [status, body] = Get(target);
        if (status != 200 || !body.is_object()) {
          lines.insert(absl::StrCat("GET ", endpoint, "  (", target, " answered HTTP ", status,
                                    status == 200 ? " without a JSON object" : "", ")"));
          continue;
        }
        if (spec["top"].empty() && body.empty()) {
          lines.insert(absl::StrCat("GET ", endpoint, "  (an empty object)"));
        }
        for (const auto& [path, fields] : spec.items()) {
          if (path == "mayBeEmpty") continue;
          // The objects at `path`: "top" is the body; "a[].b[]" every
          // element of every element's b.
          std::vector<json> objects = {body};
          if (path != "top") {
            for (const std::string& step : std::vector<std::string>(absl::StrSplit(path, '.'))) {
              const std::string key = step.substr(0, step.size() - 2);
              std::vector<json> next;
              for (const json& o : objects) {
                if (!o.is_object() || !o.contains(key) || !o[key].is_array()) continue;
                for (const json& e : o[key]) next.push_back(e);
              }
              objects = std::move(next);
            }
            elements[path] += static_cast<int>(objects.size());
          }
          for (const json& o : objects) {
            for (const json& f : fields) {
              const std::string field = f.get<std::string>();
              if (!o.is_object() || !o.contains(field)) {
                lines.insert(absl::StrCat("GET ", endpoint, "  ", path, ".", field));
              }
            }
          }
        }
      }
      const json may_be_empty = spec.value("mayBeEmpty", json::array());
      for (const auto& [path, count] : elements) {
        if (count == 0 && std::find(may_be_empty.begin(), may_be_empty.end(), path) ==
                              may_be_empty.end()) {
          lines.insert(absl::StrCat("GET ", endpoint, "  ", path,
                                    " (no element on any page: its fields were not checked)"));
        }
      }
      missing.insert(missing.end(), lines.begin(), lines.end());
    }
    return missing;
  }

  std::string id_;
};

TEST_F(StormRestFieldsTest, ClusterPagesServeEveryDocumentedField) {
  StartTopology();
  ASSERT_FALSE(HasFatalFailure());
  const std::vector<std::string> missing =
      MissingFields([](const std::string& e) { return !IsStatisticsPage(e); });
  EXPECT_TRUE(missing.empty()) << missing.size() << " documented field(s) missing:\n"
                               << absl::StrJoin(missing, "\n");

  // Each excluded endpoint is really not served, and both documents name it
  // with its reason.
  const json data = FieldsData();
  const std::string readme = ReadText(SourceDir() + "/nimbus/README.md");
  const std::string guide = ReadText(SourceDir() + "/docs/user-guide.md");
  for (const auto& [endpoint, reason] : data["excluded"].items()) {
    const std::string target =
        absl::StrReplaceAll(endpoint, {{":id", id_},
                                       {":host-port", "127.0.0.1:6700"},
                                       {":timeout", "10"},
                                       {":func", "f"},
                                       {":args", "a"}});
    EXPECT_EQ(Get(target).first, 404) << endpoint << " is listed as excluded but is served";
    const std::string why = reason.get<std::string>();
    EXPECT_FALSE(why.empty()) << endpoint;
    EXPECT_NE(readme.find(endpoint), std::string::npos) << "nimbus/README.md omits " << endpoint;
    EXPECT_NE(readme.find(why), std::string::npos)
        << "nimbus/README.md omits the reason for " << endpoint;
    EXPECT_NE(guide.find(endpoint), std::string::npos) << "docs/user-guide.md omits " << endpoint;
  }
}

// The values behind the new fields and endpoints, on the same cluster: 2
// supervisors, the topology on 2 slots.
TEST_F(StormRestFieldsTest, ClusterPagesAgreeWithTheRunningTopology) {
  StartTopology();
  ASSERT_FALSE(HasFatalFailure());
  const json cluster = Get("/api/v1/cluster/summary").second;
  EXPECT_EQ(cluster["schedulerDisplayResource"], false);
  // Slots as resources: the totals are the slot counts.
  const double slots = cluster["slotsTotal"].get<double>();
  ASSERT_GT(slots, 0) << cluster.dump();
  EXPECT_EQ(cluster["totalMem"], slots) << cluster.dump();
  EXPECT_EQ(cluster["totalCpu"], slots) << cluster.dump();
  EXPECT_EQ(cluster["availCpu"], cluster["slotsFree"].get<double>()) << cluster.dump();
  EXPECT_EQ(cluster["slotsUsed"], 2) << cluster.dump();
  EXPECT_DOUBLE_EQ(cluster["memAssignedPercentUtil"].get<double>(), 100.0 * 2 / slots)
      << cluster.dump();

  const json summary = Get("/api/v1/topology/summary").second;
  ASSERT_EQ(summary["topologies"].size(), 1u) << summary.dump();
  const json& t = summary["topologies"][0];
  EXPECT_EQ(t["replicationCount"], 1);
  EXPECT_EQ(t["requestedTotalMem"], 2.0);
  EXPECT_EQ(t["assignedCpu"], 2.0);

  // The assignment's version and what its last write changed; every worker
  // row says which version it runs.
  const json page = Get("/api/v1/topology/" + id_).second;
  ASSERT_GE(page["assignmentVersion"].get<int64_t>(), 1) << page.dump();
  const json& change = page["lastAssignmentChange"];
  ASSERT_TRUE(change.is_object()) << page.dump();
  if (page["assignmentVersion"] == 1) {
    EXPECT_EQ(change["reason"], "first");
    EXPECT_EQ(change["kept"], 0);
    EXPECT_GT(change["started"].get<int>(), 0);
  }
  EXPECT_GT(change["time"].get<int64_t>(), 0);
  for (const json& w : page["workers"]) EXPECT_TRUE(w.contains("assignmentVersion")) << w.dump();

  const json history = Get("/api/v1/history/summary").second;
  EXPECT_EQ(history["topo-history"], json::array({id_})) << history.dump();

  const json workers = Get("/api/v1/topology-workers/" + id_).second;
  ASSERT_EQ(workers["hostPortList"].size(), 2u) << workers.dump();
  EXPECT_TRUE(workers["logviewerPort"].is_null());

  // Every slot of the topology on some supervisor's page, and its tasks
  // adding up to the topology's user tasks (numbers 1, identity 2, narrow 1).
  int rows = 0, tasks = 0;
  const json supervisors = Get("/api/v1/supervisor/summary").second["supervisors"];
  ASSERT_EQ(supervisors.size(), 2u);
  for (const json& s : supervisors) {
    const auto [status, page] = Get("/api/v1/supervisor?id=" + s["id"].get<std::string>());
    ASSERT_EQ(status, 200) << page.dump();
    ASSERT_EQ(page["supervisors"].size(), 1u);
    for (const json& w : page["workers"]) {
      EXPECT_EQ(w["topologyId"], id_);
      EXPECT_EQ(w["topologyName"], "fields");
      EXPECT_EQ(w["supervisorId"], s["id"]);
      EXPECT_EQ(w["host"], s["host"]);
      for (const auto& [component, n] : w["componentNumTasks"].items()) tasks += n.get<int>();
      ++rows;
    }
  }
  EXPECT_EQ(rows, 2);
  EXPECT_EQ(tasks, 4);
  EXPECT_EQ(Get("/api/v1/supervisor?id=no-such-supervisor").first, 404);
  EXPECT_EQ(Get("/api/v1/supervisor?host=no-such-host").second["workers"], json::array());

  const json owners = Get("/api/v1/owner-resources").second;
  ASSERT_EQ(owners["owners"].size(), 1u) << owners.dump();
  EXPECT_EQ(owners["owners"][0]["totalWorkers"], 2);
  EXPECT_EQ(Get("/api/v1/owner-resources/nobody-at-all").second["owners"], json::array());

  // The metrics page: the spout's trees acked on its default stream, the
  // acker only with sys=1, Storm's windows, one clear error otherwise.
  const json metrics = Get("/api/v1/topology/" + id_ + "/metrics").second;
  EXPECT_EQ(metrics["window"], ":all-time");
  ASSERT_EQ(metrics["spouts"].size(), 1u) << metrics.dump();
  EXPECT_EQ(metrics["spouts"][0]["id"], "numbers");
  bool acked = false;
  for (const json& a : metrics["spouts"][0]["acked"]) {
    acked = acked || (a["stream_id"] == "default" && a["value"].get<int64_t>() > 0);
  }
  EXPECT_TRUE(acked) << metrics.dump();
  EXPECT_EQ(metrics["bolts"].size(), 2u) << metrics.dump();
  EXPECT_EQ(Get("/api/v1/topology/" + id_ + "/metrics?sys=1").second["bolts"].size(), 3u);
  const json ten = Get("/api/v1/topology/" + id_ + "/metrics?window=600").second;
  EXPECT_EQ(ten["window"], "600");
  EXPECT_EQ(ten["windowHint"], "10m 0s");
  EXPECT_EQ(Get("/api/v1/topology/" + id_ + "/metrics?window=7").first, 400);
  EXPECT_EQ(Get("/api/v1/topology/no-such-1-1/metrics").first, 404);
  EXPECT_EQ(Get("/api/v1/topology-workers/no-such-1-1").first, 404);
  // Bytes that are not UTF-8 get one JSON answer, never a crash.
  const auto [bad_status, bad_body] = Get("/api/v1/supervisor?id=%FF%FE%00x");
  EXPECT_EQ(bad_status, 404);
  EXPECT_TRUE(bad_body.contains("errorMessage")) << bad_body.dump();
  EXPECT_EQ(Get("/api/v1/owner-resources/%FF%C0").second["owners"], json::array());
  EXPECT_EQ(Get("/api/v1/cluster/summary").first, 200) << "nimbus still serves";
}

TEST_F(StormRestFieldsTest, StatisticsPagesServeEveryDocumentedField) {
  StartTopology();
  ASSERT_FALSE(HasFatalFailure());
  const std::vector<std::string> missing = MissingFields(IsStatisticsPage);
  EXPECT_TRUE(missing.empty()) << missing.size() << " documented field(s) missing:\n"
                               << absl::StrJoin(missing, "\n");
}

}  // namespace
}  // namespace tempest::testing
