// Nimbus reads nothing from its own disk for a REST caller (docs/security.md,
// "Flux includes"): an API-token holder's raw submit whose Flux names files
// nimbus could read (a shadow-like file, a Flux file, one that does not
// exist) gets the same 400 for each, naming the include and quoting nothing;
// inotify shows nimbus never opened the planted files. `tempest submit` of a
// Flux with includes still works: the client merges them into the text.

#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "common/net/http_auth.h"
#include "common/net/http_client.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/system/nimbus/nimbus_process_fixture.h"

namespace tempest::testing {
namespace {

constexpr char kSecret[] = "TEMPEST-PLANTED-SECRET-51c9";

class NimbusIncludesTest : public NimbusProcessTest {
 protected:
  void SetUp() override {
    token_ = net::NewRandomToken();
    ASSERT_TRUE(net::WriteTokenFile(dir_.File("api.token"), token_).ok());
    StartNimbus("tempest.api.token.file: " + dir_.File("api.token") + "\n");
  }

  // A raw submit as curl would send it, with the token.
  std::pair<int, std::string> Submit(const std::string& flux, const std::string& file_name) {
    const size_t colon = address_.rfind(':');
    net::HttpClient client(address_.substr(0, colon), std::stoi(address_.substr(colon + 1)));
    client.set_header("Authorization", "Bearer " + token_);
    auto reply = client.Post("/api/v1/topology",
                             nlohmann::json{{"flux", flux}, {"fileName", file_name}}.dump());
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return {0, ""};
    return {reply->status, reply->body};
  }

  std::string token_;
};

std::string Including(const std::string& file) {
  return "name: probe\nincludes:\n  - file: \"" + file +
         "\"\nspouts:\n  - id: s\n    className: tempest.SequenceSpout\n";
}

TEST_F(NimbusIncludesTest, ARestSubmitNamingAFileIsRefusedAlikeAndNothingIsOpened) {
  TempDir planted("planted");
  std::ofstream(planted.File("shadow")) << "root:$6$" << kSecret << ":19000:0:99999:7:::\n";
  std::ofstream(planted.File("common.yaml"))
      << "name: " << kSecret << "\nconfig:\n  topology.workers: 1\n";
  // Every open or read of the planted files, by any process, from here on.
  const int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  for (const char* name : {"shadow", "common.yaml"}) {
    ASSERT_GE(inotify_add_watch(watch, planted.File(name).c_str(), IN_OPEN | IN_ACCESS), 0);
  }

  std::vector<std::string> answers;
  for (const std::string& include :
       {planted.File("shadow"), planted.File("common.yaml"), std::string("common.yaml"),
        planted.File("no-such-file"), std::string("/etc/shadow")}) {
    // A relative include would resolve in the planted folder, were it read.
    auto [status, body] = Submit(Including(include), planted.File("topology.yaml"));
    EXPECT_EQ(status, 400) << include << ": " << body;
    EXPECT_EQ(body.find(kSecret), std::string::npos) << body;
    EXPECT_EQ(body.find("root:"), std::string::npos) << body;
    EXPECT_NE(body.find("include '" + include + "' refused"), std::string::npos) << body;
    // Exists or not, the same answer once the path is taken out.
    const size_t at = body.find(include);
    answers.push_back(at == std::string::npos
                          ? body
                          : body.substr(0, at) + body.substr(at + include.size()));
  }
  for (const std::string& answer : answers) EXPECT_EQ(answer, answers.front());

  char events[4096];
  const ssize_t n = read(watch, events, sizeof(events));
  EXPECT_EQ(n, -1) << "a planted file was opened or read";
  close(watch);

  // Nothing was stored.
  CommandRun listed = Tempest({"list", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(listed.out.find("probe"), std::string::npos) << listed.out;
}

TEST_F(NimbusIncludesTest, TempestSubmitMergesIncludesOnTheClient) {
  TempDir flux("flux-with-includes");
  // The included file holds the whole pipeline; the including one its name.
  std::ifstream example(SourceDir() + "/examples/generator-verifier.yaml");
  std::ofstream(flux.File("pipeline.yaml")) << example.rdbuf();
  std::ofstream(flux.File("main.yaml"))
      << "name: merged-on-the-client\nincludes:\n  - file: pipeline.yaml\n";
  CommandRun submitted =
      Tempest({"submit", flux.File("main.yaml"), "--token-file", dir_.File("api.token")});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  EXPECT_EQ(submitted.out.rfind("merged-on-the-client-", 0), 0u) << submitted.out;

  // Nimbus stored the included components, from the text alone.
  const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
  CommandRun shown = Tempest({"list", "--json"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find(id), std::string::npos) << shown.out;
  const size_t colon = address_.rfind(':');
  net::HttpClient client(address_.substr(0, colon), std::stoi(address_.substr(colon + 1)));
  auto page = client.Get("/api/v1/topology/" + id);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->status, 200) << page->body;
  for (const char* component : {"generator", "identity", "verifier"}) {
    EXPECT_NE(page->body.find(component), std::string::npos) << component << ": " << page->body;
  }
}

}  // namespace
}  // namespace tempest::testing
