// The nimbus REST API over real loopback HTTP: good requests, malformed
// ones (which must get JSON 4xx answers, never crash the server), and a
// standby's answer to writes.

#include "nimbus/rest_api.h"

#include "absl/strings/str_cat.h"
#include "common/net/http_client.h"
#include "nlohmann/json.hpp"
#include "tests/integration/nimbus/nimbus_fixture.h"
#include "tests/support/eventually.h"

namespace tempest::nimbus::testing {
namespace {

using json = nlohmann::json;
using tempest::testing::Eventually;

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
  std::unique_ptr<Nimbus> nimbus_;
};

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
  EXPECT_EQ(list[0]["tasksTotal"], 6);  // one acker for one worker
  EXPECT_EQ(list[0]["workersTotal"], 0);  // no supervisors, nothing assigned

  auto detail = Call("GET", "/api/v1/topology/" + id);
  ASSERT_EQ(detail.status, 200) << detail.body;
  json d = Body(detail);
  EXPECT_EQ(d["spouts"][0]["spoutId"], "gen");
  EXPECT_EQ(d["spouts"][0]["executors"], 2);
  EXPECT_EQ(d["executorsTotal"], 6);

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
  auto r = Call("POST", "/api/v1/topology", json{{"flux", std::string(kDemoFlux)}}.dump(), standby.get());
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

}  // namespace
}  // namespace tempest::nimbus::testing
