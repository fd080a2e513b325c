// The REST API and the CLI against what a hostile client sends
// (docs/security.md, "REST API hardening"): a real `tempest nimbus`, raw
// HTTP as curl sends it, and the real CLI. Covers strict security settings,
// the Host check while reads are open, the headers every answer carries,
// duplicate Authorization headers, owners with control characters, the
// rebalance limits, the tempest.api.* limit keys and reads answered from the
// last known state while ZooKeeper is stopped.

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "common/net/http_client.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tempest/v1/cluster.pb.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/zk_ensemble.h"
#include "tests/system/nimbus/nimbus_process_fixture.h"

namespace tempest::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class RestHardeningTest : public NimbusProcessTest {
 protected:
  net::HttpClient Client() const {
    const size_t colon = address_.rfind(':');
    return net::HttpClient(address_.substr(0, colon), std::stoi(address_.substr(colon + 1)),
                           seconds(30));
  }
  std::string Port() const { return address_.substr(address_.rfind(':') + 1); }

  // curl with the given extra arguments against this nimbus's `target`;
  // stdout holds the response head (-i) and body.
  CommandRun Curl(const std::vector<std::string>& args, const std::string& target) {
    std::vector<std::string> argv = {"curl", "-s", "-i", "--max-time", "30"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("http://" + address_ + target);
    CommandRun r = RunCommand(argv, dir_.File("curl"), milliseconds(60000));
    EXPECT_TRUE(r.finished);
    return r;
  }

  // Submits examples/generator-verifier.yaml with the CLI; its topology id.
  std::string SubmitExample() {
    CommandRun submitted = Tempest({"submit", SourceDir() + "/examples/generator-verifier.yaml"});
    EXPECT_EQ(submitted.exit_code, 0) << submitted.err;
    return submitted.out.substr(0, submitted.out.find('\n'));
  }

  // Runs `tempest nimbus` with `yaml` (after the usual preamble) and `extra`
  // arguments, expecting it to refuse to start. The config is refused before
  // ZooKeeper is contacted, so none runs at the address given.
  CommandRun NimbusRefusing(const std::string& yaml, const std::vector<std::string>& extra) {
    std::ofstream(dir_.File("bad.yaml"))
        << DaemonConfigPreamble("127.0.0.1:1") << "ui.host: 127.0.0.1\nui.port: 0\n" << yaml;
    std::vector<std::string> argv = {TempestBinary(), "nimbus", "--config", dir_.File("bad.yaml")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    CommandRun r = RunCommand(argv, dir_.File("bad-nimbus"), milliseconds(60000));
    EXPECT_TRUE(r.finished) << "nimbus started with " << yaml;
    return r;
  }
};

// Finding: `tempest.api.auth.reads: maybe` (or 1, 2) silently meant false.
TEST_F(RestHardeningTest, AnUnclearSecuritySettingRefusesToStartWithOneLine) {
  struct Case {
    std::string yaml;
    std::vector<std::string> extra;
    std::string key;
    std::string value;
  };
  const std::vector<Case> cases = {
      {"tempest.api.auth.reads: maybe\n", {}, "tempest.api.auth.reads", "maybe"},
      {"tempest.api.auth.reads: 1\n", {}, "tempest.api.auth.reads", "1"},
      {"", {"-c", "tempest.api.auth.reads=2"}, "tempest.api.auth.reads", "2"},
      {"tempest.api.token.file: [a, b]\n", {}, "tempest.api.token.file", "a"},
      {"tempest.api.max.body.bytes: 12\n", {}, "tempest.api.max.body.bytes", "12"},
  };
  for (const Case& c : cases) {
    CommandRun r = NimbusRefusing(c.yaml, c.extra);
    EXPECT_NE(r.exit_code, 0) << c.yaml << r.out;
    EXPECT_EQ(r.out.find("nimbus="), std::string::npos) << c.yaml << r.out;
    std::vector<std::string> lines;
    for (size_t at = 0; at < r.err.size();) {
      const size_t nl = r.err.find('\n', at);
      const std::string line = r.err.substr(at, nl == std::string::npos ? nl : nl - at);
      if (line.find(c.key) != std::string::npos) lines.push_back(line);
      at = nl == std::string::npos ? r.err.size() : nl + 1;
    }
    ASSERT_EQ(lines.size(), 1u) << c.yaml << r.err;
    EXPECT_NE(lines[0].find(c.value), std::string::npos) << lines[0];
  }
}

TEST_F(RestHardeningTest, OpenReadsAcceptOnlyKnownHostNames) {
  StartNimbus("tempest.api.allowed.hosts: [nimbus.example.org]\n");
  for (const std::string& host :
       std::vector<std::string>{"127.0.0.1:" + Port(), "localhost:" + Port(), "localhost",
                                "[::1]:" + Port(), "NIMBUS.example.org:" + Port()}) {
    net::HttpClient client = Client();
    client.set_header("Host", host);
    auto reply = client.Get("/api/v1/cluster/summary");
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(reply->status, 200) << host << ": " << reply->body;
  }
  // A page of another site whose name now resolves to nimbus (DNS
  // rebinding) sends its own name: refused, for the UI page too.
  for (const std::string target : {"/api/v1/cluster/summary", "/api/v1/topology/summary", "/"}) {
    CommandRun r = Curl({"-H", "Host: evil.example:" + Port()}, target);
    EXPECT_EQ(r.out.rfind("HTTP/1.1 403", 0), 0u) << target << ": " << r.out;
    EXPECT_NE(r.out.find("tempest.api.allowed.hosts"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\"topologies\""), std::string::npos) << r.out;
  }
}

TEST_F(RestHardeningTest, EveryAnswerForbidsFramingSniffingAndForeignScripts) {
  StartNimbus("");
  for (const std::string target : {"/", "/api/v1/cluster/summary", "/api/v1/no-such-page"}) {
    auto reply = Client().Get(target);
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(reply->headers["x-frame-options"], "DENY") << target;
    EXPECT_EQ(reply->headers["x-content-type-options"], "nosniff") << target;
    const std::string csp = reply->headers["content-security-policy"];
    EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << target << ": " << csp;
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << target << ": " << csp;
    if (target == "/") {
      // The page's own script by its hash, nothing inline besides.
      EXPECT_NE(csp.find("script-src 'sha256-"), std::string::npos) << csp;
      EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
      EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << csp;
      EXPECT_EQ(reply->body.find("onclick="), std::string::npos);
    }
  }
}

TEST_F(RestHardeningTest, TwoAuthorizationHeadersAreRefused) {
  StartNimbus("");
  CommandRun r = Curl({"-H", "Authorization: Bearer one", "-H", "Authorization: Bearer two"},
                      "/api/v1/cluster/summary");
  EXPECT_EQ(r.out.rfind("HTTP/1.1 400", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("more than one Authorization header"), std::string::npos) << r.out;
  CommandRun one = Curl({"-H", "Authorization: Bearer one"}, "/api/v1/cluster/summary");
  EXPECT_EQ(one.out.rfind("HTTP/1.1 200", 0), 0u) << one.out;
}

TEST_F(RestHardeningTest, OwnersWithControlCharactersAreRefusedAndPrintedEscaped) {
  StartNimbus("");
  std::ifstream flux_in(SourceDir() + "/examples/generator-verifier.yaml");
  const std::string flux((std::istreambuf_iterator<char>(flux_in)), {});
  for (const std::string& owner :
       std::vector<std::string>{std::string("mal\x1b[2Jlory"), std::string("a\nb")}) {
    const nlohmann::json body = {{"flux", flux}, {"owner", owner}};
    auto reply = Client().Post("/api/v1/topology", body.dump());
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_EQ(reply->status, 400) << reply->body;
    EXPECT_NE(reply->body.find("control character"), std::string::npos) << reply->body;
  }
  CommandRun listed = Tempest({"list", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_TRUE(nlohmann::json::parse(listed.out)["topologies"].empty()) << listed.out;

  // A record written before owners were checked (planted here in ZooKeeper)
  // is printed escaped by `tempest list`.
  const std::string id = SubmitExample();
  auto session = ConnectedZkSession(zk_->ConnectString());
  ASSERT_TRUE(session.ok()) << session.status();
  const std::string path = "/tempest-system/storms/" + id;
  auto node = (*session)->Get(path);
  ASSERT_TRUE(node.ok()) << node.status();
  v1::StormBase base;
  ASSERT_TRUE(base.ParseFromString(node->data));
  base.set_owner("eve\x1b]0;owned\x07\nforged line");
  ASSERT_TRUE((*session)->Set(path, base.SerializeAsString()).ok());
  CommandRun table = Tempest({"list"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.find('\x1b'), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("\nforged line"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("eve\\x1b]0;owned\\x07\\x0aforged line"), std::string::npos)
      << table.out;
}

TEST_F(RestHardeningTest, RebalanceIsHeldToTheSubmissionLimits) {
  StartNimbus("");
  SubmitExample();
  CommandRun r = Tempest({"rebalance", "generator-verifier", "-n", "100000"});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.err.find("tempest.limits.max.workers"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1000"), std::string::npos) << r.err;
  CommandRun listed = Tempest({"list", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(nlohmann::json::parse(listed.out)["topologies"][0]["status"], "ACTIVE") << listed.out;
}

TEST_F(RestHardeningTest, ApiLimitKeysAreHonoured) {
  StartNimbus("tempest.api.max.body.bytes: 1024\ntempest.api.max.header.bytes: 2048\n");
  auto big = Client().Post("/api/v1/topology", std::string(4096, ' '));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->status, 413) << big->body;
  net::HttpClient client = Client();
  client.set_header("X-Padding", std::string(4096, 'p'));
  auto head = client.Get("/api/v1/cluster/summary");
  ASSERT_TRUE(head.ok()) << head.status();
  EXPECT_EQ(head->status, 431) << head->body;
  auto small = Client().Get("/api/v1/cluster/summary");
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->status, 200) << small->body;
}

TEST_F(RestHardeningTest, ReadsAnswerFromTheLastKnownStateWhileZooKeeperIsStopped) {
  StartNimbus("");
  const std::string id = SubmitExample();
  auto fresh = Client().Get("/api/v1/topology/summary");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_EQ(fresh->status, 200) << fresh->body;
  EXPECT_FALSE(nlohmann::json::parse(fresh->body).contains("stale")) << fresh->body;
  EXPECT_EQ(fresh->headers.count("x-tempest-stale"), 0u);

  zk_->Stop(0);
  // Every read is answered (the client gives up after 30 s): the one read
  // before from the last known state, marked stale; one never read, 503.
  net::HttpClientResponse stale;
  ASSERT_TRUE(Eventually(milliseconds(60000), [&] {
    auto r = Client().Get("/api/v1/topology/summary");
    if (!r.ok()) ADD_FAILURE() << "no answer while ZooKeeper is stopped: " << r.status();
    if (!r.ok() || r->status != 200 || r->headers.count("x-tempest-stale") == 0) return false;
    stale = *r;
    return true;
  }));
  nlohmann::json body = nlohmann::json::parse(stale.body);
  EXPECT_EQ(body["stale"], true) << stale.body;
  EXPECT_TRUE(body["asOf"].is_number_integer()) << stale.body;
  EXPECT_TRUE(body["staleSinceSecs"].is_number_integer()) << stale.body;
  EXPECT_NE(stale.body.find(id), std::string::npos) << stale.body;
  EXPECT_EQ(stale.headers["x-tempest-stale"], "true");
  EXPECT_FALSE(stale.headers["age"].empty());
  auto unseen = Client().Get("/api/v1/supervisor/summary");
  ASSERT_TRUE(unseen.ok()) << unseen.status();
  EXPECT_EQ(unseen->status, 503) << unseen->body;
  EXPECT_NE(unseen->body.find("ZooKeeper"), std::string::npos) << unseen->body;

  ASSERT_TRUE(zk_->Restart(0).ok());
  EXPECT_TRUE(Eventually(milliseconds(60000), [&] {
    auto r = Client().Get("/api/v1/topology/summary");
    return r.ok() && r->status == 200 && r->headers.count("x-tempest-stale") == 0 &&
           r->body.find(id) != std::string::npos;
  }));
}

}  // namespace
}  // namespace tempest::testing
