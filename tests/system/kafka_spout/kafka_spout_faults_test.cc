// KafkaSpout fault tolerance end to end: the real `tempest local` binary as a
// child process, a real ZooKeeper and the dev Kafka cluster in this process,
// up to 100k sequenced records, and the VerifierBolt's durable log checked
// with `tempest verify`. Faults: the worker SIGKILLed mid-stream and restarted
// (AT_LEAST_ONCE and AT_MOST_ONCE), the Kafka broker down then up, a bolt
// failing 10% of its tuples, a tuple that always fails (dead-letter topic),
// and retention past the committed offset. ZooKeeper faults are in
// kafka_spout_zk_e2e_test.cc.
//
// Topology: KafkaSpout (1 task, 4 partitions) -> IdentityBolt (1 task,
// delayMicros) -> VerifierBolt (global). The IdentityBolt's per-tuple sleep
// caps the rate at which tuples reach the verifier, so the duplicate bound
// below follows from the configuration alone: a restarted worker replays at
// most what reached the verifier since the last commit (rate x commit
// interval) plus what was in flight when that commit was computed (max
// spout pending).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "common/kafka/kafka_reader.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"
#include "tests/system/kafka_spout/spout_faults_fixture.h"

namespace tempest::spout_faults {
namespace {

constexpr int64_t kBoltDelayMicros = 100;  // every scenario here: at most 10k tuples/s
constexpr int kBrokerId = 1;               // the dev cluster's only broker
// Records per scenario. A killed worker is killed after 25k logged values,
// far more than the duplicate bound (6k), so a restart that ignored the
// commits would break the bound; it then needs only a stretch of stream to
// finish. The other scenarios need no long stream: 40k records, 4 s or more.
constexpr int64_t kKillRecords = 50'000;
constexpr int64_t kShortRecords = 40'000;

// One standalone ZooKeeper and one single-broker dev Kafka for the whole file.
class KafkaSpoutFaultsTest : public SpoutFaultsFixture {
 protected:
  static void SetUpTestSuite() {
    ASSERT_NO_FATAL_FAILURE(StartCluster(testing::ZkEnsemble::Options{}));
    Scenario typical = MakeScenario("");
    typical.bolt_delay_micros = kBoltDelayMicros;
    std::printf("at-least-once duplicate bound: %lld tuples/s x %lld ms commit interval + %lld "
                "max spout pending = %lld\n",
                static_cast<long long>(MaxRate(typical)),
                static_cast<long long>(kCommitIntervalMs),
                static_cast<long long>(kMaxSpoutPending),
                static_cast<long long>(DuplicateBound(typical)));
  }
  static void TearDownTestSuite() { StopCluster(); }

  static void ExpectNothingLost(const VerifyReport& r) {
    SpoutFaultsFixture::ExpectNothingLost(r, kDuplicateBound);
  }

  static constexpr int64_t kDuplicateBound =
      1'000'000 / kBoltDelayMicros * kCommitIntervalMs / 1000 + kMaxSpoutPending;
};

// 1. AT_LEAST_ONCE: SIGKILL the worker mid-stream, start it again on the same
// Flux file; it resumes from the offsets committed in ZooKeeper and appends
// to the same verifier log.
TEST_F(KafkaSpoutFaultsTest, WorkerKilledMidStreamAndRestartedLosesNothing) {
  const Scenario s = MakeScenario("kill-alo", "AT_LEAST_ONCE", 0, std::nullopt);
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kKillRecords));
  testing::TempDir dir("spout-faults");
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> first = StartWorker(dir, topology, 1);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(WaitForLoggedLines(dir, Records() / 2))
      << testing::ReadFileOrEmpty(dir.File("run-1.err"));
  ASSERT_TRUE(first->Running()) << "the first run ended before it could be killed";
  first->Kill();
  const int64_t logged_at_kill = LoggedLines(dir);
  std::printf("[ %s ] SIGKILL after %lld logged values\n", s.name.c_str(),
              static_cast<long long>(logged_at_kill));
  ASSERT_LT(logged_at_kill, Records()) << "the kill came too late to be mid-stream";

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
  Scenario s = MakeScenario("broker-down", "AT_LEAST_ONCE", 0, 2000);
  // librdkafka backs off reconnecting up to 10 s by default, and the outage
  // grows its backoff to several seconds that the stream would sit idle
  // after the broker is back; the resume, not its delay, is under test.
  s.kafka_props["reconnect.backoff.max.ms"] = "500";
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kShortRecords));
  testing::TempDir dir("spout-faults");
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> worker = StartWorker(dir, topology, 1);
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(WaitForLoggedLines(dir, Records() / 4))
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
  ASSERT_LT(logged_while_down, Records()) << "the outage came too late to matter";
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
  const Scenario s = MakeScenario("flaky-bolt", "AT_LEAST_ONCE", 0.1, std::nullopt);
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kShortRecords));
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
  EXPECT_GT(failed, Records() / 20) << out;

  const VerifyReport r = Verify(dir);
  Print(s.name, r, kDuplicateBound);
  ExpectNothingLost(r);
  ExpectCommittedToLogEnd(dir, s.name);
}

// 4. AT_MOST_ONCE: the offset is committed before records are emitted, so a
// worker killed mid-stream and restarted never delivers a record twice; what
// was committed but not yet logged at the kill is lost, and reported.
TEST_F(KafkaSpoutFaultsTest, AtMostOnceWorkerKilledMidStreamDuplicatesNothing) {
  const Scenario s = MakeScenario("kill-amo", "AT_MOST_ONCE", 0, std::nullopt);
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kKillRecords));
  testing::TempDir dir("spout-faults");
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> first = StartWorker(dir, topology, 1);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(WaitForLoggedLines(dir, Records() / 2))
      << testing::ReadFileOrEmpty(dir.File("run-1.err"));
  ASSERT_TRUE(first->Running()) << "the first run ended before it could be killed";
  first->Kill();
  const int64_t logged_at_kill = LoggedLines(dir);
  std::printf("[ %s ] SIGKILL after %lld logged values\n", s.name.c_str(),
              static_cast<long long>(logged_at_kill));
  ASSERT_LT(logged_at_kill, Records()) << "the kill came too late to be mid-stream";

  std::unique_ptr<os::ChildProcess> second = StartWorker(dir, topology, 2);
  ASSERT_NE(second, nullptr);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *second, 2));

  const VerifyReport r = Verify(dir);
  Print(s.name, r, 0);
  EXPECT_EQ(r.duplicated, 0);
  EXPECT_EQ(r.unexpected, 0);
  EXPECT_EQ(r.malformed, 0);
  EXPECT_EQ(r.unique + r.missing, Records());
  EXPECT_GT(r.unique, logged_at_kill);  // the restart really continued the stream
  ExpectCommittedToLogEnd(dir, s.name);
}

// 5. One record always fails in the bolt. After retryLimit retries the spout
// sends it to the dead-letter topic, and once that is confirmed its offset
// completes, so the partition's commits move past it. It is missing from
// the verifier log only because it is in the dead-letter topic.
TEST_F(KafkaSpoutFaultsTest, TupleAlwaysFailingGoesToDeadLetterTopicAndCommitsMovePast) {
  // Partition 2, offset 4321.
  constexpr int64_t kPoison = 2 * (kShortRecords / kPartitions) + 4321;
  const std::string dlq = "dead-letter-dlq";
  Scenario s = MakeScenario("dead-letter");
  s.spout_extra = Property("deadLetterTopic", dlq) + Property("retryLimit", "3") +
                  Property("retryInitialDelayMs", "1");
  s.bolt_extra = Property("failField", "value") +
                 Property("failValues", absl::StrCat("[\"", kPoison, "\"]"));
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kShortRecords));
  ASSERT_TRUE(kafka_->CreateTopic(dlq, 1).ok());
  testing::TempDir dir("spout-faults");
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> worker = StartWorker(dir, topology, 1);
  ASSERT_NE(worker, nullptr);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *worker, 1));
  const std::string out = testing::ReadFileOrEmpty(dir.File("run-1.out"));
  EXPECT_NE(out.find(absl::StrCat("sent to dead-letter topic ", dlq, " after")), std::string::npos)
      << out;
  // Every one of its retryLimit deliveries failed.
  EXPECT_GE(FailedInDoneLine(out), 3) << out;

  // The record is in the dead-letter topic, once.
  kafka::KafkaReaderOptions ro;
  ro.bootstrap_servers = kafka_->bootstrap_servers();
  auto reader = kafka::KafkaReader::Create(ro);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE((*reader)->Start({dlq, 0}, 0).ok());
  std::vector<std::string> dead;
  testing::Eventually(seconds(20), [&] {
    (*reader)->Poll(100, milliseconds(50),
                    [&](const kafka::KafkaRecord& r) { dead.emplace_back(r.value); });
    return !dead.empty();
  });
  (*reader)->Poll(100, milliseconds(500),
                  [&](const kafka::KafkaRecord& r) { dead.emplace_back(r.value); });
  EXPECT_EQ(dead, std::vector<std::string>{absl::StrCat(kPoison)});

  const VerifyReport r = Verify(dir);
  // Lost = missing from the sink and not dead-lettered.
  const int64_t lost = r.missing - static_cast<int64_t>(dead.size());
  std::printf("[ %s ] lost=%lld duplicated=%lld (duplicate bound %lld); dead-lettered %zu\n",
              s.name.c_str(), static_cast<long long>(lost), static_cast<long long>(r.duplicated),
              static_cast<long long>(kDuplicateBound), dead.size());
  EXPECT_EQ(r.missing, 1);
  EXPECT_EQ(r.missing_sample, std::vector<int64_t>{kPoison});
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(r.unique, Records() - 1);
  EXPECT_EQ(r.unexpected, 0);
  EXPECT_EQ(r.malformed, 0);
  EXPECT_GE(r.duplicated, 0);
  EXPECT_LE(r.duplicated, kDuplicateBound);
  ExpectCommittedToLogEnd(dir, s.name);
}

// 6. Retention has moved partition 0's log start past its committed offset
// (an operator set it to 0; big keys make the dev cluster drop the oldest
// records). The default outOfRangePolicy, earliest, continues at the log
// start; the skipped range is logged and counted, and exactly those records
// are missing. Nothing else is lost.
TEST_F(KafkaSpoutFaultsTest, RetentionPastCommittedOffsetContinuesAtLogStartAndCountsTheLoss) {
  const Scenario s = MakeScenario("retention");
  // 10k records with 1000-byte keys: about 10 MiB, twice the retention.
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kShortRecords, /*partition0_key_bytes=*/1000));
  auto marks = kafka_->Watermarks(s.name, 0);
  ASSERT_TRUE(marks.ok()) << marks.status();
  const int64_t low = marks->first;
  ASSERT_GT(low, 0) << "retention should have dropped partition 0's oldest records";
  testing::TempDir dir("spout-faults");
  (void)RunTempest(dir, "set", {"offsets", "set", "--zk", zk_->ConnectString(), "--root", kZkRoot,
                                "--id", s.name, "--topic", s.name, "--partition", "0",
                                "--offset", "0", "--seed", "--execute"});
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> worker = StartWorker(dir, topology, 1);
  ASSERT_NE(worker, nullptr);
  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *worker, 1));
  const std::string out = testing::ReadFileOrEmpty(dir.File("run-1.out"));
  // The policy applied and the loss counted and reported, with its range:
  // "... policy earliest: continuing at LOW; N offsets lost [0, LOW), ...".
  const std::string applied = absl::StrCat("policy earliest: continuing at ", low, "; ");
  const size_t at = out.find(applied);
  ASSERT_NE(at, std::string::npos) << out;
  const int64_t counted = std::strtoll(out.c_str() + at + applied.size(), nullptr, 10);
  const std::string reported = absl::StrCat(counted, " offsets lost [0, ", low, ")");
  EXPECT_EQ(out.substr(at + applied.size(), reported.size()), reported) << out;
  EXPECT_EQ(counted, low);

  const VerifyReport r = Verify(dir);
  std::printf("[ %s ] log start %lld > committed 0: lost=%lld (counted %lld) duplicated=%lld "
              "(duplicate bound %lld)\n",
              s.name.c_str(), static_cast<long long>(low), static_cast<long long>(r.missing),
              static_cast<long long>(counted), static_cast<long long>(r.duplicated),
              static_cast<long long>(kDuplicateBound));
  EXPECT_EQ(r.missing, low);  // exactly the records retention dropped
  EXPECT_EQ(r.missing_sample.empty() ? -1 : r.missing_sample.front(), 0);
  EXPECT_EQ(r.unique, Records() - low);
  EXPECT_EQ(r.unexpected, 0);
  EXPECT_EQ(r.malformed, 0);
  EXPECT_GE(r.duplicated, 0);
  EXPECT_LE(r.duplicated, kDuplicateBound);
  ExpectCommittedToLogEnd(dir, s.name);
}

}  // namespace
}  // namespace tempest::spout_faults
