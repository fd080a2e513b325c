// The web UI in a real browser: `tempest dev` with its dev Kafka, a topic of
// several partitions with records in it, a KafkaSpout topology submitted with
// `tempest submit`, and headless Chromium driven through its DevTools
// protocol by web_ui_driver.py (README.md). The page is opened with the
// `ui=` link `tempest dev` prints, then the topology and a component page by
// their URLs; what the tables show is compared with what the REST API
// answers, the deactivate button is clicked, Back is pressed, the window
// selector is used and nimbus is taken out of reach. The driver records what
// it saw in a JSON report; the assertions are here.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
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

constexpr char kTopic[] = "ui-events";
constexpr char kSpout[] = "events";
constexpr char kBolt[] = "relay";
constexpr int kRecordsPerPartition = 3000;

std::string SourceDir() {
  const char* dir = std::getenv("TEMPEST_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

std::string Python() {
  return std::ifstream("/usr/bin/python3").good() ? "/usr/bin/python3" : "python3";
}

// `tempest dev --supervisors 1` in `dir` (ui.port=0), as cluster_dev_test
// starts it: waits for "ready". Failures are fatal.
void StartDev(const TempDir& dir, std::unique_ptr<os::ChildProcess>& dev) {
  auto started = StartTempestDev(dir, {});
  ASSERT_TRUE(started.ok()) << started.status();
  dev = *std::move(started);
}

// A KafkaSpout (two tasks over the topic's partitions, offsets in ZooKeeper)
// into a slow identity bolt and a second one, so the page has counts, a
// graph with two edges and, while the topic drains, lag.
std::string KafkaTopology(const std::string& bootstrap, const std::string& zk) {
  return absl::StrReplaceAll(R"(name: ui-kafka
config:
  topology.workers: 1
  topology.message.timeout.secs: 30
  topology.max.spout.pending: 200
spouts:
  - id: SPOUT
    className: tempest.KafkaSpout
    parallelism: 2
    properties:
      - name: bootstrap.servers
        value: "BOOTSTRAP"
      - name: topics
        value: TOPIC
      - name: zkServers
        value: "ZOOKEEPER"
      - name: zkRoot
        value: /kafkaspout
      - name: id
        value: ui-kafka
      - name: startOffsetTime
        value: -2
      - name: stateUpdateIntervalMs
        value: 500
bolts:
  - id: BOLT
    className: tempest.IdentityBolt
    parallelism: 2
    properties:
      - name: delayMicros
        value: 2000
  - id: sink
    className: tempest.IdentityBolt
    parallelism: 1
streams:
  - from: SPOUT
    to: BOLT
    grouping:
      type: SHUFFLE
  - from: BOLT
    to: sink
    grouping:
      type: SHUFFLE
)",
                             {{"SPOUT", kSpout},
                              {"BOLT", kBolt},
                              {"TOPIC", kTopic},
                              {"BOOTSTRAP", bootstrap},
                              {"ZOOKEEPER", zk}});
}

json RestGet(const std::string& nimbus, const std::string& target) {
  const size_t colon = nimbus.rfind(':');
  net::HttpClient client(nimbus.substr(0, colon), std::stoi(nimbus.substr(colon + 1)));
  auto reply = client.Get(target);
  if (!reply.ok() || reply->status != 200) return nullptr;
  return json::parse(reply->body, nullptr, false);
}

// PIDs of the processes whose command line mentions `needle`.
std::vector<pid_t> ProcessesMentioning(const std::string& needle) {
  std::vector<pid_t> pids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = ReadFileOrEmpty((e.path() / "cmdline").string());
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) pids.push_back(std::stoi(name));
  }
  return pids;
}

// A string member of a JSON object, or "".
std::string Str(const json& j, const std::string& key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// A JSON integer, or -1.
int64_t Int(const json& v) { return v.is_number_integer() ? v.get<int64_t>() : -1; }

bool IsPng(const std::string& path) {
  const std::string head = ReadFileOrEmpty(path).substr(0, 8);
  return head == std::string("\x89PNG\r\n\x1a\n", 8);
}

// The value of `field` in the row of `rows` (a JSON array) whose "window" is
// ":all-time".
json AllTime(const json& rows, const std::string& field) {
  if (!rows.is_array()) return nullptr;
  for (const json& r : rows) {
    if (Str(r, "window") == ":all-time") return r.contains(field) ? r.at(field) : json();
  }
  return nullptr;
}

TEST(WebUiTest, PagesShowWhatRestAnswersAndTheButtonsWork) {
  TempDir dir("tempest-web-ui");
  const char* out_env = std::getenv("TEMPEST_UI_TEST_OUT");
  const std::string out = out_env != nullptr ? out_env : dir.File("screenshots");
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);

  std::unique_ptr<os::ChildProcess> dev;
  StartDev(dir, dev);
  ASSERT_FALSE(HasFatalFailure());
  std::map<std::string, std::string> lines = TempestDevLines(dir.File("dev.out"));
  const std::string nimbus = lines["nimbus"];
  const std::string bootstrap = lines["bootstrap.servers"];
  ASSERT_FALSE(nimbus.empty()) << ReadFileOrEmpty(dir.File("dev.out"));
  ASSERT_TRUE(absl::StrContains(lines["ui"], "#token=")) << lines["ui"];
  const std::map<std::string, std::string> env = {{"TEMPEST_NIMBUS", nimbus},
                                                  {"TEMPEST_TOKEN_FILE", lines["token-file"]}};
  int commands = 0;
  auto run = [&](const std::vector<std::string>& argv, milliseconds timeout = seconds(60)) {
    return RunCommand(argv, dir.File(absl::StrCat("cmd-", ++commands)), timeout, env);
  };

  // kcat writes kRecordsPerPartition records into partition p.
  auto produce = [&](int p) {
    std::ofstream records(dir.File(absl::StrCat("records-", p, ".txt")));
    for (int i = 0; i < kRecordsPerPartition; ++i) records << "p" << p << "-" << i << "\n";
    records.close();
    return run({"sh", "-c",
                absl::StrCat("kcat -P -b ", bootstrap, " -t ", kTopic, " -p ", p,
                             " -X log_level=3 < ", dir.File(absl::StrCat("records-", p, ".txt")))});
  };
  // The topic, created by its first write (the dev Kafka creates topics on
  // demand, with several partitions); its partition count from the metadata.
  CommandRun first = produce(0);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  CommandRun metadata =
      run({"kcat", "-L", "-J", "-b", bootstrap, "-t", kTopic, "-X", "log_level=3"});
  ASSERT_EQ(metadata.exit_code, 0) << metadata.err;
  const json meta = json::parse(metadata.out, nullptr, false);
  ASSERT_TRUE(meta.is_object() && meta["topics"].is_array() && !meta["topics"].empty())
      << metadata.out;
  const int partitions = static_cast<int>(meta["topics"][0]["partitions"].size());
  ASSERT_GE(partitions, 2) << "the dev Kafka created " << kTopic << " with " << partitions
                           << " partition(s); the lag check needs several";
  for (int p = 1; p < partitions; ++p) {
    CommandRun produced = produce(p);
    ASSERT_EQ(produced.exit_code, 0) << produced.err;
  }

  std::ofstream(dir.File("topology.yaml")) << KafkaTopology(bootstrap, lines["zookeeper"]);
  CommandRun submit = run({TempestBinary(), "submit", dir.File("topology.yaml"), "--until-running",
                           "--until-running-timeout", "150"},
                          seconds(200));
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  const std::string id(absl::StripAsciiWhitespace(submit.out.substr(0, submit.out.find('\n'))));
  ASSERT_TRUE(absl::StartsWith(id, "ui-kafka-")) << submit.out;

  // It acks (REST: the spout's per-component count).
  json topology;
  ASSERT_TRUE(Eventually(
      seconds(120),
      [&] {
        topology = RestGet(nimbus, "/api/v1/topology/" + id);
        if (!topology.is_object() || !topology["spouts"].is_array()) return false;
        for (const json& s : topology["spouts"]) {
          if (Str(s, "spoutId") == kSpout && s.contains("acked") && Int(s.at("acked")) > 0) {
            return true;
          }
        }
        return false;
      },
      milliseconds(500)))
      << "spout " << kSpout << " never acked; the topology page said " << topology.dump();

  const std::string profiles = dir.File("chromium");
  std::filesystem::create_directories(profiles);
  const std::string report_path = dir.File("report.json");
  CommandRun driver = run({Python(),
                           SourceDir() + "/tests/system/ui/web_ui_driver.py",
                           "--ui-url",
                           lines["ui"],
                           "--nimbus",
                           nimbus,
                           "--topology",
                           id,
                           "--spout",
                           kSpout,
                           "--bolt",
                           kBolt,
                           "--topic",
                           kTopic,
                           "--partitions",
                           std::to_string(partitions),
                           "--out",
                           out,
                           "--report",
                           report_path,
                           "--profile-parent",
                           profiles,
                           "--timeout",
                           "90"},
                          seconds(480));
  // Whatever happened, no browser is left behind.
  const std::vector<pid_t> left = ProcessesMentioning(profiles);
  for (pid_t pid : left) ::kill(pid, SIGKILL);
  EXPECT_TRUE(left.empty()) << left.size() << " Chromium processes outlived the driver";

  // Not const: a missing entry (a step the driver did not reach) reads as null.
  json report = json::parse(ReadFileOrEmpty(report_path), nullptr, false);
  ASSERT_TRUE(report.is_object()) << "no report; driver said:\n" << driver.out << driver.err;
  EXPECT_EQ(driver.exit_code, 0) << Str(report, "error") << "\n"
                                 << Str(report, "traceback")
                                 << "\nsteps: " << report["steps"].dump() << "\n"
                                 << driver.err;
  const std::string topology_hash = "#/topology/" + id;

  // The cluster page from the ui= link: the token left the address for the
  // tab's storage, and no dialog ever asked for it.
  json& cluster = report["cluster"];
  EXPECT_EQ(Str(cluster["page"], "route"), "cluster") << cluster.dump();
  EXPECT_FALSE(absl::StrContains(Str(cluster, "href"), "token")) << cluster.dump();
  EXPECT_EQ(cluster["token_stored"], true);
  EXPECT_TRUE(cluster["topologies"].contains(id)) << cluster.dump();
  EXPECT_EQ(Str(cluster, "topology_link"), topology_hash);
  EXPECT_EQ(cluster["supervisors"].size(), 1u) << cluster.dump();
  for (const auto& [sid, row] : cluster["supervisors"].items()) {
    EXPECT_FALSE(Str(row, "slotPorts").empty()) << "the ports the supervisor registered";
  }
  // Nimbus's configuration: the ZooKeeper port `tempest dev` gave it, not
  // Storm's 2181, and where each value came from.
  const std::string zk = lines["zookeeper"];
  json& conf = cluster["cluster_configuration"];
  EXPECT_EQ(Str(conf["storm.zookeeper.port"], "value"), zk.substr(zk.rfind(':') + 1))
      << conf.dump();
  EXPECT_EQ(Str(conf["storm.zookeeper.port"], "from"), "command line") << conf.dump();
  EXPECT_EQ(Str(conf["nimbus.seeds"], "from"), "default") << conf.dump();
  // The only dialogs: the rebalance's three prompts and the kill's one (no
  // token prompt: the link's token was used).
  std::vector<std::string> dialogs;
  for (const json& d : report["dialogs"]) {
    dialogs.push_back(Str(d, "type") + ": " + Str(d, "message").substr(0, 12));
  }
  EXPECT_EQ(dialogs, (std::vector<std::string>{"prompt: Rebalance ui", "prompt: Number of wo",
                                               "prompt: Executors pe", "prompt: Kill ui-kafk"}))
      << report["dialogs"].dump();

  // The topology page, opened by its URL while ACTIVE: the actions that
  // apply, and the graph of the three components.
  json& active = report["topology_active"];
  EXPECT_EQ(Str(active["page"], "route"), "topology") << active.dump();
  EXPECT_EQ(Str(active["page"], "topology"), id);
  EXPECT_EQ(Str(active, "state"), "ACTIVE");
  EXPECT_EQ(active["buttons"],
            (json{{"activate", false}, {"deactivate", true}, {"rebalance", true}, {"kill", true}}));
  EXPECT_EQ(active["dag_nodes"], (json{kSpout, kBolt, "sink"})) << active.dump();
  std::set<std::string> edges;
  for (json& e : active["dag_edges"]) {
    edges.insert(Str(e, "from") + ">" + Str(e, "to"));
  }
  EXPECT_EQ(edges, (std::set<std::string>{std::string(kSpout) + ">" + kBolt,
                                          std::string(kBolt) + ">sink"}))
      << active["dag_edges"].dump();
  EXPECT_TRUE(active["topology_stats"].contains(":all-time")) << active.dump();
  EXPECT_EQ(active["workers"].size(), 1u) << active["workers"].dump();
  EXPECT_TRUE(active["configuration"].contains("topology.max.spout.pending"))
      << active["configuration"].dump();
  json& topology_conf = active["configuration"];
  EXPECT_EQ(Str(topology_conf["topology.max.spout.pending"], "value"), "200");
  EXPECT_EQ(Str(topology_conf["topology.max.spout.pending"], "from"), "topology");
  EXPECT_EQ(Str(topology_conf["storm.zookeeper.port"], "from"), "cluster") << topology_conf.dump();
  EXPECT_EQ(Str(topology_conf["topology.debug"], "from"), "default");

  // Every partition of the topic in the lag table, and a total row.
  json& lag_rows = report["lag"]["dom"];
  for (int p = 0; p < partitions; ++p) {
    EXPECT_TRUE(lag_rows.contains(absl::StrCat(kSpout, "/", kTopic, "/", p)))
        << "partition " << p << " not in the lag table: " << report["lag"].dump();
  }
  EXPECT_TRUE(lag_rows.contains(absl::StrCat(kSpout, "/total/"))) << lag_rows.dump();

  // Deactivate: the page and REST say INACTIVE, and the buttons follow.
  json& inactive = report["after_deactivate"];
  EXPECT_EQ(Str(inactive, "state"), "INACTIVE") << inactive.dump();
  EXPECT_EQ(Str(inactive, "rest_status"), "INACTIVE") << inactive.dump();
  EXPECT_EQ(inactive["buttons"],
            (json{{"activate", true}, {"deactivate", false}, {"rebalance", true}, {"kill", true}}));

  // With the spouts stopped, the tables show exactly what REST answers.
  EXPECT_TRUE(report["counts_matched"] == true) << report["counts"].dump();
  json& counts = report["counts"];
  EXPECT_EQ(counts["dom"], counts["rest"]);
  EXPECT_GT(Int(counts["dom"]["spouts"][kSpout]["acked"]), 0) << counts.dump();
  EXPECT_GT(Int(counts["dom"]["spouts"][kSpout]["emitted"]), 0) << counts.dump();
  EXPECT_GT(Int(counts["dom"]["bolts"][kBolt]["executed"]), 0) << counts.dump();
  EXPECT_GT(Int(counts["dom"]["bolts"]["sink"]["acked"]), 0) << counts.dump();

  // The component page by its URL: the bolt, its executors and its all-time
  // row as REST has them.
  json& component = report["component"];
  EXPECT_EQ(Str(component["page"], "route"), "component") << component.dump();
  EXPECT_EQ(Str(component["page"], "component"), kBolt);
  EXPECT_EQ(Str(component, "type"), "Bolt");
  json& rest_component = component["rest"];
  EXPECT_EQ(component["executors"].size(), rest_component["executorStats"].size())
      << component.dump();
  EXPECT_EQ(component["executors"].size(), 2u);
  json& stats_row = component["stats"][":all-time"];
  for (const char* field : {"executed", "acked", "emitted", "failed"}) {
    const json rest_value = AllTime(rest_component["boltStats"], field);
    ASSERT_TRUE(rest_value.is_number_integer()) << field << " " << rest_component.dump();
    EXPECT_EQ(Str(stats_row, field), rest_value.dump()) << field << " " << component.dump();
  }
  EXPECT_TRUE(component["inputs"].contains(absl::StrCat(kSpout, "/default")))
      << component["inputs"].dump();

  // Back returns to the topology page; the window selector is in the URL.
  EXPECT_EQ(Str(report["back"], "route"), "topology") << report["back"].dump();
  EXPECT_EQ(Str(report["back"], "hash"), topology_hash);
  EXPECT_EQ(Str(report["forward"], "route"), "component") << report["forward"].dump();
  EXPECT_EQ(Str(report["forward"], "hash"), topology_hash + "/component/" + kBolt);
  EXPECT_EQ(Str(report["window"]["page"], "hash"), topology_hash + "?window=600");

  // The spout's page, from its link: executors and output streams as REST
  // has them (counts frozen), no input section.
  json& spout_page = report["spout_page"];
  EXPECT_EQ(Str(spout_page["page"], "hash"), topology_hash + "/component/" + kSpout)
      << spout_page.dump();
  EXPECT_EQ(Str(spout_page, "type"), "Spout");
  EXPECT_EQ(spout_page["inputs_hidden"], true);
  EXPECT_EQ(spout_page["executors"].size(), spout_page["rest"]["executorStats"].size());
  EXPECT_EQ(spout_page["executors"].size(), 2u) << spout_page.dump();
  for (const json& e : spout_page["rest"]["executorStats"]) {
    const std::string key = Str(e, "id");
    EXPECT_EQ(Str(spout_page["executors"][key], "acked"),
              e.contains("acked") ? e["acked"].dump() : "")
        << key << " " << spout_page.dump();
  }
  for (const json& o : spout_page["rest"]["outputStats"]) {
    const std::string key = Str(o, "stream");
    EXPECT_EQ(Str(spout_page["outputs"][key], "emitted"),
              o.contains("emitted") ? o["emitted"].dump() : "")
        << key << " " << spout_page.dump();
  }
  EXPECT_FALSE(spout_page["rest"]["outputStats"].empty()) << spout_page.dump();

  // nimbus out of reach: the last tables stay, marked stale; then fresh.
  const std::string stale = Str(report["stale"], "status");
  EXPECT_TRUE(std::regex_search(stale, std::regex("^nimbus unreachable, data from [0-9]+ s ago$")))
      << stale;
  EXPECT_TRUE(report["stale"]["spouts_kept"].contains(kSpout)) << report["stale"].dump();
  EXPECT_TRUE(absl::StartsWith(Str(report, "fresh_again"), "updated "))
      << Str(report, "fresh_again");
  // nimbus taking requests and never answering: the page gives up on them.
  EXPECT_TRUE(std::regex_search(Str(report["hang"], "status"),
                                std::regex("^nimbus unreachable, data from [0-9]+ s ago$")))
      << report["hang"].dump();
  EXPECT_TRUE(report["hang"]["spouts_kept"].contains(kSpout)) << report["hang"].dump();

  // Rebalance: REBALANCING with its countdown, kill the only action; then
  // INACTIVE again. Kill: KILLED with the removal countdown, no action left.
  EXPECT_TRUE(std::regex_search(Str(report["rebalancing"], "countdown"),
                                std::regex("^rebalancing: the new placement applies in [0-4] s")))
      << report["rebalancing"].dump();
  EXPECT_EQ(
      report["rebalancing"]["buttons"],
      (json{{"activate", false}, {"deactivate", false}, {"rebalance", false}, {"kill", true}}));
  EXPECT_EQ(Str(report["after_rebalance"], "state"), "INACTIVE") << report["after_rebalance"];
  EXPECT_EQ(Str(report["after_rebalance"], "countdown"), "");
  EXPECT_TRUE(std::regex_search(Str(report["killed"], "countdown"),
                                std::regex("^killed: nimbus removes it in [0-9]+ s$")))
      << report["killed"].dump();
  EXPECT_EQ(Str(report["killed"], "rest_status"), "KILLED");
  EXPECT_EQ(
      report["killed"]["buttons"],
      (json{{"activate", false}, {"deactivate", false}, {"rebalance", false}, {"kill", false}}));

  for (const char* shot : {"cluster.png", "topology.png", "component.png"}) {
    EXPECT_TRUE(IsPng(out + "/" + shot)) << out << "/" << shot;
  }
  // The user guide's picture, refreshed on request only (it is committed).
  if (std::getenv("TEMPEST_UPDATE_DOCS_IMAGES") != nullptr && IsPng(out + "/topology.png")) {
    std::filesystem::copy_file(out + "/topology.png", SourceDir() + "/docs/images/ui-topology.png",
                               std::filesystem::copy_options::overwrite_existing);
  }
  std::printf("screenshots in %s\n", out.c_str());

  run({TempestBinary(), "kill", id, "-w", "0"});
  dev->Stop(seconds(60));
  if (HasFailure()) {
    std::cerr << ReadFileOrEmpty(dir.File("dev.out")) << ReadFileOrEmpty(dir.File("dev.err"))
              << "driver:\n"
              << driver.out << driver.err;
  }
}

}  // namespace
}  // namespace tempest::testing
