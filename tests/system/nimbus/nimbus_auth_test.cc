// The REST API's bearer token as an operator sets it up (docs/security.md,
// "REST API authentication"): a real `tempest nimbus` with
// tempest.api.token.file, raw HTTP requests without the token, and the real
// CLI with the token from --token-file, its config file, $TEMPEST_TOKEN_FILE
// and $TEMPEST_TOKEN, in that order of precedence.

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/net/http_auth.h"
#include "common/net/http_client.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"
#include "tests/system/nimbus/nimbus_process_fixture.h"

namespace tempest::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class NimbusAuthTest : public NimbusProcessTest {
 protected:
  void SetUp() override {
    token_ = net::NewRandomToken();
    ASSERT_TRUE(net::WriteTokenFile(dir_.File("api.token"), token_).ok());
    StartNimbus("tempest.api.token.file: " + dir_.File("api.token") + "\n");
  }

  net::HttpClient Client() const {
    const size_t colon = address_.rfind(':');
    return net::HttpClient(address_.substr(0, colon), std::stoi(address_.substr(colon + 1)));
  }

  std::string token_;
};

TEST_F(NimbusAuthTest, WritesWithoutTheTokenGet401AndTheCliWithItWorks) {
  const std::string flux = SourceDir() + "/examples/generator-verifier.yaml";
  CommandRun submitted = Tempest({"submit", flux, "--token-file", dir_.File("api.token")});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  ASSERT_EQ(id.rfind("generator-verifier-", 0), 0u) << submitted.out;

  // Every write endpoint, without a token and with a wrong one.
  std::ifstream flux_in(flux);
  const std::string flux_text((std::istreambuf_iterator<char>(flux_in)), {});
  const std::vector<std::string> writes = {
      "/api/v1/topology", "/api/v1/topology/" + id + "/activate",
      "/api/v1/topology/" + id + "/deactivate", "/api/v1/topology/" + id + "/rebalance/0",
      "/api/v1/topology/" + id + "/kill/0"};
  for (const char* presented : {"", "Bearer not-the-token", "Basic dXNlcjpwYXNz"}) {
    net::HttpClient client = Client();
    if (*presented != '\0') client.set_header("Authorization", presented);
    for (const std::string& target : writes) {
      auto reply = client.Post(target, target == writes[0] ? flux_text : "{}");
      ASSERT_TRUE(reply.ok()) << target << ": " << reply.status();
      EXPECT_EQ(reply->status, 401) << target << " with '" << presented << "': " << reply->body;
      EXPECT_EQ(reply->headers["www-authenticate"].rfind("Bearer", 0), 0u) << target;
    }
  }
  // Reads stay open by default (tempest.api.auth.reads: false).
  auto summary = Client().Get("/api/v1/topology/summary");
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->status, 200) << summary->body;
  EXPECT_NE(summary->body.find(id), std::string::npos) << summary->body;

  // The refused requests changed nothing: still one ACTIVE topology.
  CommandRun listed = Tempest({"list", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto topologies = nlohmann::json::parse(listed.out)["topologies"];
  ASSERT_EQ(topologies.size(), 1u) << listed.out;
  EXPECT_EQ(topologies[0]["status"], "ACTIVE");

  // The CLI without a token: one clear line, exit 1.
  CommandRun anonymous = Tempest({"deactivate", "generator-verifier"});
  EXPECT_EQ(anonymous.exit_code, 1) << anonymous.out;
  EXPECT_NE(anonymous.err.find("nimbus at " + address_ + " needs an API token for this; set "
                               "TEMPEST_TOKEN_FILE, TEMPEST_TOKEN or tempest.api.token.file"),
            std::string::npos)
      << anonymous.err;

  // $TEMPEST_TOKEN, then the token file named in the client's config.
  CommandRun from_env =
      Tempest({"deactivate", "generator-verifier"}, {{"TEMPEST_TOKEN", token_}});
  EXPECT_EQ(from_env.exit_code, 0) << from_env.err;
  CommandRun from_config = Tempest({"--config", dir_.File("tempest.yaml"), "activate",
                                    "generator-verifier"});
  EXPECT_EQ(from_config.exit_code, 0) << from_config.err;

  // $TEMPEST_TOKEN_FILE: after --token-file and the config, before $TEMPEST_TOKEN.
  const std::map<std::string, std::string> token_file_env = {
      {"TEMPEST_TOKEN_FILE", dir_.File("api.token")}, {"TEMPEST_TOKEN", "not-the-token"}};
  CommandRun from_file_env = Tempest({"deactivate", "generator-verifier"}, token_file_env);
  EXPECT_EQ(from_file_env.exit_code, 0) << from_file_env.err;
  CommandRun file_env_activate = Tempest({"activate", "generator-verifier"}, token_file_env);
  EXPECT_EQ(file_env_activate.exit_code, 0) << file_env_activate.err;
  ASSERT_TRUE(net::WriteTokenFile(dir_.File("wrong.token"), "not-the-token").ok());
  CommandRun flag_wins = Tempest({"deactivate", "generator-verifier", "--token-file",
                                  dir_.File("api.token")},
                                 {{"TEMPEST_TOKEN_FILE", dir_.File("wrong.token")}});
  EXPECT_EQ(flag_wins.exit_code, 0) << flag_wins.err;
  CommandRun config_wins = Tempest({"--config", dir_.File("tempest.yaml"), "activate",
                                    "generator-verifier"},
                                   {{"TEMPEST_TOKEN_FILE", dir_.File("wrong.token")}});
  EXPECT_EQ(config_wins.exit_code, 0) << config_wins.err;
  CommandRun wrong_file = Tempest({"deactivate", "generator-verifier"},
                                  {{"TEMPEST_TOKEN_FILE", dir_.File("wrong.token")},
                                   {"TEMPEST_TOKEN", token_}});
  EXPECT_EQ(wrong_file.exit_code, 1) << wrong_file.err;
  EXPECT_NE(wrong_file.err.find("rejected the API token from TEMPEST_TOKEN_FILE " +
                                dir_.File("wrong.token")),
            std::string::npos)
      << wrong_file.err;
  CommandRun missing_file =
      Tempest({"deactivate", "generator-verifier"}, {{"TEMPEST_TOKEN_FILE", dir_.File("none")}});
  EXPECT_NE(missing_file.exit_code, 0);
  EXPECT_NE(missing_file.err.find("TEMPEST_TOKEN_FILE " + dir_.File("none")), std::string::npos)
      << missing_file.err;

  CommandRun killed = Tempest({"kill", "generator-verifier", "-w", "0", "--token-file",
                               dir_.File("api.token")});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
  EXPECT_TRUE(Eventually(milliseconds(30000), [&] {
    CommandRun r = Tempest({"list", "--json"});
    return r.exit_code == 0 && nlohmann::json::parse(r.out)["topologies"].empty();
  }));
}

// docs/security.md: a missing token and a wrong one are told apart, by the
// REST API and by the CLI, and neither answer says anything about the token.
TEST_F(NimbusAuthTest, AWrongTokenIsToldApartFromAMissingOne) {
  const std::string flux = SourceDir() + "/examples/generator-verifier.yaml";
  auto missing = Client().Post("/api/v1/topology", "{}");
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->status, 401);
  EXPECT_NE(missing->body.find("authentication required: send the API token as "
                               "'Authorization: Bearer TOKEN'"),
            std::string::npos)
      << missing->body;
  net::HttpClient wrong_client = Client();
  // The last character changed (to one it is not: a random token ends in
  // '0' one time in sixteen).
  const char last = token_.back() == '0' ? '1' : '0';
  wrong_client.set_header("Authorization", "Bearer " + token_.substr(0, 63) + last);
  auto wrong = wrong_client.Post("/api/v1/topology", "{}");
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  EXPECT_EQ(wrong->status, 401);
  EXPECT_NE(wrong->body.find("the token was rejected"), std::string::npos) << wrong->body;
  EXPECT_EQ(wrong->body.find(token_.substr(0, 8)), std::string::npos) << wrong->body;

  CommandRun none = Tempest({"submit", flux});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("needs an API token"), std::string::npos) << none.err;
  EXPECT_EQ(none.err.find("rejected"), std::string::npos) << none.err;
  CommandRun bad = Tempest({"submit", flux}, {{"TEMPEST_TOKEN", "not-the-token"}});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("nimbus at " + address_ + " rejected the API token from TEMPEST_TOKEN"),
            std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("the token was rejected"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("not-the-token"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find(token_.substr(0, 8)), std::string::npos) << bad.err;
}

// `--nimbus` takes the address as the web UI's URL too, and a rebalance of a
// component that does not exist names the closest one and all of them.
TEST_F(NimbusAuthTest, NimbusAsAUrlAndComponentTyposInRebalance) {
  const std::string flux = SourceDir() + "/examples/generator-verifier.yaml";
  const std::string token_file = dir_.File("api.token");
  for (const std::string& url : {"http://" + address_, "http://" + address_ + "/"}) {
    CommandRun listed = RunCommand({TempestBinary(), "list", "--nimbus", url}, dir_.File("url"),
                                   std::chrono::milliseconds(60000));
    EXPECT_EQ(listed.exit_code, 0) << url << ": " << listed.err;
    EXPECT_NE(listed.out.find("No topologies running."), std::string::npos) << listed.out;
  }
  CommandRun https = RunCommand({TempestBinary(), "list", "--nimbus", "https://" + address_},
                                dir_.File("url"), std::chrono::milliseconds(60000));
  EXPECT_EQ(https.exit_code, 2);
  EXPECT_NE(https.err.find("--nimbus takes HOST:PORT or http://HOST:PORT"), std::string::npos)
      << https.err;

  CommandRun submitted = Tempest({"submit", flux, "--token-file", token_file});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  CommandRun typo = Tempest(
      {"rebalance", "generator-verifier", "-e", "verifer=1", "--token-file", token_file});
  EXPECT_EQ(typo.exit_code, 1);
  EXPECT_NE(typo.err.find("topology 'generator-verifier' has no component 'verifer'; did you "
                          "mean 'verifier'? (its components: "),
            std::string::npos)
      << typo.err;
  EXPECT_NE(typo.err.find("identity"), std::string::npos) << typo.err;
  // One task: singular.
  CommandRun over = Tempest(
      {"rebalance", "generator-verifier", "-e", "verifier=2", "--token-file", token_file});
  EXPECT_EQ(over.exit_code, 1);
  EXPECT_NE(over.err.find("component 'verifier' has 1 task, so it cannot have 2 executors"),
            std::string::npos)
      << over.err;
  CommandRun killed = Tempest({"kill", "generator-verifier", "-w", "0", "--token-file",
                               token_file});
  EXPECT_EQ(killed.exit_code, 0) << killed.err;
}

}  // namespace
}  // namespace tempest::testing
