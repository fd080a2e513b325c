#ifndef TEMPEST_TESTS_SYSTEM_KAFKA_SPOUT_SPOUT_FAULTS_FIXTURE_H_
#define TEMPEST_TESTS_SYSTEM_KAFKA_SPOUT_SPOUT_FAULTS_FIXTURE_H_

// Shared by the KafkaSpout end-to-end fault tests: the test process hosts
// ZooKeeper and a single-broker dev Kafka, seeds up to 100k sequenced records
// (as many as the scenario's fault needs), runs the real `tempest local`
// binary as a child process on a Flux topology KafkaSpout (1 task, 4
// partitions) -> IdentityBolt (1 task, delayMicros) -> VerifierBolt (global),
// and checks the outcome with `tempest verify --json` and `tempest offsets
// show --json`. The spout is written in one of two Flux forms (SpoutForm):
// storm-kafka's, offsets in ZooKeeper, or storm-kafka-client's, offsets in a
// Kafka consumer group (that form needs no ZooKeeper: StartKafkaOnly).
//
// The IdentityBolt's per-tuple sleep caps the rate at which tuples reach the
// verifier, so a scenario's duplicate bound follows from its configuration
// alone: a worker that must replay replays at most what reached the verifier
// since the last commit (rate x commit interval) plus what was in flight
// when that commit was computed (max spout pending).

#include <sys/wait.h>
#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/raw_zk_client.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::spout_faults {

using std::chrono::milliseconds;
using std::chrono::seconds;

inline constexpr int kPartitions = 4;
// Records a scenario seeds unless it asks for fewer (Seed): scenarios whose
// fault needs no long stream seed fewer, and take less time.
inline constexpr int64_t kDefaultRecords = 100'000;
inline constexpr int64_t kCommitIntervalMs = 500;  // stateUpdateIntervalMs
inline constexpr int64_t kMaxSpoutPending = 1000;  // topology.max.spout.pending
inline constexpr const char* kZkRoot = "/spout-faults";
// Bounds a single `tempest local` run; a healthy one takes well under this.
inline constexpr milliseconds kRunTimeout = seconds(150);

// How the topology declares its spout.
enum class SpoutForm {
  // tempest.KafkaSpout: offsets in ZooKeeper under kZkRoot/<name>.
  kZooKeeper,
  // org.apache.storm.kafka.spout.KafkaSpout built from KafkaSpoutConfig$Builder
  // (Storm's flux-examples kafka_spout.yaml): offsets in consumer group <name>.
  kKafkaClient,
};

struct Scenario {
  std::string name;  // topic, spout id, topology name and (kKafkaClient) group id
  SpoutForm form = SpoutForm::kZooKeeper;
  std::string guarantee = "AT_LEAST_ONCE";
  double fail_fraction = 0;
  std::optional<int64_t> max_uncommitted_offsets;  // the spout's maxUncommittedOffsets
  int64_t bolt_delay_micros = 100;                 // IdentityBolt sleep per tuple, 1 task
  int64_t session_timeout_ms = 4000;               // storm.zookeeper.session.timeout
  // kKafkaClient: the group member's session.timeout.ms. The dev cluster
  // waits up to this minus 1 s for members to rejoin on every membership
  // change (and a dead member holds the group up for a session), so it is
  // kept short; the heartbeat is short to match, so that members hear of a
  // rebalance well within that wait and a session survives several missed
  // heartbeats.
  int64_t group_session_timeout_ms = 3000;
  int64_t group_heartbeat_interval_ms = 500;
  // More librdkafka consumer settings: `kafka.KEY` spout properties
  // (kZooKeeper) or setProp entries (kKafkaClient).
  std::map<std::string, std::string> kafka_props;
  std::string extra_config;  // more `config:` lines, each "  key: value\n"
  // More spout / IdentityBolt properties, each "      - name: N\n        value: V\n"
  // (kKafkaClient: the spout's own properties, stopAtEnd / deadLetterTopic).
  std::string spout_extra;
  std::string bolt_extra;
};

// A scenario with the common settings (the rest keep their defaults).
inline Scenario MakeScenario(std::string name, std::string guarantee = "AT_LEAST_ONCE",
                             double fail_fraction = 0,
                             std::optional<int64_t> max_uncommitted_offsets = std::nullopt) {
  Scenario s;
  s.name = std::move(name);
  s.guarantee = std::move(guarantee);
  s.fail_fraction = fail_fraction;
  s.max_uncommitted_offsets = max_uncommitted_offsets;
  return s;
}

// The files of one deployment of a scenario's topology, relative to the
// test's directory. Deployments that run at the same time need a sink log
// each (a VerifierBolt's log has a single writer); `tempest verify` reads
// their logs together. Runs one after another share the default files, so
// the second appends to the first's log.
struct Deployment {
  std::string topology = "topology.yaml";
  std::string log = "verifier.log";
  std::string report = "report.json";
};
inline Deployment NumberedDeployment(int n) {
  return {absl::StrCat("topology-", n, ".yaml"), absl::StrCat("verifier-", n, ".log"),
          absl::StrCat("report-", n, ".json")};
}

// One Flux property line pair, indented for WriteTopology.
inline std::string Property(const std::string& name, const std::string& value) {
  return absl::StrCat("      - name: ", name, "\n        value: ", value, "\n");
}

// Tuples per second into the verifier: the IdentityBolt's single task sleeps
// bolt_delay_micros per tuple.
inline int64_t MaxRate(const Scenario& s) { return 1'000'000 / s.bolt_delay_micros; }
inline int64_t DuplicateBound(const Scenario& s) {
  return MaxRate(s) * kCommitIntervalMs / 1000 + kMaxSpoutPending;
}

struct VerifyReport {
  int64_t received = -1;
  int64_t unique = -1;
  int64_t missing = -1;
  int64_t duplicated = -1;
  int64_t unexpected = -1;
  int64_t malformed = -1;
  std::vector<int64_t> missing_sample;  // the lowest missing values
};

// Polls the storm-kafka offset nodes of one spout id on its own thread (with
// the bare C client, so no Tempest code judges Tempest's writes) and records
// every committed offset that went below one seen before on the same
// partition. Reads fail while ZooKeeper is unreachable; those are skipped.
class CommittedOffsetWatcher {
 public:
  CommittedOffsetWatcher(std::string connect, std::string id)
      : connect_(std::move(connect)), id_(std::move(id)), thread_([this] { Run(); }) {}
  ~CommittedOffsetWatcher() { Stop(); }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Highest committed offset seen per partition (absent: none yet).
  std::map<int, int64_t> Highest() const {
    std::lock_guard<std::mutex> l(mu_);
    return highest_;
  }
  std::vector<std::string> Regressions() const {
    std::lock_guard<std::mutex> l(mu_);
    return regressions_;
  }
  int64_t reads() const { return reads_; }

 private:
  void Run() {
    std::unique_ptr<testing::RawZkClient> zk;
    while (!stop_) {
      // A client whose own session expired (e.g. across a quorum outage) is
      // replaced; one that cannot connect is retried on the next round.
      if (zk == nullptr || zk->State() == ZOO_EXPIRED_SESSION_STATE) {
        zk = testing::RawZkClient::Connect(connect_, 10'000, seconds(2));
      }
      if (zk != nullptr && zk->State() == ZOO_CONNECTED_STATE) {
        for (int p = 0; p < kPartitions && !stop_; ++p) Read(*zk, p);
      }
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
  void Read(testing::RawZkClient& zk, int p) {
    auto [rc, data] = zk.Get(absl::StrCat(kZkRoot, "/", id_, "/partition_", p));
    if (rc != ZOK) return;
    nlohmann::json j = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j["offset"].is_number_integer()) return;
    const int64_t offset = j["offset"].get<int64_t>();
    ++reads_;
    std::lock_guard<std::mutex> l(mu_);
    auto it = highest_.find(p);
    if (it == highest_.end()) {
      highest_[p] = offset;
    } else if (offset < it->second) {
      regressions_.push_back(absl::StrCat("partition ", p, ": ", it->second, " -> ", offset));
    } else {
      it->second = offset;
    }
  }

  const std::string connect_;
  const std::string id_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> reads_{0};
  mutable std::mutex mu_;
  std::map<int, int64_t> highest_;
  std::vector<std::string> regressions_;
  std::thread thread_;  // last: starts after every member above is ready
};

// The fixture. A test binary derives from it and starts zk_ / kafka_ once in
// its SetUpTestSuite (StartCluster): starting ZooKeeper (a JVM) per test
// would cost more than some scenarios take.
class SpoutFaultsFixture : public ::testing::Test {
 protected:
  static void StartCluster(testing::ZkEnsemble::Options zk_options) {
    auto zk = testing::ZkEnsemble::Start(zk_options);
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk).release();
    ASSERT_NO_FATAL_FAILURE(StartKafka());
  }
  // For SpoutForm::kKafkaClient scenarios only: no ZooKeeper (the JVM would
  // cost seconds for nothing), and zk_ stays null.
  static void StartKafkaOnly() {
    kafka_only_ = true;
    ASSERT_NO_FATAL_FAILURE(StartKafka());
  }
  static void StartKafka() {
    auto kafka = testing::DevKafka::Start(1, {});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka).release();
  }
  static void StopCluster() {
    delete kafka_;
    kafka_ = nullptr;
    delete zk_;
    zk_ = nullptr;
  }

  void SetUp() override {
    records_ = kDefaultRecords;  // until the test's Seed says otherwise
    if (!kafka_only_) {
      ASSERT_NE(zk_, nullptr);
    }
    ASSERT_NE(kafka_, nullptr);
  }

  // A topic of `records` records (Records() from here on) whose values are
  // their sequence numbers, partition p holding p*PerPartition() ..
  // (p+1)*PerPartition()-1 in order. With `partition0_key_bytes`, partition
  // 0's records carry keys that large, so the dev cluster's size-based
  // retention drops its oldest records.
  //
  // The dev cluster answers a fetch with one producer batch per partition,
  // and the producer batches up to 10k records, so a spout drains about 10k
  // of one partition before the next; `records_per_batch` produces smaller
  // batches, which the spout then takes from all partitions in turn.
  static void Seed(const std::string& topic, int64_t records = kDefaultRecords,
                   int partition0_key_bytes = 0, int64_t records_per_batch = 0) {
    ASSERT_EQ(records % kPartitions, 0);
    records_ = records;
    if (records_per_batch <= 0) records_per_batch = PerPartition();
    ASSERT_TRUE(kafka_->CreateTopic(topic, kPartitions).ok());
    for (int p = 0; p < kPartitions; ++p) {
      for (int64_t first = 0; first < PerPartition(); first += records_per_batch) {
        std::vector<testing::DevKafka::Record> batch;
        for (int64_t i = first; i < std::min(PerPartition(), first + records_per_batch); ++i) {
          batch.push_back({p == 0 ? std::string(partition0_key_bytes, 'k') : std::string(),
                           absl::StrCat(p * PerPartition() + i)});
        }
        absl::Status s = kafka_->Produce(topic, p, batch);
        ASSERT_TRUE(s.ok()) << s;
      }
    }
    for (int p = 0; p < kPartitions; ++p) {
      auto marks = kafka_->Watermarks(topic, p);
      ASSERT_TRUE(marks.ok()) << marks.status();
      if (p != 0 || partition0_key_bytes == 0) {
        ASSERT_EQ(marks->first, 0) << "the dev cluster dropped records";
      }
      ASSERT_EQ(marks->second, PerPartition());
    }
  }

  // The Flux file of `s` for deployment `d` (its path); Kafka and ZooKeeper
  // addresses come from the environment through --env-filter.
  static std::string WriteTopology(const testing::TempDir& dir, const Scenario& s,
                                   const Deployment& d = {}) {
    const std::string yaml = absl::StrCat(
        "name: ", s.name, "\n",
        "config:\n"
        "  topology.workers: 1\n"
        "  topology.acker.executors: 1\n"
        "  topology.message.timeout.secs: 30\n"
        "  topology.max.spout.pending: ", kMaxSpoutPending, "\n",
        // Short sessions: a restarted worker waits for the killed one's
        // ownership nodes to expire before it may take the partitions.
        s.form == SpoutForm::kZooKeeper
            ? absl::StrCat("  storm.zookeeper.session.timeout: ", s.session_timeout_ms, "\n")
            : std::string(),
        s.extra_config,
        s.form == SpoutForm::kKafkaClient ? KafkaClientSpout(s) : ZooKeeperSpout(s),
        "bolts:\n"
        "  - id: identity\n"
        "    className: tempest.IdentityBolt\n"
        "    parallelism: 1\n"
        "    properties:\n"
        "      - name: fields\n"
        "        value: [topic, partition, offset, key, value]\n"
        "      - name: failFraction\n"
        "        value: ", s.fail_fraction, "\n",
        "      - name: seed\n"
        "        value: 7\n"
        "      - name: delayMicros\n"
        "        value: ", s.bolt_delay_micros, "\n",
        s.bolt_extra,
        "  - id: verifier\n"
        "    className: tempest.VerifierBolt\n"
        "    parallelism: 1\n"
        "    config:\n"
        "      topology.tick.tuple.freq.secs: 1\n"
        "    properties:\n"
        "      - name: field\n"
        "        value: value\n"
        "      - name: logPath\n"
        "        value: ", dir.File(d.log), "\n",
        "      - name: reportPath\n"
        "        value: ", dir.File(d.report), "\n",
        "      - name: expected\n"
        "        value: ", Records(), "\n",
        "streams:\n"
        "  - from: kafka\n"
        "    to: identity\n"
        "    grouping:\n"
        "      type: SHUFFLE\n"
        "  - from: identity\n"
        "    to: verifier\n"
        "    grouping:\n"
        "      type: GLOBAL\n");
    const std::string path = dir.File(d.topology);
    std::ofstream(path) << yaml;
    return path;
  }

  // The `spouts:` section of SpoutForm::kZooKeeper.
  static std::string ZooKeeperSpout(const Scenario& s) {
    std::string spout_extra = s.spout_extra;
    for (const auto& [key, value] : s.kafka_props) spout_extra += Property("kafka." + key, value);
    if (s.max_uncommitted_offsets.has_value()) {
      spout_extra += Property("maxUncommittedOffsets", absl::StrCat(*s.max_uncommitted_offsets));
    }
    return absl::StrCat(
        "spouts:\n"
        "  - id: kafka\n"
        "    className: tempest.KafkaSpout\n"
        "    parallelism: 1\n"
        "    properties:\n"
        "      - name: bootstrap.servers\n"
        "        value: \"${ENV-BOOTSTRAP}\"\n"
        "      - name: zkServers\n"
        "        value: \"${ENV-ZK}\"\n"
        "      - name: topics\n"
        "        value: ", s.name, "\n",
        "      - name: zkRoot\n"
        "        value: ", kZkRoot, "\n",
        "      - name: id\n"
        "        value: ", s.name, "\n",
        "      - name: processingGuarantee\n"
        "        value: ", s.guarantee, "\n",
        "      - name: stateUpdateIntervalMs\n"
        "        value: ", kCommitIntervalMs, "\n",
        "      - name: stopAtEnd\n"
        "        value: true\n",
        spout_extra);
  }

  // The `components:` and `spouts:` sections of SpoutForm::kKafkaClient, as
  // Storm's flux-examples kafka_spout.yaml writes them: the settings on the
  // KafkaSpoutConfig$Builder (group s.name, commits every kCommitIntervalMs),
  // Tempest's own stopAtEnd on the spout.
  static std::string KafkaClientSpout(const Scenario& s) {
    std::string props;
    for (const auto& [key, value] : s.kafka_props) {
      absl::StrAppend(&props, "              \"", key, "\": \"", value, "\",\n");
    }
    std::string builder_extra;
    if (s.max_uncommitted_offsets.has_value()) {
      builder_extra = absl::StrCat("      - name: \"setMaxUncommittedOffsets\"\n"
                                   "        args: [", *s.max_uncommitted_offsets, "]\n");
    }
    return absl::StrCat(
        "components:\n"
        "  - id: \"spoutConfigBuilder\"\n"
        "    className: \"org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder\"\n"
        "    constructorArgs:\n"
        "      - \"${ENV-BOOTSTRAP}\"\n"
        "      - [\"", s.name, "\"]\n"
        "    properties:\n"
        "      - name: \"firstPollOffsetStrategy\"\n"
        "        value: UNCOMMITTED_EARLIEST\n"
        "    configMethods:\n"
        "      - name: \"setProp\"\n"
        "        args:\n"
        "          - {\n"
        "              \"key.deserializer\": "
        "\"org.apache.kafka.common.serialization.StringDeserializer\",\n"
        "              \"value.deserializer\": "
        "\"org.apache.kafka.common.serialization.StringDeserializer\",\n"
        "              \"group.id\": \"", s.name, "\",\n",
        props,
        "              \"heartbeat.interval.ms\": ", s.group_heartbeat_interval_ms, ",\n"
        "              \"session.timeout.ms\": ", s.group_session_timeout_ms, "\n"
        "            }\n"
        "      - name: \"setProcessingGuarantee\"\n"
        "        args: [", s.guarantee, "]\n"
        "      - name: \"setOffsetCommitPeriodMs\"\n"
        "        args: [", kCommitIntervalMs, "]\n",
        builder_extra,
        "  - id: \"spoutConfig\"\n"
        "    className: \"org.apache.storm.kafka.spout.KafkaSpoutConfig\"\n"
        "    constructorArgs:\n"
        "      - ref: \"spoutConfigBuilder\"\n"
        "spouts:\n"
        "  - id: kafka\n"
        "    className: \"org.apache.storm.kafka.spout.KafkaSpout\"\n"
        "    parallelism: 1\n"
        "    constructorArgs:\n"
        "      - ref: \"spoutConfig\"\n"
        "    properties:\n"
        "      - name: \"stopAtEnd\"\n"
        "        value: true\n",
        s.spout_extra);
  }

  // Starts `tempest local TOPOLOGY --env-filter --until-complete`; run n
  // writes run-n.out / run-n.err.
  static std::unique_ptr<os::ChildProcess> StartWorker(const testing::TempDir& dir,
                                                       const std::string& topology, int run) {
    os::ChildProcess::Options o;
    o.argv = {testing::TempestBinary(), "local", topology, "--env-filter", "--until-complete"};
    o.stdout_path = dir.File(absl::StrCat("run-", run, ".out"));
    o.stderr_path = dir.File(absl::StrCat("run-", run, ".err"));
    o.env = {{"BOOTSTRAP", kafka_->bootstrap_servers()}};
    if (zk_ != nullptr) o.env["ZK"] = zk_->ConnectString();
    auto child = os::ChildProcess::Start(o);
    EXPECT_TRUE(child.ok()) << child.status();
    return child.ok() ? std::move(*child) : nullptr;
  }

  // Waits for a worker to finish by itself and checks it exited cleanly.
  static void ExpectCompletes(const testing::TempDir& dir, os::ChildProcess& child, int run) {
    std::optional<int> status = child.WaitFor(kRunTimeout);
    const std::string out = testing::ReadFileOrEmpty(dir.File(absl::StrCat("run-", run, ".out")));
    const std::string err = testing::ReadFileOrEmpty(dir.File(absl::StrCat("run-", run, ".err")));
    ASSERT_TRUE(status.has_value()) << "run " << run << " did not complete\n" << out << err;
    ASSERT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << "run " << run << ": " << os::DescribeWaitStatus(*status) << "\n" << out << err;
    EXPECT_NE(out.find("done: complete"), std::string::npos) << out;
  }

  // Complete lines in the verifier logs so far.
  static int64_t LoggedLines(const testing::TempDir& dir,
                             const std::vector<std::string>& logs = {"verifier.log"}) {
    int64_t n = 0;
    for (const std::string& name : logs) {
      const std::string log = testing::ReadFileOrEmpty(dir.File(name));
      for (char c : log) n += c == '\n';
    }
    return n;
  }

  // Waits until the verifiers have durably logged at least `lines` values:
  // the stream is well under way (and commits have happened) but far from
  // done.
  static bool WaitForLoggedLines(const testing::TempDir& dir, int64_t lines,
                                 const std::vector<std::string>& logs = {"verifier.log"}) {
    return testing::Eventually(seconds(90), [&] { return LoggedLines(dir, logs) >= lines; },
                               milliseconds(20));
  }

  // Waits (at most `deadline`) until the verifier log has not grown for
  // `quiet`; returns whether it stalled.
  static bool WaitForStall(const testing::TempDir& dir, milliseconds quiet, milliseconds deadline) {
    int64_t last = LoggedLines(dir);
    auto last_change = std::chrono::steady_clock::now();
    return testing::Eventually(deadline, [&] {
      const int64_t now_lines = LoggedLines(dir);
      const auto now = std::chrono::steady_clock::now();
      if (now_lines != last) {
        last = now_lines;
        last_change = now;
      }
      return now - last_change >= quiet;
    }, milliseconds(50));
  }

  // Runs a short `tempest` command to completion and returns its stdout.
  static std::string RunTempest(const testing::TempDir& dir, const std::string& name,
                                std::vector<std::string> args) {
    args.insert(args.begin(), testing::TempestBinary());
    const testing::CommandRun run = testing::RunCommand(args, dir.File(name), seconds(60));
    EXPECT_TRUE(run.finished && run.exit_code == 0) << "tempest " << args[1] << ": " << run.err;
    return run.out;
  }

  // `tempest verify LOG... --expected Records() --json`, computed offline.
  static VerifyReport Verify(const testing::TempDir& dir,
                             const std::vector<std::string>& logs = {"verifier.log"}) {
    std::vector<std::string> args = {"verify"};
    for (const std::string& log : logs) args.push_back(dir.File(log));
    args.insert(args.end(), {"--expected", absl::StrCat(Records()), "--json"});
    const std::string text = RunTempest(dir, "verify", std::move(args));
    VerifyReport r;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(j.is_object()) << text;
    if (!j.is_object()) return r;
    r.received = j.value("received", int64_t{-1});
    r.unique = j.value("unique", int64_t{-1});
    r.missing = j.value("missing", int64_t{-1});
    r.duplicated = j.value("duplicated", int64_t{-1});
    r.unexpected = j.value("unexpected", int64_t{-1});
    r.malformed = j.value("malformed", int64_t{-1});
    if (j["missing_sample"].is_array()) {
      for (const auto& v : j["missing_sample"]) {
        if (v.is_number_integer()) r.missing_sample.push_back(v.get<int64_t>());
      }
    }
    std::printf("verifier report: %s", text.c_str());
    return r;
  }

  // `tempest offsets show --json` for spout `id`: partition -> committed offset.
  static std::map<int, int64_t> CommittedOffsets(const testing::TempDir& dir,
                                                 const std::string& id) {
    const std::string text =
        RunTempest(dir, "offsets", {"offsets", "show", "--zk", zk_->ConnectString(), "--root",
                                    kZkRoot, "--id", id, "--json"});
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(j.is_object() && j["partitions"].is_array()) << text;
    std::map<int, int64_t> committed;
    if (!j.is_object() || !j["partitions"].is_array()) return committed;
    for (const auto& p : j["partitions"]) {
      committed[p.value("partition", -1)] = p.value("committed_offset", int64_t{-1});
    }
    return committed;
  }

  // `tempest offsets history --json` for spout `id`: partition -> its journal
  // entries, oldest first, as the CLI prints them ("type", "time", "from",
  // "to", "session", ...).
  static std::map<int, std::vector<nlohmann::json>> JournalEntries(const testing::TempDir& dir,
                                                                   const std::string& id) {
    const std::string text =
        RunTempest(dir, "history", {"offsets", "history", "--zk", zk_->ConnectString(), "--root",
                                    kZkRoot, "--id", id, "--json"});
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(j.is_object() && j["partitions"].is_array()) << text;
    std::map<int, std::vector<nlohmann::json>> journals;
    if (!j.is_object() || !j["partitions"].is_array()) return journals;
    for (const auto& p : j["partitions"]) {
      std::vector<nlohmann::json>& entries = journals[p.value("partition", -1)];
      if (!p["entries"].is_array()) continue;
      for (const auto& e : p["entries"]) entries.push_back(e);
    }
    return journals;
  }

  // The final run committed every partition up to its log end, in the
  // storm-kafka nodes that `tempest offsets show` reads.
  static void ExpectCommittedToLogEnd(const testing::TempDir& dir, const std::string& id) {
    std::map<int, int64_t> expected;
    for (int p = 0; p < kPartitions; ++p) expected[p] = PerPartition();
    EXPECT_EQ(CommittedOffsets(dir, id), expected);
  }

  // The `failed=N` of the final `done:` line of a run's stdout; -1 if absent.
  static int64_t FailedInDoneLine(const std::string& out) {
    const size_t done = out.rfind("done: ");
    if (done == std::string::npos) return -1;
    const size_t failed = out.find(" failed=", done);
    if (failed == std::string::npos) return -1;
    return std::strtoll(out.c_str() + failed + 8, nullptr, 10);
  }

  static void Print(const std::string& scenario, const VerifyReport& r, int64_t bound) {
    std::printf("[ %s ] lost=%lld duplicated=%lld (duplicate bound %lld)\n", scenario.c_str(),
                static_cast<long long>(r.missing), static_cast<long long>(r.duplicated),
                static_cast<long long>(bound));
    std::fflush(stdout);
  }

  // At-least-once end state: every record, nothing foreign, few duplicates.
  static void ExpectNothingLost(const VerifyReport& r, int64_t duplicate_bound) {
    EXPECT_EQ(r.missing, 0);
    EXPECT_EQ(r.unique, Records());
    EXPECT_EQ(r.unexpected, 0);
    EXPECT_EQ(r.malformed, 0);
    EXPECT_GE(r.duplicated, 0);
    EXPECT_LE(r.duplicated, duplicate_bound);
  }

  // The running test's record count (its Seed's) and records per partition.
  static int64_t Records() { return records_; }
  static int64_t PerPartition() { return records_ / kPartitions; }

  inline static int64_t records_ = kDefaultRecords;
  inline static testing::ZkEnsemble* zk_ = nullptr;  // null after StartKafkaOnly
  inline static bool kafka_only_ = false;
  inline static testing::DevKafka* kafka_ = nullptr;
};

}  // namespace tempest::spout_faults

#endif  // TEMPEST_TESTS_SYSTEM_KAFKA_SPOUT_SPOUT_FAULTS_FIXTURE_H_
