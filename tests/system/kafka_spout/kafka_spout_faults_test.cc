// KafkaSpout fault tolerance end to end: the real `tempest local` binary as a
// child process, a real ZooKeeper and the dev Kafka cluster in this process,
// 100k sequenced records, and the VerifierBolt's durable log checked with
// `tempest verify`. Faults: the worker SIGKILLed mid-stream and restarted
// (AT_LEAST_ONCE and AT_MOST_ONCE), the Kafka broker down then up, and a bolt
// failing 10% of its tuples.
//
// Topology: KafkaSpout (1 task, 4 partitions) -> IdentityBolt (1 task,
// delayMicros) -> VerifierBolt (global). The IdentityBolt's per-tuple sleep
// caps the rate at which tuples reach the verifier, so the duplicate bound
// below follows from the configuration alone: a restarted worker replays at
// most what reached the verifier since the last commit (rate x commit
// interval) plus what was in flight when that commit was computed (max
// spout pending).

#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"

namespace tempest {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kPartitions = 4;
constexpr int64_t kRecords = 100'000;
constexpr int64_t kPerPartition = kRecords / kPartitions;
constexpr int64_t kCommitIntervalMs = 500;  // stateUpdateIntervalMs
constexpr int64_t kMaxSpoutPending = 1000;  // topology.max.spout.pending
constexpr int64_t kBoltDelayMicros = 100;   // IdentityBolt sleep per tuple, 1 task
constexpr int64_t kMaxRate = 1'000'000 / kBoltDelayMicros;  // tuples/s into the verifier
constexpr int64_t kDuplicateBound = kMaxRate * kCommitIntervalMs / 1000 + kMaxSpoutPending;
constexpr int kBrokerId = 1;  // the dev cluster's only broker
// Bounds a single `tempest local` run; a healthy one takes well under this.
constexpr milliseconds kRunTimeout = seconds(150);

struct Scenario {
  std::string name;  // topic, spout id and topology name
  std::string guarantee = "AT_LEAST_ONCE";
  double fail_fraction = 0;
  std::optional<int64_t> max_uncommitted_offsets;
};

struct VerifyReport {
  int64_t received = -1;
  int64_t unique = -1;
  int64_t missing = -1;
  int64_t duplicated = -1;
  int64_t unexpected = -1;
  int64_t malformed = -1;
};

// One ZooKeeper and one single-broker dev Kafka for the whole file: starting
// ZooKeeper (a JVM) per test would cost more than some scenarios take.
class KafkaSpoutFaultsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto zk = testing::ZkEnsemble::Start();
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = std::move(*zk).release();
    auto kafka = testing::DevKafka::Start(1, {});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = std::move(*kafka).release();
    std::printf("at-least-once duplicate bound: %lld tuples/s x %lld ms commit interval + %lld "
                "max spout pending = %lld\n",
                static_cast<long long>(kMaxRate), static_cast<long long>(kCommitIntervalMs),
                static_cast<long long>(kMaxSpoutPending), static_cast<long long>(kDuplicateBound));
  }
  static void TearDownTestSuite() {
    delete kafka_;
    kafka_ = nullptr;
    delete zk_;
    zk_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(zk_, nullptr);
    ASSERT_NE(kafka_, nullptr);
  }

  // A topic of kRecords records whose values are their sequence numbers,
  // partition p holding p*kPerPartition .. (p+1)*kPerPartition-1 in order.
  static void Seed(const std::string& topic) {
    ASSERT_TRUE(kafka_->CreateTopic(topic, kPartitions).ok());
    for (int p = 0; p < kPartitions; ++p) {
      std::vector<testing::DevKafka::Record> records;
      records.reserve(kPerPartition);
      for (int64_t i = 0; i < kPerPartition; ++i) {
        records.push_back({"", absl::StrCat(p * kPerPartition + i)});
      }
      absl::Status s = kafka_->Produce(topic, p, records);
      ASSERT_TRUE(s.ok()) << s;
    }
    for (int p = 0; p < kPartitions; ++p) {
      auto marks = kafka_->Watermarks(topic, p);
      ASSERT_TRUE(marks.ok()) << marks.status();
      ASSERT_EQ(marks->first, 0);
      ASSERT_EQ(marks->second, kPerPartition) << "the dev cluster dropped records";
    }
  }

  // The Flux file of `s`; Kafka and ZooKeeper addresses come from the
  // environment through --env-filter.
  static std::string WriteTopology(const testing::TempDir& dir, const Scenario& s) {
    std::string spout_extra;
    if (s.max_uncommitted_offsets.has_value()) {
      spout_extra = absl::StrCat("      - name: maxUncommittedOffsets\n        value: ",
                                 *s.max_uncommitted_offsets, "\n");
    }
    const std::string yaml = absl::StrCat(
        "name: ", s.name, "\n",
        "config:\n"
        "  topology.workers: 1\n"
        "  topology.acker.executors: 1\n"
        "  topology.message.timeout.secs: 30\n"
        "  topology.max.spout.pending: ", kMaxSpoutPending, "\n",
        // Short sessions: a restarted worker waits for the killed one's
        // ownership nodes to expire before it may take the partitions.
        "  storm.zookeeper.session.timeout: 4000\n"
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
        "        value: /spout-faults\n"
        "      - name: id\n"
        "        value: ", s.name, "\n",
        "      - name: processingGuarantee\n"
        "        value: ", s.guarantee, "\n",
        "      - name: stateUpdateIntervalMs\n"
        "        value: ", kCommitIntervalMs, "\n",
        "      - name: stopAtEnd\n"
        "        value: true\n",
        spout_extra,
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
        "        value: ", kBoltDelayMicros, "\n",
        "  - id: verifier\n"
        "    className: tempest.VerifierBolt\n"
        "    parallelism: 1\n"
        "    config:\n"
        "      topology.tick.tuple.freq.secs: 1\n"
        "    properties:\n"
        "      - name: field\n"
        "        value: value\n"
        "      - name: logPath\n"
        "        value: ", dir.File("verifier.log"), "\n",
        "      - name: reportPath\n"
        "        value: ", dir.File("report.json"), "\n",
        "      - name: expected\n"
        "        value: ", kRecords, "\n",
        "streams:\n"
        "  - from: kafka\n"
        "    to: identity\n"
        "    grouping:\n"
        "      type: SHUFFLE\n"
        "  - from: identity\n"
        "    to: verifier\n"
        "    grouping:\n"
        "      type: GLOBAL\n");
    const std::string path = dir.File("topology.yaml");
    std::ofstream(path) << yaml;
    return path;
  }

  // Starts `tempest local TOPOLOGY --env-filter --until-complete`; run n
  // writes run-n.out / run-n.err.
  static std::unique_ptr<os::ChildProcess> StartWorker(const testing::TempDir& dir,
                                                       const std::string& topology, int run) {
    os::ChildProcess::Options o;
    o.argv = {testing::TempestBinary(), "local", topology, "--env-filter", "--until-complete"};
    o.stdout_path = dir.File(absl::StrCat("run-", run, ".out"));
    o.stderr_path = dir.File(absl::StrCat("run-", run, ".err"));
    o.env = {{"BOOTSTRAP", kafka_->bootstrap_servers()}, {"ZK", zk_->ConnectString()}};
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

  // Complete lines in the verifier log so far.
  static int64_t LoggedLines(const testing::TempDir& dir) {
    const std::string log = testing::ReadFileOrEmpty(dir.File("verifier.log"));
    int64_t n = 0;
    for (char c : log) n += c == '\n';
    return n;
  }

  // Waits until the verifier has durably logged at least `lines` values: the
  // stream is well under way (and commits have happened) but far from done.
  static bool WaitForLoggedLines(const testing::TempDir& dir, int64_t lines) {
    return testing::Eventually(seconds(90), [&] { return LoggedLines(dir) >= lines; },
                               milliseconds(20));
  }

  // Runs a short `tempest` command to completion and returns its stdout.
  static std::string RunTempest(const testing::TempDir& dir, const std::string& name,
                                std::vector<std::string> args) {
    os::ChildProcess::Options o;
    o.argv = {testing::TempestBinary()};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.stdout_path = dir.File(name + ".out");
    o.stderr_path = dir.File(name + ".err");
    auto child = os::ChildProcess::Start(o);
    EXPECT_TRUE(child.ok()) << child.status();
    if (!child.ok()) return "";
    std::optional<int> status = (*child)->WaitFor(seconds(60));
    EXPECT_TRUE(status.has_value() && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << "tempest " << args[0] << ": " << testing::ReadFileOrEmpty(o.stderr_path);
    return testing::ReadFileOrEmpty(o.stdout_path);
  }

  // `tempest verify LOG --expected kRecords --json`, computed offline.
  static VerifyReport Verify(const testing::TempDir& dir) {
    const std::string text =
        RunTempest(dir, "verify", {"verify", dir.File("verifier.log"), "--expected",
                                   absl::StrCat(kRecords), "--json"});
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
    std::printf("verifier report: %s", text.c_str());
    return r;
  }

  // The final run committed every partition up to its log end, in the
  // storm-kafka nodes that `tempest offsets show` reads.
  static void ExpectCommittedToLogEnd(const testing::TempDir& dir, const std::string& id) {
    const std::string text =
        RunTempest(dir, "offsets", {"offsets", "show", "--zk", zk_->ConnectString(), "--root",
                                    "/spout-faults", "--id", id, "--json"});
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object() && j["partitions"].is_array()) << text;
    std::map<int, int64_t> committed;
    for (const auto& p : j["partitions"]) {
      committed[p.value("partition", -1)] = p.value("committed_offset", int64_t{-1});
    }
    std::map<int, int64_t> expected;
    for (int p = 0; p < kPartitions; ++p) expected[p] = kPerPartition;
    EXPECT_EQ(committed, expected) << text;
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
  static void ExpectNothingLost(const VerifyReport& r) {
    EXPECT_EQ(r.missing, 0);
    EXPECT_EQ(r.unique, kRecords);
    EXPECT_EQ(r.unexpected, 0);
    EXPECT_EQ(r.malformed, 0);
    EXPECT_GE(r.duplicated, 0);
    EXPECT_LE(r.duplicated, kDuplicateBound);
  }

  static testing::ZkEnsemble* zk_;
  static testing::DevKafka* kafka_;
};

testing::ZkEnsemble* KafkaSpoutFaultsTest::zk_ = nullptr;
testing::DevKafka* KafkaSpoutFaultsTest::kafka_ = nullptr;

// 1. AT_LEAST_ONCE: SIGKILL the worker mid-stream, start it again on the same
// Flux file; it resumes from the offsets committed in ZooKeeper and appends
// to the same verifier log.
TEST_F(KafkaSpoutFaultsTest, WorkerKilledMidStreamAndRestartedLosesNothing) {
  const Scenario s{.name = "kill-alo",
                   .guarantee = "AT_LEAST_ONCE",
                   .fail_fraction = 0,
                   .max_uncommitted_offsets = std::nullopt};
  ASSERT_NO_FATAL_FAILURE(Seed(s.name));
  testing::TempDir dir("spout-faults");
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> first = StartWorker(dir, topology, 1);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(WaitForLoggedLines(dir, kRecords / 4))
      << testing::ReadFileOrEmpty(dir.File("run-1.err"));
  ASSERT_TRUE(first->Running()) << "the first run ended before it could be killed";
  first->Kill();
  const int64_t logged_at_kill = LoggedLines(dir);
  std::printf("[ %s ] SIGKILL after %lld logged values\n", s.name.c_str(),
              static_cast<long long>(logged_at_kill));
  ASSERT_LT(logged_at_kill, kRecords) << "the kill came too late to be mid-stream";

  std::unique_ptr<os::ChildProcess> second = StartWorker(dir, topology, 2);
  ASSERT_NE(second, nullptr);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *second, 2));

  const VerifyReport r = Verify(dir);
  Print(s.name, r, kDuplicateBound);
  ExpectNothingLost(r);
  ExpectCommittedToLogEnd(dir, s.name);
}

// 2. The only Kafka broker goes down mid-stream and comes back. The spout's
// uncommitted window is kept small so it must fetch from the broker again
// while it is down (otherwise librdkafka's prefetch would hold the whole
// topic and the outage would never reach the data path).
TEST_F(KafkaSpoutFaultsTest, BrokerDownThenUpLosesNothing) {
  const Scenario s{.name = "broker-down",
                   .guarantee = "AT_LEAST_ONCE",
                   .fail_fraction = 0,
                   .max_uncommitted_offsets = 2000};
  ASSERT_NO_FATAL_FAILURE(Seed(s.name));
  testing::TempDir dir("spout-faults");
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> worker = StartWorker(dir, topology, 1);
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(WaitForLoggedLines(dir, kRecords / 5))
      << testing::ReadFileOrEmpty(dir.File("run-1.err"));
  ASSERT_TRUE(kafka_->SetBrokerDown(kBrokerId).ok());
  // Bring the broker back whatever happens below: later tests share it.
  struct BrokerUp {
    ~BrokerUp() { (void)kafka->SetBrokerUp(kBrokerId); }
    testing::DevKafka* kafka;
  } broker_up{kafka_};
  const int64_t logged_at_down = LoggedLines(dir);

  // The outage must really stall the stream: the log stops growing once the
  // records fetched before the outage are through (no new line for 2 s).
  int64_t last = LoggedLines(dir);
  auto last_change = std::chrono::steady_clock::now();
  const bool stalled = testing::Eventually(seconds(60), [&] {
    const int64_t now_lines = LoggedLines(dir);
    const auto now = std::chrono::steady_clock::now();
    if (now_lines != last) {
      last = now_lines;
      last_change = now;
    }
    return now - last_change >= seconds(2);
  }, milliseconds(50));
  const int64_t logged_while_down = LoggedLines(dir);
  std::printf("[ %s ] broker down after %lld logged values; stalled at %lld\n", s.name.c_str(),
              static_cast<long long>(logged_at_down), static_cast<long long>(logged_while_down));
  ASSERT_TRUE(stalled) << "the stream never stalled while the broker was down";
  ASSERT_LT(logged_while_down, kRecords) << "the outage came too late to matter";
  ASSERT_TRUE(worker->Running()) << testing::ReadFileOrEmpty(dir.File("run-1.err"));

  ASSERT_TRUE(kafka_->SetBrokerUp(kBrokerId).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *worker, 1));

  const VerifyReport r = Verify(dir);
  Print(s.name, r, kDuplicateBound);
  ExpectNothingLost(r);
  ExpectCommittedToLogEnd(dir, s.name);
}

// 3. A bolt fails 10% of its tuples at random; failed offsets are retried
// until they pass, and the commit point never moves past a failed one.
TEST_F(KafkaSpoutFaultsTest, BoltFailingTenPercentLosesNothing) {
  const Scenario s{.name = "flaky-bolt",
                   .guarantee = "AT_LEAST_ONCE",
                   .fail_fraction = 0.1,
                   .max_uncommitted_offsets = std::nullopt};
  ASSERT_NO_FATAL_FAILURE(Seed(s.name));
  testing::TempDir dir("spout-faults");
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> worker = StartWorker(dir, topology, 1);
  ASSERT_NE(worker, nullptr);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *worker, 1));
  // The failures really happened (and were replayed until they passed).
  const std::string out = testing::ReadFileOrEmpty(dir.File("run-1.out"));
  const int64_t failed = FailedInDoneLine(out);
  std::printf("[ %s ] %lld tuple trees failed and were replayed\n", s.name.c_str(),
              static_cast<long long>(failed));
  EXPECT_GT(failed, kRecords / 20) << out;

  const VerifyReport r = Verify(dir);
  Print(s.name, r, kDuplicateBound);
  ExpectNothingLost(r);
  ExpectCommittedToLogEnd(dir, s.name);
}

// 4. AT_MOST_ONCE: the offset is committed before records are emitted, so a
// worker killed mid-stream and restarted never delivers a record twice; what
// was committed but not yet logged at the kill is lost, and reported.
TEST_F(KafkaSpoutFaultsTest, AtMostOnceWorkerKilledMidStreamDuplicatesNothing) {
  const Scenario s{.name = "kill-amo",
                   .guarantee = "AT_MOST_ONCE",
                   .fail_fraction = 0,
                   .max_uncommitted_offsets = std::nullopt};
  ASSERT_NO_FATAL_FAILURE(Seed(s.name));
  testing::TempDir dir("spout-faults");
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> first = StartWorker(dir, topology, 1);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(WaitForLoggedLines(dir, kRecords / 4))
      << testing::ReadFileOrEmpty(dir.File("run-1.err"));
  ASSERT_TRUE(first->Running()) << "the first run ended before it could be killed";
  first->Kill();
  const int64_t logged_at_kill = LoggedLines(dir);
  std::printf("[ %s ] SIGKILL after %lld logged values\n", s.name.c_str(),
              static_cast<long long>(logged_at_kill));
  ASSERT_LT(logged_at_kill, kRecords) << "the kill came too late to be mid-stream";

  std::unique_ptr<os::ChildProcess> second = StartWorker(dir, topology, 2);
  ASSERT_NE(second, nullptr);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *second, 2));

  const VerifyReport r = Verify(dir);
  Print(s.name, r, 0);
  EXPECT_EQ(r.duplicated, 0);
  EXPECT_EQ(r.unexpected, 0);
  EXPECT_EQ(r.malformed, 0);
  EXPECT_EQ(r.unique + r.missing, kRecords);
  EXPECT_GT(r.unique, logged_at_kill);  // the restart really continued the stream
  ExpectCommittedToLogEnd(dir, s.name);
}

}  // namespace
}  // namespace tempest
