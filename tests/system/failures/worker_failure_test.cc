// A worker that keeps failing is seen by every operator tool (docs/user-guide.md,
// nimbus/README.md): examples/word-count.yaml submitted without --resources, so
// its LineSpout cannot open data/sentences.txt and every worker exits before
// its first heartbeat. `submit --until-running` fails with the reason; the
// REST topology and component pages, `tempest get-errors`, `tempest list`
// (and `--workers`, and the change it has not finished), nimbus's /metrics and the UI's banner all name the
// failure and count the restarts, from the supervisor's records.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/net/http_client.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tempest_dev.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kReason[] = "cannot open";  // what LineSpout prints for a missing file

std::string SourceDir() {
  const char* dir = std::getenv("TEMPEST_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

std::string HttpGet(const std::string& nimbus, const std::string& target) {
  const size_t colon = nimbus.rfind(':');
  net::HttpClient client(nimbus.substr(0, colon), std::atoi(nimbus.substr(colon + 1).c_str()));
  auto reply = client.Get(target);
  return reply.ok() && reply->status == 200 ? reply->body : "";
}

json RestGet(const std::string& nimbus, const std::string& target) {
  return json::parse(HttpGet(nimbus, target), nullptr, false);
}

// The value of the sample `series` (name and labels, as written) in `text`, or -1.
int64_t Sample(const std::string& text, const std::string& prefix) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, prefix) && line.size() > prefix.size() &&
        (line[prefix.size()] == ' ' || line[prefix.size()] == '{')) {
      return std::atoll(std::string(line.substr(line.rfind(' ') + 1)).c_str());
    }
  }
  return -1;
}

TEST(WorkerFailureTest, ACrashLoopIsSeenEverywhere) {
  TempDir dir("tempest-worker-failure");
  auto started = StartTempestDev(dir, {});
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<os::ChildProcess> dev = *std::move(started);
  std::map<std::string, std::string> lines = TempestDevLines(dir.File("dev.out"));
  const std::string nimbus = lines["nimbus"];
  ASSERT_FALSE(nimbus.empty()) << ReadFileOrEmpty(dir.File("dev.out"));
  const std::map<std::string, std::string> env = {{"TEMPEST_NIMBUS", nimbus},
                                                  {"TEMPEST_TOKEN_FILE", lines["token-file"]}};
  int commands = 0;
  auto run = [&](const std::vector<std::string>& argv, milliseconds timeout = seconds(60)) {
    return RunCommand(argv, dir.File(absl::StrCat("cmd-", ++commands)), timeout, env);
  };

  // 1. submit --until-running gives up on the crash loop, naming why.
  CommandRun submit = run({TempestBinary(), "submit", SourceDir() + "/examples/word-count.yaml",
                           "--until-running", "--until-running-timeout", "300"},
                          seconds(330));
  ASSERT_TRUE(submit.finished);
  EXPECT_NE(submit.exit_code, 0) << submit.out << submit.err;
  EXPECT_TRUE(absl::StrContains(submit.err, "times in a row")) << submit.err;
  EXPECT_TRUE(absl::StrContains(submit.err, kReason)) << submit.err;
  EXPECT_TRUE(absl::StrContains(submit.err, "exited")) << submit.err;
  const std::string id(absl::StripAsciiWhitespace(submit.out.substr(0, submit.out.find('\n'))));
  ASSERT_TRUE(absl::StartsWith(id, "word-count-")) << submit.out;

  // 2. REST: the topology page's failure record, restarts and lastError.
  json t;
  ASSERT_TRUE(Eventually(
      seconds(60),
      [&] {
        t = RestGet(nimbus, "/api/v1/topology/" + id);
        return t.is_object() && t.value("workerRestarts", 0) >= 2 &&
               t.value("workerFailures", json::array()).size() == 1;
      },
      milliseconds(500)))
      << t.dump();
  const json f = t["workerFailures"][0];
  EXPECT_EQ(f.value("state", ""), "failing");
  EXPECT_TRUE(absl::StrContains(f.value("reason", ""), kReason)) << f.dump();
  EXPECT_GE(f.value("restarts", 0), 2);
  EXPECT_EQ(t.value("failingWorkers", 0), 1);
  ASSERT_TRUE(t["spouts"].is_array() && !t["spouts"].empty()) << t.dump();
  EXPECT_TRUE(absl::StrContains(t["spouts"][0].value("lastError", ""), kReason)) << t.dump();

  // The component page: its workers, restarts and the error.
  const json c = RestGet(nimbus, "/api/v1/topology/" + id + "/component/sentences");
  ASSERT_TRUE(c.is_object()) << "component page";
  EXPECT_EQ(c.value("workersTotal", -1), 1) << c.dump();
  EXPECT_TRUE(c["workerStats"].is_array() && c["workerStats"].size() == 1) << c.dump();
  EXPECT_GE(c.value("workerRestarts", 0), 2) << c.dump();
  ASSERT_TRUE(c["componentErrors"].is_array() && !c["componentErrors"].empty()) << c.dump();
  EXPECT_TRUE(absl::StrContains(c["componentErrors"][0].value("error", ""), kReason));

  // The cluster's used slots are the supervisor rows' sum.
  const json cluster = RestGet(nimbus, "/api/v1/cluster/summary");
  const json sups = RestGet(nimbus, "/api/v1/supervisor/summary");
  int used = 0;
  for (const json& s : sups.value("supervisors", json::array())) used += s.value("slotsUsed", 0);
  EXPECT_EQ(cluster.value("slotsUsed", -1), used) << cluster.dump() << sups.dump();

  // 3. get-errors: Storm's shape, the spout's error is the failure.
  CommandRun errors = run({TempestBinary(), "get-errors", "word-count"});
  ASSERT_EQ(errors.exit_code, 0) << errors.err;
  const json e = json::parse(errors.out, nullptr, false);
  ASSERT_TRUE(e.is_object()) << errors.out;
  EXPECT_TRUE(absl::StrContains(e["Comp-Errors"].value("sentences", ""), kReason)) << errors.out;

  // 4. list marks it; list --workers shows the failing slot.
  CommandRun list = run({TempestBinary(), "list"});
  EXPECT_TRUE(absl::StrContains(list.out, "! word-count: 1 worker failing")) << list.out;
  // Its slot never ran the first assignment: the change is still in progress.
  EXPECT_TRUE(absl::StrContains(
      list.out, "~ word-count: starting on assignment v1: 0 of 1 workers run it (kept 0"))
      << list.out;
  CommandRun workers = run({TempestBinary(), "list", "--workers", "--json"});
  const json w = json::parse(workers.out, nullptr, false);
  ASSERT_TRUE(w.is_object() && w["workers"].size() == 1) << workers.out;
  EXPECT_TRUE(absl::StartsWith(w["workers"][0].value("state", ""), "failing: ")) << workers.out;
  EXPECT_GE(w["workers"][0].value("restarts", 0), 2) << workers.out;

  // 5. /metrics counts the restarts, and promtool accepts the text.
  const std::string metrics = HttpGet(nimbus, "/metrics");
  const std::string labels = absl::StrCat("{topology_id=\"", id, "\",topology=\"word-count\"}");
  EXPECT_GE(Sample(metrics, "tempest_topology_worker_restarts" + labels), 2) << metrics;
  EXPECT_EQ(Sample(metrics, "tempest_topology_failing_workers" + labels), 1) << metrics;
  std::ofstream(dir.File("nimbus.prom")) << metrics;
  CommandRun lint = run({"/bin/sh", "-c", "promtool check metrics < " + dir.File("nimbus.prom")});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
  EXPECT_EQ(lint.out + lint.err, "");

  // 6. The UI's banner names the supervisor, the reason and the next restart.
  const std::string py =
      std::ifstream("/usr/bin/python3").good() ? "/usr/bin/python3" : "python3";
  CommandRun ui = run({py, SourceDir() + "/tests/system/failures/failure_banner_driver.py",
                       "--ui-url", lines["ui"], "--topology", id, "--out", dir.File("ui")},
                      seconds(150));
  ASSERT_EQ(ui.exit_code, 0) << ui.out << ui.err;
  const json banner = json::parse(ui.out, nullptr, false);
  ASSERT_TRUE(banner.is_string()) << ui.out;
  const std::string text = banner.get<std::string>();
  EXPECT_TRUE(absl::StrContains(text, f.value("supervisorId", "?"))) << text;
  EXPECT_TRUE(absl::StrContains(text, kReason)) << text;
  EXPECT_TRUE(absl::StrContains(text, "next restart in")) << text;

  dev->Stop(seconds(60));
}

}  // namespace
}  // namespace tempest::testing
