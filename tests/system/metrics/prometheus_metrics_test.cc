// Prometheus metrics of a whole cluster as a user runs it: `tempest dev`
// starts every supervisor with a metrics port and prints
// `supervisor-metrics=HOST:PORT`; with a topology running, nimbus's
// /metrics and each supervisor's /metrics (its own series and its workers'
// registries from their local heartbeat files) are scraped, must pass
// `promtool check metrics` (Prometheus's own linter) without a single
// complaint, repeat no series, and show the topology working: emitted and
// acked counts above zero on both daemons. A SIGKILLed worker shows up as a
// restart on its supervisor and on nimbus; a KafkaSpout's partitions show
// their committed and log-end offsets and lag. The alert rules of the user
// guide fire on their symptoms and stay quiet otherwise (`promtool test
// rules`), a supervisor whose metrics port is taken or out of range stops
// with one clear error, and one whose config protects reads wants the API
// token for /metrics.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "common/net/http_client.h"
#include "common/os/child_process.h"
#include "common/os/loopback.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tempest_dev.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

struct Address {
  std::string host;
  int port = 0;
};

Address ParseAddress(const std::string& text) {
  Address a;
  const size_t colon = text.rfind(':');
  a.host = text.substr(0, colon);
  EXPECT_TRUE(colon != std::string::npos && absl::SimpleAtoi(text.substr(colon + 1), &a.port))
      << text;
  return a;
}

// Every value of `prefix` lines in `path` (a `tempest dev` stdout).
std::vector<std::string> LinesWithPrefix(const std::string& path, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(ReadFileOrEmpty(path));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line.substr(prefix.size()));
  }
  return out;
}

// GET /metrics; empty on any failure (reported).
std::string Scrape(const Address& a, const std::string& token = "") {
  net::HttpClient client(a.host, a.port, milliseconds(20000));
  if (!token.empty()) client.set_header("Authorization", "Bearer " + token);
  absl::StatusOr<net::HttpClientResponse> r = client.Get("/metrics");
  EXPECT_TRUE(r.ok()) << a.host << ":" << a.port << ": " << r.status();
  if (!r.ok()) return "";
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->content_type.rfind("text/plain; version=0.0.4", 0), 0u) << r->content_type;
  return r->status == 200 ? r->body : "";
}

// `promtool check metrics` (names, types, units, help) must say nothing and
// exit 0; promtool does not look for repeated series, so that is checked
// here too, with one HELP and one TYPE per family.
void ExpectValidExposition(const TempDir& dir, const std::string& name, const std::string& text) {
  ASSERT_FALSE(text.empty()) << name;
  const std::string file = dir.File(name + ".prom");
  std::ofstream(file) << text;
  CommandRun lint = RunCommand({"/bin/sh", "-c", "promtool check metrics < " + file},
                               dir.File(name + "-promtool"), milliseconds(60000));
  EXPECT_TRUE(lint.finished) << name;
  EXPECT_EQ(lint.exit_code, 0) << name << ": promtool check metrics:\n" << lint.out << lint.err;
  EXPECT_EQ(lint.out + lint.err, "") << name << ": promtool check metrics complained";
  std::set<std::string> helps, types, series;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# HELP ", 0) == 0) {
      EXPECT_TRUE(helps.insert(line.substr(7, line.find(' ', 7) - 7)).second)
          << name << ": " << line;
    } else if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(types.insert(line.substr(7, line.find(' ', 7) - 7)).second)
          << name << ": " << line;
    } else if (!line.empty() && line[0] != '#') {
      EXPECT_TRUE(series.insert(line.substr(0, line.rfind(' '))).second)
          << name << ": repeated series " << line;
    }
  }
  EXPECT_EQ(helps, types) << name;
}

// The sum of the samples of `metric` whose label set contains every one of
// `labels` (each given as `key="value"`).
double Sum(const std::string& text, const std::string& metric,
           const std::vector<std::string>& labels = {}) {
  double total = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(metric + "{", 0) != 0 && line.rfind(metric + " ", 0) != 0) continue;
    const std::string head = line.substr(0, line.rfind(' '));
    bool match = true;
    for (const std::string& l : labels) match = match && head.find(l) != std::string::npos;
    double v = 0;
    if (match && absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) total += v;
  }
  return total;
}

bool HasSeries(const std::string& text, const std::string& metric,
               const std::vector<std::string>& labels = {}) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(metric + "{", 0) != 0 && line.rfind(metric + " ", 0) != 0) continue;
    bool match = true;
    for (const std::string& l : labels) match = match && line.find(l) != std::string::npos;
    if (match) return true;
  }
  return false;
}

class PrometheusMetricsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (dev_ != nullptr) dev_->Stop(seconds(60));
    if (HasFailure()) {
      std::cerr << ReadFileOrEmpty(dir_.File("dev.out")) << ReadFileOrEmpty(dir_.File("dev.err"));
      std::error_code ec;
      for (const auto& e :
           std::filesystem::recursive_directory_iterator(dir_.File("cluster"), ec)) {
        if (e.path().extension() != ".log") continue;
        std::string text = ReadFileOrEmpty(e.path().string());
        if (text.size() > 4000) text = text.substr(text.size() - 4000);
        std::cerr << "==== " << e.path().string() << "\n" << text << "\n";
      }
    }
  }

  void StartDev(int supervisors) {
    TempestDevOptions options;
    options.supervisors = supervisors;
    auto started = StartTempestDev(dir_, options);
    ASSERT_TRUE(started.ok()) << started.status();
    dev_ = *std::move(started);
    std::vector<std::string> nimbus = LinesWithPrefix(dir_.File("dev.out"), "nimbus=");
    ASSERT_EQ(nimbus.size(), 1u);
    nimbus_text_ = nimbus[0];
    nimbus_ = ParseAddress(nimbus[0]);
    std::vector<std::string> token_file = LinesWithPrefix(dir_.File("dev.out"), "token-file=");
    if (!token_file.empty()) {
      token_ = ReadFileOrEmpty(token_file[0]);
      while (!token_.empty() && (token_.back() == '\n' || token_.back() == ' ')) token_.pop_back();
    }
    // One supervisor-metrics= line right after each supervisor= line.
    const std::vector<std::string> ids = LinesWithPrefix(dir_.File("dev.out"), "supervisor=");
    const std::vector<std::string> metrics =
        LinesWithPrefix(dir_.File("dev.out"), "supervisor-metrics=");
    ASSERT_EQ(ids.size(), static_cast<size_t>(supervisors));
    ASSERT_EQ(metrics.size(), ids.size());
    for (const std::string& m : metrics) supervisors_.push_back(ParseAddress(m));
    supervisor_ids_ = ids;
  }

  CommandRun Tempest(std::vector<std::string> args) {
    std::vector<std::string> argv = {TempestBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--nimbus", nimbus_text_});
    return RunCommand(argv, dir_.File(absl::StrCat("cmd-", ++commands_)), milliseconds(60000),
                      {{"TEMPEST_TOKEN_FILE", dir_.File("cluster/api-token")}});
  }

  // The pid of a worker of supervisor `index` (1-based, as `tempest dev`
  // names them), from its worker.json; 0 if none.
  pid_t WorkerPidOf(int index) {
    const std::filesystem::path workers = std::filesystem::path(dir_.File("cluster")) /
                                          absl::StrCat("supervisor-", index) / "supervisor" /
                                          "workers";
    std::error_code ec;
    for (const auto& slot : std::filesystem::directory_iterator(workers, ec)) {
      json j = json::parse(ReadFileOrEmpty((slot.path() / "worker.json").string()), nullptr, false);
      if (j.is_object() && j.contains("pid")) return j["pid"].get<pid_t>();
    }
    return 0;
  }

  TempDir dir_{"tempest-prometheus"};
  std::unique_ptr<os::ChildProcess> dev_;
  std::string nimbus_text_;
  Address nimbus_;
  std::string token_;
  std::vector<Address> supervisors_;
  std::vector<std::string> supervisor_ids_;
  int commands_ = 0;
};

TEST_F(PrometheusMetricsTest, NimbusAndSupervisorsServeLintCleanSeriesOfARunningTopology) {
  StartDev(2);
  ASSERT_FALSE(HasFatalFailure());

  // Before any topology: the supervisors' own series.
  for (size_t i = 0; i < supervisors_.size(); ++i) {
    const std::string text = Scrape(supervisors_[i]);
    ExpectValidExposition(dir_, absl::StrCat("supervisor-", i + 1, "-idle"), text);
    EXPECT_TRUE(HasSeries(text, "tempest_supervisor_info",
                          {"supervisor_id=\"" + supervisor_ids_[i] + "\""}))
        << text;
    EXPECT_EQ(Sum(text, "tempest_supervisor_slots_offered"), 2) << text;
    EXPECT_EQ(Sum(text, "tempest_supervisor_workers_running"), 0) << text;
    EXPECT_EQ(Sum(text, "tempest_zk_session_state"), 1) << text;  // connected
  }

  // A paced topology that keeps running for the whole test, two workers.
  std::string yaml = ExampleWithPaths(SourceDir() + "/examples/cluster-generator-verifier.yaml",
                                      "${ENV-OUT}/cluster-gv", dir_.File("gv"));
  yaml = absl::StrReplaceAll(yaml, {{"value: 0          # unlimited", "value: 500   # paced"},
                                    {"value: 200000", "value: 100000000"}});
  std::ofstream(dir_.File("topology.yaml")) << yaml;
  CommandRun submit = Tempest({"submit", dir_.File("topology.yaml")});
  ASSERT_EQ(submit.exit_code, 0) << submit.out << submit.err;
  std::string id = submit.out;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  ASSERT_EQ(id.rfind("cluster-generator-verifier-", 0), 0u) << id;
  // Both daemons label a topology by its id and its name.
  const std::string topology_id = "topology_id=\"" + id + "\"";
  const std::string topology = topology_id + ",topology=\"cluster-generator-verifier\"";

  // The workers' registries, through their supervisors: tuples emitted and
  // trees acked, under the topology's label.
  std::vector<std::string> sup_text(supervisors_.size());
  EXPECT_TRUE(Eventually(
      seconds(120),
      [&] {
        double emitted = 0, acked = 0, running = 0;
        for (size_t i = 0; i < supervisors_.size(); ++i) {
          sup_text[i] = Scrape(supervisors_[i]);
          emitted += Sum(sup_text[i], "tempest_emitted_total", {topology});
          acked += Sum(sup_text[i], "tempest_acked_total", {topology, "component=\"generator\""});
          running += Sum(sup_text[i], "tempest_supervisor_workers_running");
        }
        return emitted > 0 && acked > 0 && running == 2;
      },
      milliseconds(1000)))
      << sup_text[0] << "\n----\n"
      << sup_text[1];
  for (size_t i = 0; i < supervisors_.size(); ++i) {
    ExpectValidExposition(dir_, absl::StrCat("supervisor-", i + 1), sup_text[i]);
    EXPECT_TRUE(
        HasSeries(sup_text[i], "tempest_supervisor_worker_heartbeat_age_seconds", {topology}))
        << sup_text[i];
    // Latencies are converted to seconds; nothing in microseconds is left.
    EXPECT_EQ(sup_text[i].find("_us{"), std::string::npos);
    EXPECT_GE(Sum(sup_text[i], "tempest_supervisor_worker_launches_total"), 1);
  }
  EXPECT_TRUE(
      HasSeries(sup_text[0] + sup_text[1], "tempest_execute_latency_seconds_count", {topology}));

  // Nimbus: per component and stream, from the workers' beats in ZooKeeper.
  std::string nimbus_text;
  EXPECT_TRUE(Eventually(
      seconds(60),
      [&] {
        nimbus_text = Scrape(nimbus_, token_);
        return Sum(nimbus_text, "tempest_component_emitted_total",
                   {topology_id, "component=\"generator\""}) > 0 &&
               Sum(nimbus_text, "tempest_component_acked_total",
                   {topology_id, "component=\"generator\""}) > 0 &&
               Sum(nimbus_text, "tempest_component_executed_total", {topology_id}) > 0;
      },
      milliseconds(1000)))
      << nimbus_text;
  ExpectValidExposition(dir_, "nimbus", nimbus_text);
  EXPECT_EQ(Sum(nimbus_text, "tempest_nimbus_leader"), 1);
  for (const std::string& sup : supervisor_ids_) {
    EXPECT_EQ(
        Sum(nimbus_text, "tempest_supervisor_slots_offered", {"supervisor_id=\"" + sup + "\""}), 2)
        << nimbus_text;
  }
  EXPECT_TRUE(HasSeries(nimbus_text, "tempest_component_complete_latency_seconds_count",
                        {topology_id, "component=\"generator\""}));
  EXPECT_TRUE(HasSeries(nimbus_text, "tempest_worker_restarts_total", {topology_id}));

  // A worker SIGKILLed: its supervisor counts the restart, and so does the
  // slot's total that nimbus serves once the next worker beats.
  const pid_t victim = WorkerPidOf(1);
  ASSERT_GT(victim, 0);
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  std::string restarted;
  EXPECT_TRUE(Eventually(
      seconds(90),
      [&] {
        restarted = Scrape(supervisors_[0]);
        return Sum(restarted, "tempest_supervisor_worker_restarts_total") >= 1 &&
               Sum(restarted, "tempest_supervisor_workers_running") == 1 &&
               Sum(restarted, "tempest_emitted_total", {topology}) > 0;
      },
      milliseconds(1000)))
      << restarted;
  ExpectValidExposition(dir_, "supervisor-1-restarted", restarted);
  EXPECT_TRUE(Eventually(
      seconds(90),
      [&] {
        nimbus_text = Scrape(nimbus_, token_);
        return Sum(nimbus_text, "tempest_worker_restarts_total", {topology_id}) >= 1;
      },
      milliseconds(1000)))
      << nimbus_text;
  ExpectValidExposition(dir_, "nimbus-restarted", nimbus_text);

  // A KafkaSpout: its partitions' offsets and lag, per partition on nimbus
  // and as the worker's own gauges on its supervisor.
  const std::vector<std::string> bootstrap =
      LinesWithPrefix(dir_.File("dev.out"), "bootstrap.servers=");
  const std::vector<std::string> zk = LinesWithPrefix(dir_.File("dev.out"), "zookeeper=");
  ASSERT_EQ(bootstrap.size(), 1u);
  ASSERT_EQ(zk.size(), 1u);
  CommandRun produce = RunCommand({"/bin/sh", "-c",
                                   "kcat -P -b " + bootstrap[0] + " -t sentences < " + SourceDir() +
                                       "/examples/data/sentences.txt"},
                                  dir_.File("kcat"), milliseconds(60000));
  ASSERT_EQ(produce.exit_code, 0) << produce.err;
  std::string kafka_yaml =
      absl::StrReplaceAll(ReadFileOrEmpty(SourceDir() + "/examples/kafka-transform.yaml"),
                          {{"value: true        # finite", "value: false       # keeps running"}});
  std::ofstream(dir_.File("kafka.yaml")) << kafka_yaml;
  std::vector<std::string> submit_kafka = {TempestBinary(), "submit",   dir_.File("kafka.yaml"),
                                           "--env-filter",  "--nimbus", nimbus_text_};
  CommandRun submitted = RunCommand(submit_kafka, dir_.File("submit-kafka"), milliseconds(60000),
                                    {{"TEMPEST_TOKEN_FILE", dir_.File("cluster/api-token")},
                                     {"BOOTSTRAP", bootstrap[0]},
                                     {"ZK", zk[0]}});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  std::string kafka_id = submitted.out;
  while (!kafka_id.empty() && (kafka_id.back() == '\n' || kafka_id.back() == ' ')) {
    kafka_id.pop_back();
  }
  const std::vector<std::string> partition = {"topology_id=\"" + kafka_id + "\"",
                                              "component=\"sentences\"", "topic=\"sentences\""};
  EXPECT_TRUE(Eventually(
      seconds(120),
      [&] {
        nimbus_text = Scrape(nimbus_, token_);
        return Sum(nimbus_text, "tempest_kafka_partition_committed_offset", partition) > 0 &&
               Sum(nimbus_text, "tempest_kafka_partition_log_end_offset", partition) > 0 &&
               HasSeries(nimbus_text, "tempest_kafka_partition_lag", partition);
      },
      milliseconds(1000)))
      << nimbus_text;
  ExpectValidExposition(dir_, "nimbus-kafka", nimbus_text);
  std::string with_kafka;
  EXPECT_TRUE(Eventually(
      seconds(60),
      [&] {
        with_kafka.clear();
        for (const Address& a : supervisors_) with_kafka += Scrape(a);
        return HasSeries(with_kafka, "tempest_kafka_spout_lag",
                         {"topology_id=\"" + kafka_id + "\"", "topic=\"sentences\""});
      },
      milliseconds(1000)))
      << with_kafka;
  for (size_t i = 0; i < supervisors_.size(); ++i) {
    ExpectValidExposition(dir_, absl::StrCat("supervisor-", i + 1, "-kafka"),
                          Scrape(supervisors_[i]));
  }

  for (const char* name : {"cluster-generator-verifier", "kafka-transform"}) {
    CommandRun kill = Tempest({"kill", name, "-w", "1"});
    EXPECT_EQ(kill.exit_code, 0) << kill.err;
  }

  // With tempest.api.auth.reads, a supervisor's /metrics wants the API
  // token, as nimbus's GET endpoints do.
  absl::StatusOr<int> slot = os::FindFreeLoopbackPort();
  absl::StatusOr<int> metrics_port = os::FindFreeLoopbackPort();
  ASSERT_TRUE(slot.ok() && metrics_port.ok());
  os::ChildProcess::Options o;
  o.argv = {TempestBinary(),
            "supervisor",
            "-c",
            "storm.zookeeper.servers=[\"" + zk[0] + "\"]",
            "-c",
            "storm.local.dir=" + dir_.File("guarded"),
            "-c",
            absl::StrCat("supervisor.slots.ports=[", *slot, "]"),
            "-c",
            absl::StrCat("tempest.supervisor.metrics.port=", *metrics_port),
            "-c",
            "tempest.api.token.file=" + dir_.File("cluster/api-token"),
            "-c",
            "tempest.api.auth.reads=true",
            // It joins the dev cluster's ZooKeeper under the cluster's identity.
            "-c",
            "tempest.zookeeper.auth.file=" + dir_.File("cluster/zk-auth")};
  o.stdout_path = dir_.File("guarded.out");
  o.stderr_path = dir_.File("guarded.err");
  auto guarded = os::ChildProcess::Start(o);
  ASSERT_TRUE(guarded.ok()) << guarded.status();
  ASSERT_TRUE(WaitForLineWithPrefix(dir_.File("guarded.out"), "supervisor=", seconds(60)))
      << ReadFileOrEmpty(dir_.File("guarded.err"));
  net::HttpClient anonymous("127.0.0.1", *metrics_port, milliseconds(20000));
  absl::StatusOr<net::HttpClientResponse> refused = anonymous.Get("/metrics");
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->status, 401) << refused->body;
  ASSERT_FALSE(token_.empty());
  const std::string allowed = Scrape(Address{"127.0.0.1", *metrics_port}, token_);
  EXPECT_TRUE(HasSeries(allowed, "tempest_supervisor_info")) << allowed;
  (*guarded)->Stop(seconds(30));
}

// The user guide's alert rules, as printed there, on synthetic series:
// each alert fires on its symptom and not on a healthy topology.
TEST(PrometheusAlertRulesTest, UserGuideRulesFireOnTheirSymptomsOnly) {
  const std::string guide = ReadFileOrEmpty(SourceDir() + "/docs/user-guide.md");
  const size_t start = guide.find("groups:\n  - name: tempest\n");
  ASSERT_NE(start, std::string::npos) << "no alert rules in docs/user-guide.md";
  const size_t end = guide.find("```", start);
  ASSERT_NE(end, std::string::npos);
  TempDir dir("tempest-alert-rules");
  std::ofstream(dir.File("rules.yml")) << guide.substr(start, end - start);
  std::ofstream(dir.File("test.yml")) << R"(rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'tempest_kafka_partition_lag{topology="t",component="k",topic="x",partition="0"}'
        values: '20000+100x60'
      - series: 'tempest_component_acked_total{topology="t",component="k",executor="1-1",stream="default"}'
        values: '5x60'
      - series: 'tempest_component_acked_total{topology="t",component="b",executor="2-2",input_component="k",stream="default"}'
        values: '0+10x60'
      - series: 'tempest_worker_restarts_total{topology="t",topology_id="t-1-1",supervisor_id="s",host="h",port="6700"}'
        values: '0+1x10 10x50'
      - series: 'tempest_zk_session_state{job="tempest-supervisor",instance="w1:9102"}'
        values: '1 1 1 4x57'
      - series: 'tempest_zk_session_state{job="tempest-supervisor",instance="w1:9102",topology_id="t-1-1",topology="t",port="6700"}'
        values: '1x60'
    alert_rule_test:
      - eval_time: 40m
        alertname: TempestKafkaLagGrowing
        exp_alerts:
          - exp_labels: {topology: t, component: k}
      - eval_time: 40m
        alertname: TempestTopologyStalled
        exp_alerts:
          - exp_labels: {topology: t}
      - eval_time: 10m
        alertname: TempestWorkerRestarting
        exp_alerts:
          - exp_labels: {topology: t, host: h, port: "6700"}
      - eval_time: 50m
        alertname: TempestWorkerRestarting
        exp_alerts: []
      - eval_time: 10m
        alertname: TempestSupervisorZooKeeperLost
        exp_alerts:
          - exp_labels: {job: tempest-supervisor, instance: "w1:9102"}
  - interval: 1m
    input_series:
      - series: 'tempest_kafka_partition_lag{topology="t",component="k",topic="x",partition="0"}'
        values: '50x60'
      - series: 'tempest_component_acked_total{topology="t",component="k",executor="1-1",stream="default"}'
        values: '0+100x60'
      - series: 'tempest_worker_restarts_total{topology="t",topology_id="t-1-1",supervisor_id="s",host="h",port="6700"}'
        values: '3x60'
      - series: 'tempest_zk_session_state{job="tempest-supervisor",instance="w1:9102"}'
        values: '1x60'
    alert_rule_test:
      - eval_time: 40m
        alertname: TempestKafkaLagGrowing
        exp_alerts: []
      - eval_time: 40m
        alertname: TempestTopologyStalled
        exp_alerts: []
      - eval_time: 40m
        alertname: TempestWorkerRestarting
        exp_alerts: []
      - eval_time: 40m
        alertname: TempestSupervisorZooKeeperLost
        exp_alerts: []
)";
  CommandRun check = RunCommand({"promtool", "check", "rules", dir.File("rules.yml")},
                                dir.File("check"), milliseconds(60000));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  CommandRun test = RunCommand({"promtool", "test", "rules", dir.File("test.yml")},
                               dir.File("test"), milliseconds(60000));
  EXPECT_EQ(test.exit_code, 0) << test.out << test.err;
  EXPECT_NE(test.out.find("SUCCESS"), std::string::npos) << test.out << test.err;
}

// A port the supervisor cannot use stops it before it touches ZooKeeper,
// with one message naming the key.
TEST(SupervisorMetricsPortTest, ATakenOrInvalidPortIsOneClearError) {
  TempDir dir("tempest-metrics-port");
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int taken = ntohs(addr.sin_port);
  auto supervisor = [&](const std::string& name, const std::string& port) {
    return RunCommand(
        {TempestBinary(), "supervisor", "-c", "storm.zookeeper.servers=[\"127.0.0.1\"]", "-c",
         "storm.zookeeper.port=1", "-c", "storm.local.dir=" + dir.File(name), "-c",
         "tempest.supervisor.metrics.port=" + port},
        dir.File(name), milliseconds(60000));
  };
  CommandRun busy = supervisor("busy", absl::StrCat(taken));
  EXPECT_EQ(busy.exit_code, 1) << busy.out << busy.err;
  EXPECT_NE(busy.err.find(absl::StrCat("cannot serve /metrics on 127.0.0.1:", taken)),
            std::string::npos)
      << busy.err;
  EXPECT_NE(busy.err.find("tempest.supervisor.metrics"), std::string::npos) << busy.err;
  EXPECT_EQ(busy.out.find("supervisor="), std::string::npos) << busy.out;
  ::close(fd);

  CommandRun invalid = supervisor("invalid", "70000");
  EXPECT_EQ(invalid.exit_code, 2) << invalid.out << invalid.err;
  EXPECT_NE(invalid.err.find("tempest.supervisor.metrics.port"), std::string::npos) << invalid.err;
}

}  // namespace
}  // namespace tempest::testing
