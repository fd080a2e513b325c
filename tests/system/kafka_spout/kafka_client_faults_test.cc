// storm-kafka-client's spout (org.apache.storm.kafka.spout.KafkaSpout, offsets
// in a Kafka consumer group) end to end under faults: the real `tempest
// local` binary as a child process, the dev Kafka cluster in this process
// (no ZooKeeper), up to 100k sequenced records, and the VerifierBolt's
// durable logs checked with `tempest verify`. The group's committed offsets
// are read with kafka-python's admin client, as lag tools read them, once at
// the end and all along by a poller that records any offset going backwards.
//
// Faults: the worker SIGKILLed mid-stream and restarted (AT_LEAST_ONCE and
// AT_MOST_ONCE); the broker down then up; a second worker of the same group
// joining mid-stream and leaving mid-stream (two rebalances); a zombie
// worker SIGSTOPped past session.timeout.ms while a second worker takes its
// partitions over, whose commits are refused once it runs again.
//
// Topology and duplicate bound as in spout_faults_fixture.h; the spout is
// written in the form of Storm's flux-examples kafka_spout.yaml
// (SpoutForm::kKafkaClient), commits every kCommitIntervalMs, and the group
// member's session.timeout.ms is 3 s (heartbeats every 0.5 s): the dev
// cluster waits up to 2 s for members to rejoin on each membership change.

#include <signal.h>
#include <sys/wait.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/os/child_process.h"
#include "gtest/gtest.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"
#include "tests/system/kafka_spout/spout_faults_fixture.h"

namespace tempest::spout_faults {
namespace {

constexpr int kBrokerId = 1;  // the dev cluster's only broker
constexpr const char* kPython = "/usr/bin/python3";
// Records per scenario. A killed worker is killed after 25k logged values,
// far more than the duplicate bound (6k), so a restart that ignored the
// group's offsets would break the bound; it then needs only a stretch of
// stream to finish. The outage and the rebalances need no long stream.
constexpr int64_t kKillRecords = 50'000;
constexpr int64_t kShortRecords = 40'000;
constexpr int64_t kZombieRecords = 60'000;

// Polls the group's committed offsets with kafka-python every 50 ms and
// prints one line per read: the offsets of partitions 0..N-1 (-1: none
// committed), or "error ..." when the read failed (the broker is down).
// Exits by itself after its time limit, so it never outlives a test.
constexpr char kPollOffsetsPy[] = R"(import sys, time
from kafka import KafkaAdminClient, TopicPartition
bootstrap, group, topic = sys.argv[1], sys.argv[2], sys.argv[3]
partitions, limit = int(sys.argv[4]), float(sys.argv[5])
tps = [TopicPartition(topic, p) for p in range(partitions)]
end = time.monotonic() + limit
admin = None
while time.monotonic() < end:
    try:
        if admin is None:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=3000)
        offsets = admin.list_consumer_group_offsets(group, partitions=tps)
        print(" ".join(str(offsets[tp].offset if tp in offsets else -1) for tp in tps),
              flush=True)
    except Exception as e:
        print("error", type(e).__name__, flush=True)
        try:
            admin.close()
        except Exception:
            pass
        admin = None
        time.sleep(0.2)
    time.sleep(0.05)
)";

// One read: "partition offset metadata" lines.
constexpr char kReadOffsetsPy[] = R"(import sys
from kafka import KafkaAdminClient, TopicPartition
bootstrap, group, topic, partitions = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
admin = KafkaAdminClient(bootstrap_servers=bootstrap)
offsets = admin.list_consumer_group_offsets(
    group, partitions=[TopicPartition(topic, p) for p in range(partitions)])
for tp in sorted(offsets, key=lambda t: t.partition):
    print(tp.partition, offsets[tp].offset, offsets[tp].metadata)
admin.close()
)";

// What the zombie's spout logs when the group fences it: its commit refused
// under its old generation (KafkaGroupMember's CommitError), or its
// partitions revoked by the rejoin before it sent one (the store's kLost).
constexpr const char* kRefusedCommit = "the group refused the commit";
constexpr const char* kRevoked = "the consumer group rebalanced it to another member";

// Continues a SIGSTOPped worker's process group when it goes out of scope,
// whatever assertion ends the test first, so it can be stopped cleanly.
struct ContinueOnExit {
  ~ContinueOnExit() { (void)worker->SignalGroup(SIGCONT); }
  os::ChildProcess* worker;
};

std::string Describe(const std::map<int, int64_t>& offsets) {
  return absl::StrJoin(offsets, " ", [](std::string* out, const auto& po) {
    absl::StrAppend(out, "p", po.first, "=", po.second);
  });
}

// The kafka-python poller as a child process of the test, and what it saw.
class GroupOffsetPoller {
 public:
  GroupOffsetPoller(const testing::TempDir& dir, const std::string& bootstrap,
                    const std::string& group, const std::string& topic)
      : out_path_(dir.File("group-offsets.out")) {
    const std::string script = dir.File("poll_group_offsets.py");
    std::ofstream(script) << kPollOffsetsPy;
    os::ChildProcess::Options o;
    // At most 240 s: longer than any scenario here.
    o.argv = {kPython, script, bootstrap, group, topic, absl::StrCat(kPartitions), "240"};
    o.stdout_path = out_path_;
    o.stderr_path = dir.File("group-offsets.err");
    auto child = os::ChildProcess::Start(o);
    EXPECT_TRUE(child.ok()) << child.status();
    if (child.ok()) child_ = std::move(*child);
  }
  ~GroupOffsetPoller() { Stop(); }

  void Stop() {
    if (child_ != nullptr) (void)child_->Kill();
  }

  // Reads so far, and per partition the highest offset seen; every offset
  // that went below one seen before on the same partition is a regression.
  struct Seen {
    int64_t reads = 0;
    int64_t errors = 0;
    std::map<int, int64_t> highest;  // only partitions with a commit
    std::vector<std::string> regressions;
  };
  Seen Read() const {
    Seen seen;
    std::istringstream in(testing::ReadFileOrEmpty(out_path_));
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("error", 0) == 0) {
        ++seen.errors;
        continue;
      }
      std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (fields.size() != static_cast<size_t>(kPartitions)) continue;  // a torn last line
      ++seen.reads;
      for (int p = 0; p < kPartitions; ++p) {
        const int64_t offset = std::strtoll(fields[p].c_str(), nullptr, 10);
        auto it = seen.highest.find(p);
        if (it == seen.highest.end()) {
          if (offset >= 0) seen.highest[p] = offset;
        } else if (offset < it->second) {
          seen.regressions.push_back(absl::StrCat("read ", seen.reads, ": partition ", p, ": ",
                                                  it->second, " -> ", offset));
        } else {
          it->second = offset;
        }
      }
    }
    return seen;
  }

 private:
  const std::string out_path_;
  std::unique_ptr<os::ChildProcess> child_;
};

class KafkaClientFaultsTest : public SpoutFaultsFixture {
 protected:
  static void SetUpTestSuite() {
    ASSERT_NO_FATAL_FAILURE(StartKafkaOnly());
  }
  static void TearDownTestSuite() { StopCluster(); }

  static Scenario ClientScenario(const std::string& name, int64_t bolt_delay_micros,
                                 std::string guarantee = "AT_LEAST_ONCE") {
    Scenario s;
    s.name = name;
    s.form = SpoutForm::kKafkaClient;
    s.guarantee = std::move(guarantee);
    s.bolt_delay_micros = bolt_delay_micros;
    return s;
  }

  // The spout's log lines of run n (spdlog writes to stdout).
  static std::string RunLog(const testing::TempDir& dir, int run) {
    return testing::ReadFileOrEmpty(dir.File(absl::StrCat("run-", run, ".out"))) +
           testing::ReadFileOrEmpty(dir.File(absl::StrCat("run-", run, ".err")));
  }

  // The group's committed offsets and their metadata, read once with
  // kafka-python's admin client: partition -> (offset, metadata).
  static std::map<int, std::pair<int64_t, std::string>> GroupOffsets(
      const testing::TempDir& dir, const std::string& group) {
    const std::string script = dir.File("read_group_offsets.py");
    std::ofstream(script) << kReadOffsetsPy;
    const testing::CommandRun run = testing::RunCommand(
        {kPython, script, kafka_->bootstrap_servers(), group, group, absl::StrCat(kPartitions)},
        dir.File("read-offsets"), seconds(60));
    EXPECT_TRUE(run.finished && run.exit_code == 0) << run.out << run.err;
    std::map<int, std::pair<int64_t, std::string>> offsets;
    std::istringstream in(run.out);
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(' ', 2));
      if (f.size() < 2) continue;
      offsets[std::atoi(f[0].c_str())] = {std::strtoll(f[1].c_str(), nullptr, 10),
                                          f.size() > 2 ? f[2] : std::string()};
    }
    return offsets;
  }

  // Every partition committed at its log end, with storm-kafka-client's
  // commit metadata naming the topology.
  static void ExpectGroupAtLogEnd(const testing::TempDir& dir, const std::string& group) {
    const auto offsets = GroupOffsets(dir, group);
    std::map<int, int64_t> committed;
    for (const auto& [p, om] : offsets) {
      committed[p] = om.first;
      EXPECT_NE(om.second.find(absl::StrCat("\"topologyId\":\"", group)), std::string::npos)
          << "partition " << p << " metadata: " << om.second;
      EXPECT_NE(om.second.find("\"taskId\":"), std::string::npos) << om.second;
    }
    std::printf("[ %s ] group offsets (kafka-python): %s\n", group.c_str(),
                Describe(committed).c_str());
    std::fflush(stdout);
    std::map<int, int64_t> expected;
    for (int p = 0; p < kPartitions; ++p) expected[p] = PerPartition();
    EXPECT_EQ(committed, expected);
  }

  // Where rebalances move partitions, each replays what its owner had not
  // committed; those duplicates are printed, not bounded.
  static void PrintReplays(const std::string& scenario, const VerifyReport& r) {
    std::printf("[ %s ] lost=%lld duplicated=%lld (replays after rebalances)\n", scenario.c_str(),
                static_cast<long long>(r.missing), static_cast<long long>(r.duplicated));
    std::fflush(stdout);
  }

  // The poller saw commits, every one at or above the one before it.
  static void ExpectNeverBackwards(GroupOffsetPoller& poller, const std::string& name) {
    poller.Stop();
    const GroupOffsetPoller::Seen seen = poller.Read();
    std::printf("[ %s ] group offset poller: %lld reads (%lld failed), %zu regressions\n",
                name.c_str(), static_cast<long long>(seen.reads),
                static_cast<long long>(seen.errors), seen.regressions.size());
    std::fflush(stdout);
    EXPECT_GT(seen.reads, 0);
    EXPECT_TRUE(seen.regressions.empty()) << absl::StrJoin(seen.regressions, "; ");
  }

  // The spout's "acquired TOPIC/P (stored offset N, ...)" lines in `log`:
  // (partition, N), N = -1 for "none".
  static std::vector<std::pair<int, int64_t>> Acquisitions(const std::string& log,
                                                           const std::string& topic) {
    std::vector<std::pair<int, int64_t>> out;
    const std::string marker = absl::StrCat("acquired ", topic, "/");
    for (size_t at = log.find(marker); at != std::string::npos; at = log.find(marker, at + 1)) {
      const char* p = log.c_str() + at + marker.size();
      char* end = nullptr;
      const int partition = static_cast<int>(std::strtol(p, &end, 10));
      const std::string stored = " (stored offset ";
      if (log.compare(end - log.c_str(), stored.size(), stored) != 0) continue;
      const char* n = end + stored.size();
      out.emplace_back(partition, std::isdigit(static_cast<unsigned char>(*n))
                                      ? std::strtoll(n, nullptr, 10)
                                      : int64_t{-1});
    }
    return out;
  }

  // Highest value per partition in a verifier log (value v is partition
  // v / PerPartition()'s offset v % PerPartition()).
  static std::map<int, int64_t> HighestLoggedOffsets(const testing::TempDir& dir,
                                                     const std::string& log) {
    std::map<int, int64_t> highest;
    std::istringstream in(testing::ReadFileOrEmpty(dir.File(log)));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const int64_t v = std::strtoll(line.c_str(), nullptr, 10);
      if (v < 0 || v >= Records()) continue;
      const int p = static_cast<int>(v / PerPartition());
      highest[p] = std::max(highest.count(p) ? highest[p] : -1, v % PerPartition());
    }
    return highest;
  }

  static void SigkillWorkerMidStream(const testing::TempDir& dir, const Scenario& s,
                                     const std::string& topology, int64_t* logged_at_kill) {
    std::unique_ptr<os::ChildProcess> first = StartWorker(dir, topology, 1);
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(WaitForLoggedLines(dir, Records() / 2)) << RunLog(dir, 1);
    ASSERT_TRUE(first->Running()) << "the first run ended before it could be killed";
    first->Kill();
    *logged_at_kill = LoggedLines(dir);
    std::printf("[ %s ] SIGKILL after %lld logged values\n", s.name.c_str(),
                static_cast<long long>(*logged_at_kill));
    std::fflush(stdout);
    ASSERT_LT(*logged_at_kill, Records()) << "the kill came too late to be mid-stream";

    // The killed member stays in the group until its session times out; the
    // restarted one gets the partitions after that rebalance.
    std::unique_ptr<os::ChildProcess> second = StartWorker(dir, topology, 2);
    ASSERT_NE(second, nullptr);
    ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *second, 2));
  }
};

// 1. AT_LEAST_ONCE: SIGKILL the worker mid-stream and start it again on the
// same Flux file. It resumes at the group's committed offsets, so it replays
// at most what reached the sink since the last commit plus what was in
// flight, and ends with every partition committed at its log end.
TEST_F(KafkaClientFaultsTest, WorkerKilledMidStreamAndRestartedLosesNothing) {
  const Scenario s = ClientScenario("kc-kill-alo", 100);
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kKillRecords));
  testing::TempDir dir("kafka-client-faults");
  const std::string topology = WriteTopology(dir, s);
  GroupOffsetPoller poller(dir, kafka_->bootstrap_servers(), s.name, s.name);

  int64_t logged_at_kill = 0;
  ASSERT_NO_FATAL_FAILURE(SigkillWorkerMidStream(dir, s, topology, &logged_at_kill));

  ExpectNeverBackwards(poller, s.name);
  const VerifyReport r = Verify(dir);
  Print(s.name, r, DuplicateBound(s));
  ExpectNothingLost(r, DuplicateBound(s));
  ExpectGroupAtLogEnd(dir, s.name);
}

// 2. The only broker (also the group's coordinator) goes down mid-stream and
// comes back. The uncommitted window is small so the spout must fetch while
// it is down, and the stream really stalls. Commits fail meanwhile; if the
// outage outlasts the session the group rebalances and what was processed
// since the last commit is replayed, which the window bounds.
TEST_F(KafkaClientFaultsTest, BrokerDownThenUpLosesNothing) {
  constexpr int64_t kLimit = 2000;
  Scenario s = ClientScenario("kc-broker-down", 100);
  s.max_uncommitted_offsets = kLimit;
  // librdkafka backs off reconnecting up to 10 s by default, and the outage
  // grows its backoff to several seconds that the stream would sit idle
  // after the broker is back; the resume, not its delay, is under test.
  s.kafka_props["reconnect.backoff.max.ms"] = "500";
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kShortRecords));
  testing::TempDir dir("kafka-client-faults");
  const std::string topology = WriteTopology(dir, s);

  std::unique_ptr<os::ChildProcess> worker = StartWorker(dir, topology, 1);
  ASSERT_NE(worker, nullptr);
  ASSERT_TRUE(WaitForLoggedLines(dir, Records() / 4)) << RunLog(dir, 1);
  ASSERT_TRUE(kafka_->SetBrokerDown(kBrokerId).ok());
  // Bring the broker back whatever happens below: later tests share it.
  struct BrokerUp {
    ~BrokerUp() { (void)kafka->SetBrokerUp(kBrokerId); }
    testing::DevKafka* kafka;
  } broker_up{kafka_};
  const int64_t logged_at_down = LoggedLines(dir);
  const auto down_at = std::chrono::steady_clock::now();

  // The outage must stall the stream: no new line for 2 s.
  const bool stalled = WaitForStall(dir, seconds(2), seconds(60));
  const int64_t logged_while_down = LoggedLines(dir);
  const double down_secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - down_at).count();
  std::printf("[ %s ] broker down after %lld logged values; stalled at %lld; up after %.1fs\n",
              s.name.c_str(), static_cast<long long>(logged_at_down),
              static_cast<long long>(logged_while_down), down_secs);
  std::fflush(stdout);
  ASSERT_TRUE(stalled) << "the stream never stalled while the broker was down";
  ASSERT_LT(logged_while_down, Records()) << "the outage came too late to matter";
  ASSERT_TRUE(worker->Running()) << RunLog(dir, 1);

  ASSERT_TRUE(kafka_->SetBrokerUp(kBrokerId).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *worker, 1));

  const VerifyReport r = Verify(dir);
  // Everything replayed lies between a partition's last successful commit
  // and its fetch position, at most kLimit apart.
  const int64_t bound = std::max(DuplicateBound(s), kPartitions * kLimit);
  Print(s.name, r, bound);
  ExpectNothingLost(r, bound);
  ExpectGroupAtLogEnd(dir, s.name);
}

// 3. Two rebalances mid-stream: a second worker of the same topology (same
// group.id) starts while the first is streaming, takes half the partitions,
// and is stopped (SIGTERM: it commits what is complete and leaves the group)
// while records remain; the first takes everything back and finishes. Each
// worker has its own sink log; together they hold every record.
TEST_F(KafkaClientFaultsTest, SecondWorkerJoinsAndLeavesMidStreamLosesNothing) {
  const Scenario s = ClientScenario("kc-rebalance", 300);  // 3333 tuples/s per worker
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kShortRecords));
  testing::TempDir dir("kafka-client-faults");
  const Deployment first_files = NumberedDeployment(1);
  const Deployment second_files = NumberedDeployment(2);
  const std::vector<std::string> logs = {first_files.log, second_files.log};
  GroupOffsetPoller poller(dir, kafka_->bootstrap_servers(), s.name, s.name);

  std::unique_ptr<os::ChildProcess> first =
      StartWorker(dir, WriteTopology(dir, s, first_files), 1);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(WaitForLoggedLines(dir, Records() / 8, logs)) << RunLog(dir, 1);
  const int64_t logged_at_join = LoggedLines(dir, logs);
  std::unique_ptr<os::ChildProcess> second =
      StartWorker(dir, WriteTopology(dir, s, second_files), 2);
  ASSERT_NE(second, nullptr);

  // The group gave the second worker partitions: its sink logs records.
  ASSERT_TRUE(WaitForLoggedLines(dir, 2000, {second_files.log})) << RunLog(dir, 2);
  ASSERT_TRUE(WaitForLoggedLines(dir, Records() / 2, logs)) << RunLog(dir, 1) << RunLog(dir, 2);
  const int64_t logged_at_leave = LoggedLines(dir, logs);
  const int64_t second_logged = LoggedLines(dir, {second_files.log});
  const int64_t first_at_leave = LoggedLines(dir, {first_files.log});
  ASSERT_LT(logged_at_leave, Records() * 9 / 10) << "the second worker left too late to matter";
  ASSERT_TRUE(second->Running()) << RunLog(dir, 2);
  // One SIGTERM to the process itself (ChildProcess::Stop signals the group
  // and the leader, and `tempest local` takes a second signal while it
  // drains as an order to stop at once, without closing its components).
  ASSERT_EQ(::kill(second->pid(), SIGTERM), 0);
  const std::optional<int> stopped = second->WaitFor(seconds(60));
  ASSERT_TRUE(stopped.has_value()) << "the second worker did not stop\n" << RunLog(dir, 2);
  const int status = *stopped;
  std::printf("[ %s ] second worker joined after %lld logged values, left after %lld (%lld in "
              "its sink)\n",
              s.name.c_str(), static_cast<long long>(logged_at_join),
              static_cast<long long>(logged_at_leave), static_cast<long long>(second_logged));
  std::fflush(stdout);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << os::DescribeWaitStatus(status) << RunLog(dir, 2);
  EXPECT_NE(RunLog(dir, 2).find("done: terminated"), std::string::npos) << RunLog(dir, 2);

  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *first, 1));
  // The first worker lost partitions to the rebalances (revoked, or its
  // commit refused while the group rebalanced) and went on after the second
  // left, with that one's partitions too.
  const std::string first_log = RunLog(dir, 1);
  EXPECT_TRUE(first_log.find(kRevoked) != std::string::npos ||
              first_log.find(kRefusedCommit) != std::string::npos)
      << first_log;
  EXPECT_GT(LoggedLines(dir, {first_files.log}), first_at_leave);

  ExpectNeverBackwards(poller, s.name);
  const VerifyReport r = Verify(dir, logs);
  PrintReplays(s.name, r);
  EXPECT_EQ(r.missing, 0);
  EXPECT_EQ(r.unique, Records());
  EXPECT_EQ(r.unexpected, 0);
  EXPECT_EQ(r.malformed, 0);
  ExpectGroupAtLogEnd(dir, s.name);
}

// 4. AT_MOST_ONCE (setProcessingGuarantee on the builder): offsets are
// committed to the group before records are emitted, so a worker killed
// mid-stream and restarted never delivers a record twice; what was committed
// but not yet in the sink at the kill is lost, and printed.
TEST_F(KafkaClientFaultsTest, AtMostOnceWorkerKilledMidStreamDuplicatesNothing) {
  const Scenario s = ClientScenario("kc-kill-amo", 100, "AT_MOST_ONCE");
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kKillRecords));
  testing::TempDir dir("kafka-client-faults");
  const std::string topology = WriteTopology(dir, s);

  int64_t logged_at_kill = 0;
  ASSERT_NO_FATAL_FAILURE(SigkillWorkerMidStream(dir, s, topology, &logged_at_kill));

  const VerifyReport r = Verify(dir);
  Print(s.name, r, 0);
  EXPECT_EQ(r.duplicated, 0);
  EXPECT_EQ(r.unexpected, 0);
  EXPECT_EQ(r.malformed, 0);
  EXPECT_EQ(r.unique + r.missing, Records());
  EXPECT_GT(r.unique, logged_at_kill);  // the restart really continued the stream
  ExpectGroupAtLogEnd(dir, s.name);
}

// 5. A zombie. The only worker is SIGSTOPped mid-stream; a second worker of
// the same group starts, and once the stopped one's session has timed out the
// group gives it every partition. It commits past anything the stopped one
// could still commit. Then the zombie is continued: the group refuses its
// commits (its generation is over) or revokes its partitions before it sends
// one, the group's offsets never go backwards, the two share the partitions
// after a rebalance, and together their sinks hold every record.
TEST_F(KafkaClientFaultsTest, ZombieStoppedPastItsSessionCannotMoveTheGroupOffsets) {
  const Scenario s = ClientScenario("kc-zombie", 300);
  // Batches of 2.5k records: every partition has commits soon after the
  // start, and the successor passes the zombie's reach on all of them soon.
  ASSERT_NO_FATAL_FAILURE(Seed(s.name, kZombieRecords, 0, 2'500));
  testing::TempDir dir("kafka-client-faults");
  const Deployment zombie_files = NumberedDeployment(1);
  const Deployment successor_files = NumberedDeployment(2);
  const std::vector<std::string> logs = {zombie_files.log, successor_files.log};
  GroupOffsetPoller poller(dir, kafka_->bootstrap_servers(), s.name, s.name);

  std::unique_ptr<os::ChildProcess> zombie =
      StartWorker(dir, WriteTopology(dir, s, zombie_files), 1);
  ASSERT_NE(zombie, nullptr);
  ASSERT_TRUE(WaitForLoggedLines(dir, Records() / 8, logs)) << RunLog(dir, 1);
  // Commits are flowing before the stop.
  ASSERT_TRUE(testing::Eventually(seconds(30), [&] { return poller.Read().highest.size() ==
                                                            static_cast<size_t>(kPartitions); },
                                  milliseconds(50)));

  ASSERT_TRUE(zombie->SignalGroup(SIGSTOP));
  ContinueOnExit resume_zombie{zombie.get()};
  const auto stopped_at = std::chrono::steady_clock::now();
  const int64_t logged_at_stop = LoggedLines(dir, logs);
  ASSERT_LT(logged_at_stop, Records() / 2) << "the stop came too late to be mid-stream";
  // The zombie can commit at most up to what it emitted: its sink's highest
  // offset + 1, plus what was still in flight (at most max spout pending).
  const std::map<int, int64_t> zombie_logged = HighestLoggedOffsets(dir, zombie_files.log);
  std::map<int, int64_t> zombie_reach;
  for (int p = 0; p < kPartitions; ++p) {
    const int64_t logged = zombie_logged.count(p) ? zombie_logged.at(p) : -1;
    zombie_reach[p] = std::min(PerPartition(), logged + 1 + kMaxSpoutPending);
  }

  std::unique_ptr<os::ChildProcess> successor =
      StartWorker(dir, WriteTopology(dir, s, successor_files), 2);
  ASSERT_NE(successor, nullptr);
  // The successor commits past the zombie's reach on every partition, so
  // any commit the zombie got through would show as a regression.
  std::map<int, int64_t> taken_over;
  const bool passed = testing::Eventually(seconds(60), [&] {
    taken_over = poller.Read().highest;
    if (taken_over.size() != static_cast<size_t>(kPartitions)) return false;
    for (const auto& [p, reach] : zombie_reach) {
      if (taken_over.at(p) <= reach) return false;
    }
    return true;
  }, milliseconds(100));
  const double stopped_secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped_at).count();
  std::printf("[ %s ] SIGSTOP after %lld logged values; the zombie could commit up to %s; the "
              "successor committed %s after %.1fs\n",
              s.name.c_str(), static_cast<long long>(logged_at_stop),
              Describe(zombie_reach).c_str(), Describe(taken_over).c_str(), stopped_secs);
  std::fflush(stdout);
  ASSERT_TRUE(passed) << RunLog(dir, 2);
  ASSERT_GT(stopped_secs, s.group_session_timeout_ms / 1000.0);
  const int64_t logged_at_cont = LoggedLines(dir, logs);
  ASSERT_LT(logged_at_cont, Records() * 3 / 4) << "the zombie came back too late to matter";

  // What the zombie logs from here on (the spout logs to stdout; the
  // stopped process writes nothing meanwhile).
  const std::string zombie_out = dir.File("run-1.out");
  const size_t cont_at = testing::ReadFileOrEmpty(zombie_out).size();
  auto since_cont = [&] { return testing::ReadFileOrEmpty(zombie_out).substr(cont_at); };
  ASSERT_TRUE(zombie->SignalGroup(SIGCONT));
  // Which comes first is a race between the spout's overdue commit and
  // librdkafka's overdue heartbeat (which answers UNKNOWN_MEMBER_ID and
  // revokes the lost assignment); either way the zombie stops emitting.
  size_t refused_at = std::string::npos;
  size_t revoked_at = std::string::npos;
  ASSERT_TRUE(testing::Eventually(seconds(30), [&] {
    const std::string log = since_cont();
    refused_at = log.find(kRefusedCommit);
    revoked_at = log.find(kRevoked);
    return refused_at != std::string::npos || revoked_at != std::string::npos;
  }, milliseconds(50))) << RunLog(dir, 1);
  std::printf("[ %s ] the zombie, continued: %s\n", s.name.c_str(),
              refused_at < revoked_at ? "the group refused its commit"
                                      : "the group revoked its partitions before it committed");
  std::fflush(stdout);

  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *successor, 2));
  ASSERT_NO_FATAL_FAILURE(ExpectCompletes(dir, *zombie, 1));
  // When the zombie was given partitions again, it started from the group's
  // offsets, which the successor had moved past its own.
  const std::vector<std::pair<int, int64_t>> reacquired = Acquisitions(since_cont(), s.name);
  std::printf("[ %s ] the zombie re-acquired %zu partitions after the rebalance\n",
              s.name.c_str(), reacquired.size());
  EXPECT_FALSE(reacquired.empty()) << since_cont();
  for (const auto& [p, stored] : reacquired) {
    EXPECT_GE(stored, taken_over.at(p)) << "partition " << p << "\n" << since_cont();
  }

  ExpectNeverBackwards(poller, s.name);
  const VerifyReport r = Verify(dir, logs);
  PrintReplays(s.name, r);
  EXPECT_EQ(r.missing, 0);
  EXPECT_EQ(r.unique, Records());
  EXPECT_EQ(r.unexpected, 0);
  EXPECT_EQ(r.malformed, 0);
  ExpectGroupAtLogEnd(dir, s.name);
}

}  // namespace
}  // namespace tempest::spout_faults
