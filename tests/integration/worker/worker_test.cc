// Two Workers in one test process talking over 127.0.0.1: the data plane
// across processes (tuple codec, remote routing, acking across workers, back
// pressure, reconnects, bad input on the worker port).
//
// Topology: gen (tempest.SequenceSpout, reliable, count N) -> identity
// (tempest.IdentityBolt, 2 executors, one in each worker) -> verify
// (tempest.VerifierBolt) in worker B. Loss and duplicates are read from the
// verifier's durable log (bolts::VerifyLogs).

#include "worker/worker.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "bolts/builtin_bolts.h"
#include "bolts/verification_report.h"
#include "common/api/component_registry.h"
#include "common/net/event_loop.h"
#include "common/net/transport_client.h"
#include "spout/builtin_spouts.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"
#include "worker/testing/topology_builder.h"

namespace tempest::worker {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
namespace support = ::tempest::testing;

bool Eventually(const std::function<bool()>& predicate, std::chrono::milliseconds deadline) {
  return support::Eventually(deadline, predicate);
}

const api::ComponentRegistry& Registry() {
  static api::ComponentRegistry* registry = [] {
    auto* r = new api::ComponentRegistry();
    EXPECT_TRUE(spout::RegisterBuiltinSpouts(*r).ok());
    EXPECT_TRUE(bolts::RegisterBuiltinBolts(*r).ok());
    return r;
  }();
  return *registry;
}

struct TopologyOptions {
  int64_t count = 2000;
  double rate = 0;  // tuples/s; 0 unlimited
  int ackers = 1;   // 0: acking off
  bool fields_grouping = false;
  bool local_or_shuffle = false;
  int verify_parallelism = 1;
  int64_t delay_micros = 0;
  int64_t timeout_secs = 30;
  int gen_parallelism = 1;  // every gen task emits seqs 0..count-1
  int64_t max_pending = 0;  // 0: unset
};

core::TopologyDef MakeTopology(const TopologyOptions& o, const std::string& log_path) {
  testing::TopologyBuilder b("xworker");
  b.SetSpout("gen", "tempest.SequenceSpout", o.gen_parallelism);
  if (o.max_pending > 0) b.Config(api::kTopologyMaxSpoutPending, o.max_pending);
  auto identity = b.SetBolt("identity", "tempest.IdentityBolt", 2);
  if (o.fields_grouping) {
    identity.FieldsGrouping("gen", {"key"});
  } else if (o.local_or_shuffle) {
    identity.LocalOrShuffleGrouping("gen");
  } else {
    identity.ShuffleGrouping("gen");
  }
  auto verify = b.SetBolt("verify", "tempest.VerifierBolt", o.verify_parallelism);
  if (o.fields_grouping) {
    verify.FieldsGrouping("identity", {"key"});
  } else {
    verify.GlobalGrouping("identity");
  }
  verify.Config(api::kTopologyTickTupleFreqSecs, int64_t{1});
  b.Config(api::kTopologyAckerExecutors, int64_t{o.ackers});
  b.Config(api::kTopologyMessageTimeoutSecs, o.timeout_secs);
  core::TopologyDef def = b.Build();
  def.spouts[0].args.properties = {{"count", o.count}, {"payloadBytes", int64_t{100}}};
  if (o.rate > 0) def.spouts[0].args.properties["rate"] = o.rate;
  if (o.delay_micros > 0) {
    def.bolts[0].args.properties = {{"delayMicros", o.delay_micros}};
  }
  def.bolts[1].args.properties = {{"logPath", log_path}, {"batchSize", int64_t{100}},
                                  {"flushIntervalMs", int64_t{50}}};
  return def;
}

using Range = std::pair<int32_t, int32_t>;

// Splits the layout's executors: A gets gen, the first identity executor and
// (unless acker_in_b) the ackers; B gets the rest.
// With `alternate`, every component's executors alternate A, B, A, ...
// (as Storm's even scheduler spreads them), so data crosses both ways at
// every level.
std::pair<WorkerPlan, WorkerPlan> MakePlans(const core::TopologyDef& def, int port_a, int port_b,
                                            bool acker_in_b = false, bool alternate = false) {
  auto layout = core::TaskLayout::Create(def, core::TaskLayout::AckerExecutors(def.config));
  EXPECT_TRUE(layout.ok());
  std::vector<Range> a;
  std::vector<Range> b;
  bool identity_seen = false;
  std::map<std::string, int> seen;
  for (const core::ExecutorInfo& e : layout->executors()) {
    const Range r{e.start.value(), e.end.value()};
    const std::string& c = e.component.value();
    if (alternate && c != api::kAckerComponentName) {
      (seen[c]++ % 2 == 0 ? a : b).push_back(r);
    } else if (c == "gen") {
      a.push_back(r);
    } else if (c == "identity") {
      (identity_seen ? b : a).push_back(r);
      identity_seen = true;
    } else if (c == api::kAckerComponentName) {
      (acker_in_b ? b : a).push_back(r);
    } else {
      b.push_back(r);
    }
  }
  WorkerPlan pa;
  pa.topology_id = "xworker-1-1";
  pa.def = def;
  pa.local_executors = a;
  pa.remote_workers = {RemoteWorker{"127.0.0.1", port_b, b}};
  pa.port = port_a;
  pa.secret = "s3cret-topology-key";
  WorkerPlan pb = pa;
  pb.local_executors = b;
  pb.remote_workers = {RemoteWorker{"127.0.0.1", port_a, a}};
  pb.port = port_b;
  return {pa, pb};
}

WorkerOptions Options(ExecutorOptions executor = {}) {
  WorkerOptions o;
  o.registry = &Registry();
  o.executor = executor;
  o.executor.max_park = milliseconds(20);
  o.reconnect_max = milliseconds(200);
  return o;
}

std::unique_ptr<Worker> MakeWorker(WorkerPlan plan, WorkerOptions options) {
  auto w = Worker::Create(std::move(plan), options);
  EXPECT_TRUE(w.ok()) << w.status();
  if (!w.ok()) return nullptr;
  return *std::move(w);
}

bolts::VerificationReport Verify(const std::vector<std::string>& logs, int64_t expected) {
  auto report = bolts::VerifyLogs(logs, expected);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *report : bolts::VerificationReport{};
}

int64_t MetricSum(Worker& w, const std::string& name, const std::string& component = "") {
  int64_t total = 0;
  for (const core::MetricSample& m : w.metrics().Snapshot()) {
    if (m.name != name) continue;
    if (!component.empty() &&
        (!m.labels.contains("component") || m.labels.at("component") != component)) {
      continue;
    }
    total += m.value;
  }
  return total;
}

class WorkerTest : public ::testing::Test {
 protected:
  // Runs A and B until A's spout saw `count` acks (acking on) or the
  // verifier log holds every seq (acking off), then kills both.
  void RunToCompletion(const TopologyOptions& o, bool acker_in_b = false,
                       ExecutorOptions executor = {}, size_t max_queued_bytes = 16 << 20,
                       bool alternate = false) {
    const std::string log = dir_.File("verify-{task}.log");
    core::TopologyDef def = MakeTopology(o, log);
    auto [pa, pb] =
        MakePlans(def, support::FreePort(), support::FreePort(), acker_in_b, alternate);
    WorkerOptions options = Options(executor);
    options.max_queued_bytes = max_queued_bytes;
    a_ = MakeWorker(pa, options);
    b_ = MakeWorker(pb, options);
    ASSERT_TRUE(a_ && b_);
    ASSERT_TRUE(b_->Start().ok());
    ASSERT_TRUE(a_->Start().ok());
    const int64_t trees = o.count * o.gen_parallelism;
    auto acked = [&] { return a_->Stats().acked + b_->Stats().acked; };
    if (o.ackers > 0) {
      EXPECT_TRUE(Eventually([&] { return acked() >= trees; }, seconds(90)))
          << "acked " << acked() << " of " << trees;
    } else {
      EXPECT_TRUE(Eventually(
          [&] { return Verify(Logs(o), o.count).unique >= o.count; }, seconds(90)));
    }
    EXPECT_TRUE(a_->Kill(seconds(2)).ok());
    EXPECT_TRUE(b_->Kill(seconds(2)).ok());
    // The verifier's tasks write their logs at Cleanup.
    report_ = Verify(Logs(o), o.count);
  }

  // Starts A and B (B first) on the topology `o` with default options and
  // returns their plans once A has acked `warm_up` trees, for tests that
  // then disturb a running pair.
  std::pair<WorkerPlan, WorkerPlan> StartWarmPair(const TopologyOptions& o, int64_t warm_up) {
    core::TopologyDef def = MakeTopology(o, dir_.File("verify-{task}.log"));
    auto plans = MakePlans(def, support::FreePort(), support::FreePort());
    a_ = MakeWorker(plans.first, Options());
    b_ = MakeWorker(plans.second, Options());
    EXPECT_TRUE(a_ && b_);
    if (!a_ || !b_) return plans;
    EXPECT_TRUE(b_->Start().ok());
    EXPECT_TRUE(a_->Start().ok());
    EXPECT_TRUE(Eventually([&] { return a_->Stats().acked >= warm_up; }, seconds(30)));
    return plans;
  }

  // Starts B again on its plan (after the test took it away), waits until
  // A's spout saw every tree acked, stops both and expects every seq in the
  // verifier's log.
  void RestartBAndExpectNothingLost(const WorkerPlan& pb, const TopologyOptions& o) {
    b_ = MakeWorker(pb, Options());
    ASSERT_TRUE(b_);
    ASSERT_TRUE(b_->Start().ok());
    EXPECT_TRUE(Eventually([&] { return a_->Stats().acked >= o.count; }, seconds(90)))
        << "acked " << a_->Stats().acked << ", failed " << a_->Stats().failed;
    EXPECT_TRUE(a_->Kill(seconds(2)).ok());
    EXPECT_TRUE(b_->Kill(seconds(2)).ok());
    const bolts::VerificationReport r = Verify(Logs(o), o.count);
    EXPECT_EQ(r.missing, 0);
    EXPECT_EQ(r.unique, o.count);
  }

  std::vector<std::string> Logs(const TopologyOptions& o, const std::string& prefix = "verify-") {
    std::vector<std::string> logs;
    auto layout = core::TaskLayout::Create(MakeTopology(o, ""), o.ackers);
    for (api::TaskId t : layout->TasksOf(api::ComponentId("verify"))) {
      logs.push_back(dir_.File(prefix + std::to_string(t.value()) + ".log"));
    }
    return logs;
  }

  // 6000 trees at 2000/s with a message timeout far beyond the tests'
  // deadlines: a tree lost with a worker can only be replayed because the
  // spout's worker failed it at once.
  static TopologyOptions PacedWithoutTimeouts() {
    TopologyOptions o;
    o.count = 6000;
    o.rate = 2000;
    o.timeout_secs = 600;
    return o;
  }

  // B dies; returns once A has failed the trees it took.
  void KillBAndAwaitItsTreesFailed() {
    b_.reset();
    EXPECT_TRUE(Eventually([&] { return a_->Stats().failed > 0; }, seconds(60)))
        << "no tree was failed after B went away";
  }

  // Starts C, a third worker running B's executors (its verifier writes
  // verifyC-{task}.log), and points A at it in place: A's executors keep
  // running and only its routes change, as when nimbus moves B's share.
  void MoveBsExecutorsToC(const TopologyOptions& o, const WorkerPlan& pb) {
    WorkerPlan pc = pb;
    pc.def = MakeTopology(o, dir_.File("verifyC-{task}.log"));
    pc.port = support::FreePort();
    c_ = MakeWorker(pc, Options());
    ASSERT_TRUE(c_);
    ASSERT_TRUE(c_->Start().ok());
    ASSERT_TRUE(a_->UpdateRemoteWorkers({RemoteWorker{"127.0.0.1", pc.port, pb.local_executors}})
                    .ok());
  }

  // Waits until A's spout saw `o.count` trees acked, stops A and C and
  // returns what the verifiers of B and C received together.
  bolts::VerificationReport FinishWithC(const TopologyOptions& o) {
    EXPECT_TRUE(Eventually([&] { return a_->Stats().acked >= o.count; }, seconds(90)))
        << "acked " << a_->Stats().acked << ", failed " << a_->Stats().failed;
    EXPECT_TRUE(a_->Kill(seconds(2)).ok());
    EXPECT_TRUE(c_->Kill(seconds(2)).ok());
    std::vector<std::string> logs = Logs(o);
    for (const std::string& l : Logs(o, "verifyC-")) logs.push_back(l);
    std::vector<std::string> present;
    for (const std::string& l : logs) {
      if (std::filesystem::exists(l)) present.push_back(l);
    }
    return Verify(present, o.count);
  }

  support::TempDir dir_{"worker-test"};
  std::unique_ptr<Worker> a_;
  std::unique_ptr<Worker> b_;
  std::unique_ptr<Worker> c_;
  bolts::VerificationReport report_;
};

TEST_F(WorkerTest, AckedAcrossTwoWorkersNoLossNoDuplicates) {
  TopologyOptions o;
  o.count = 5000;
  RunToCompletion(o);
  EXPECT_EQ(report_.unique, o.count);
  EXPECT_EQ(report_.missing, 0);
  EXPECT_EQ(report_.duplicated, 0);
  const LocalClusterStats sa = a_->Stats();
  EXPECT_EQ(sa.acked, o.count);
  EXPECT_EQ(sa.failed, 0);
  // Both identity executors carried traffic, so tuples crossed both ways
  // (gen->identity@B, identity@A->verify@B, acks B->A).
  EXPECT_GT(a_->RemoteSent(), 0);
  EXPECT_GT(b_->RemoteSent(), 0);
  EXPECT_GT(a_->RemoteDelivered(), 0);
  EXPECT_GT(b_->RemoteDelivered(), 0);
  EXPECT_EQ(a_->RemoteMalformed() + b_->RemoteMalformed(), 0);
  EXPECT_EQ(a_->RemoteUnknownTask() + b_->RemoteUnknownTask(), 0);
}

TEST_F(WorkerTest, AckingOffDeliversEverySeq) {
  TopologyOptions o;
  o.count = 5000;
  o.ackers = 0;
  RunToCompletion(o);
  EXPECT_EQ(report_.unique, o.count);
  EXPECT_EQ(report_.missing, 0);
  EXPECT_EQ(report_.duplicated, 0);
}

TEST_F(WorkerTest, FieldsGroupingAcrossWorkersKeepsEachKeyOnOneTask) {
  TopologyOptions o;
  o.count = 3000;
  o.fields_grouping = true;
  o.verify_parallelism = 2;
  RunToCompletion(o);
  EXPECT_EQ(report_.unique, o.count);
  EXPECT_EQ(report_.missing, 0);
  // key = "k" + seq % 16: every key's seqs sit in exactly one verifier log.
  std::map<int64_t, std::set<std::string>> tasks_by_key;
  for (const std::string& log : Logs(o)) {
    std::vector<int64_t> seen;
    auto r = bolts::VerifyLogs({log}, std::nullopt, &seen);
    ASSERT_TRUE(r.ok());
    for (int64_t seq : seen) tasks_by_key[seq % 16].insert(log);
  }
  EXPECT_EQ(tasks_by_key.size(), 16u);
  for (const auto& [key, logs] : tasks_by_key) EXPECT_EQ(logs.size(), 1u) << "key " << key;
}

TEST_F(WorkerTest, LocalOrShufflePrefersTheSpoutsOwnWorker) {
  TopologyOptions o;
  o.count = 3000;
  o.local_or_shuffle = true;
  RunToCompletion(o);
  EXPECT_EQ(report_.unique, o.count);
  EXPECT_EQ(report_.missing, 0);
  // gen runs in A, next to one identity executor: every tuple stays in A.
  EXPECT_EQ(MetricSum(*a_, "tempest_executed_total", "identity"), o.count);
  EXPECT_EQ(MetricSum(*b_, "tempest_executed_total", "identity"), 0);
}

// ADR 0010: no max.spout.pending, a slow bolt, tiny rings and a tiny
// connection buffer; the acker runs in B and answers A's spout across the
// connection without ever blocking. Must finish, with nothing lost.
TEST_F(WorkerTest, SlowBoltTinyQueuesNoMaxPendingFinishesWithoutLoss) {
  TopologyOptions o;
  o.count = 4000;
  o.delay_micros = 200;
  ExecutorOptions small;
  small.ring_capacity = 8;
  small.batch_size = 4;
  small.drain_batch = 8;
  RunToCompletion(o, /*acker_in_b=*/true, small, /*max_queued_bytes=*/16 << 10);
  EXPECT_EQ(report_.unique, o.count);
  EXPECT_EQ(report_.missing, 0);
  EXPECT_EQ(report_.duplicated, 0);
  EXPECT_EQ(a_->Stats().failed, 0);
  // The tiny rings did fill: B paused A's connection (back pressure).
  EXPECT_GT(MetricSum(*b_, "tempest_worker_remote_pauses_total"), 0);
}

// Every component spread over both workers (data crosses both ways at every
// level), tiny rings, a slow bolt, and max.spout.pending keeping the data in
// flight far below the connection bound (ADR 0010, head-of-line blocking):
// finishes with nothing lost.
TEST_F(WorkerTest, EverythingSpreadOverBothWorkersWithMaxPendingFinishes) {
  TopologyOptions o;
  o.count = 3000;
  o.gen_parallelism = 2;
  o.verify_parallelism = 2;
  o.fields_grouping = true;
  o.max_pending = 200;
  o.delay_micros = 100;
  ExecutorOptions small;
  small.ring_capacity = 8;
  small.batch_size = 4;
  small.drain_batch = 8;
  RunToCompletion(o, /*acker_in_b=*/false, small, 16 << 20, /*alternate=*/true);
  // Both gen tasks emitted 0..count-1: every seq twice.
  EXPECT_EQ(report_.unique, o.count);
  EXPECT_EQ(report_.missing, 0);
  EXPECT_EQ(report_.received, 2 * o.count);
  EXPECT_EQ(report_.max_copies, 2);
  EXPECT_EQ(a_->Stats().acked + b_->Stats().acked, 2 * o.count);
  EXPECT_EQ(a_->Stats().failed + b_->Stats().failed, 0);
  EXPECT_GT(a_->RemoteSent(), 0);
  EXPECT_GT(b_->RemoteSent(), 0);
}

TEST_F(WorkerTest, RestartedWorkerIsReconnectedAndReplayLosesNothing) {
  TopologyOptions o;
  o.count = 6000;
  o.rate = 2000;
  o.timeout_secs = 2;
  const WorkerPlan pb = StartWarmPair(o, 1000).second;
  ASSERT_FALSE(HasFailure());
  // B dies (its in-flight tuples and held verifier inputs are lost) and
  // comes back on the same port.
  b_.reset();
  std::this_thread::sleep_for(milliseconds(300));
  RestartBAndExpectNothingLost(pb, o);
  // The client reconnected at least once.
  EXPECT_GE(MetricSum(*a_, "tempest_net_reconnects_total"), 1);
}

// A worker that dies takes trees with it. With a message timeout far beyond
// the test's deadlines, every one of them can only be replayed because A
// failed its pending trees when the connection to B broke.
TEST_F(WorkerTest, TreesOfALostWorkerAreFailedAtOnceNotAfterTheMessageTimeout) {
  const TopologyOptions o = PacedWithoutTimeouts();
  const WorkerPlan pb = StartWarmPair(o, 1000).second;
  ASSERT_FALSE(HasFailure());
  const auto lost_at = std::chrono::steady_clock::now();
  KillBAndAwaitItsTreesFailed();
  // Printed, not asserted: the machine may be loaded.
  std::printf("worker lost -> its trees failed at the spout: %.3f s (message timeout %lld s)\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - lost_at).count(),
              static_cast<long long>(o.timeout_secs));
  EXPECT_GE(MetricSum(*a_, "tempest_worker_peer_losses_total"), 1);
  RestartBAndExpectNothingLost(pb, o);
}

// A graceful move: B's executors start on C, A takes the new routes in
// place, and B drains and stops (as a worker whose assignment moved its
// executors does). A never restarts, and with a message timeout far beyond
// the test's deadlines nothing can have been replayed unless A failed a
// tree: none is, and every seq arrives exactly once.
TEST_F(WorkerTest, RoutesChangedInPlaceMoveTheStreamWithoutReplayOrLoss) {
  const TopologyOptions o = PacedWithoutTimeouts();
  const WorkerPlan pb = StartWarmPair(o, 1000).second;
  ASSERT_FALSE(HasFailure());
  MoveBsExecutorsToC(o, pb);
  ASSERT_FALSE(HasFailure());
  // B drains what A sent before it switched: wait until nothing more
  // reaches it, then stop it cleanly.
  int64_t seen = -1;
  EXPECT_TRUE(Eventually(
      [&] {
        const int64_t now = b_->RemoteDelivered();
        const bool still = now == seen;
        seen = now;
        if (!still) std::this_thread::sleep_for(milliseconds(200));
        return still;
      },
      seconds(30)));
  EXPECT_TRUE(b_->Kill(seconds(5)).ok());
  const int64_t b_received_after_kill = b_->RemoteDelivered();
  const bolts::VerificationReport r = FinishWithC(o);
  EXPECT_EQ(r.missing, 0);
  EXPECT_EQ(r.unique, o.count);
  EXPECT_EQ(r.duplicated, 0);
  EXPECT_EQ(a_->Stats().failed, 0);
  EXPECT_GT(c_->RemoteDelivered(), 0);
  EXPECT_EQ(b_->RemoteDelivered(), b_received_after_kill);
  EXPECT_EQ(MetricSum(*a_, "tempest_worker_peer_losses_total"), 1);
}

// B dies; its executors come back on C (as nimbus moves a dead worker's
// executors to a free slot). A keeps running: it failed B's trees when the
// connection broke, follows the new routes in place, and every seq arrives.
TEST_F(WorkerTest, ADeadWorkersExecutorsRestartedElsewhereAreFollowedInPlace) {
  const TopologyOptions o = PacedWithoutTimeouts();
  const WorkerPlan pb = StartWarmPair(o, 1000).second;
  ASSERT_FALSE(HasFailure());
  KillBAndAwaitItsTreesFailed();
  MoveBsExecutorsToC(o, pb);
  ASSERT_FALSE(HasFailure());
  const bolts::VerificationReport r = FinishWithC(o);
  EXPECT_EQ(r.missing, 0);
  EXPECT_EQ(r.unique, o.count);
}

TEST_F(WorkerTest, RoutesThatDoNotCoverTheLayoutAreRefusedAndTheWorkerRunsOn) {
  TopologyOptions o;
  o.count = 3000;
  o.rate = 2000;
  StartWarmPair(o, 200);
  ASSERT_FALSE(HasFailure());
  const absl::Status s = a_->UpdateRemoteWorkers({});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  // B's tasks named twice, and tasks that are not in the layout.
  const WorkerPlan pb = MakePlans(MakeTopology(o, ""), 1, 2).second;
  const RemoteWorker twice{"127.0.0.1", 1, pb.local_executors};
  const absl::Status overlap = a_->UpdateRemoteWorkers({twice, twice});
  EXPECT_TRUE(absl::IsInvalidArgument(overlap)) << overlap;
  EXPECT_NE(overlap.message().find("assigned twice"), std::string::npos) << overlap;
  const absl::Status outside = a_->UpdateRemoteWorkers({RemoteWorker{"127.0.0.1", 1, {{1, 999}}}});
  EXPECT_TRUE(absl::IsInvalidArgument(outside)) << outside;
  EXPECT_TRUE(Eventually([&] { return a_->Stats().acked >= o.count; }, seconds(60)));
}

// Connects to 127.0.0.1:port, writes `bytes`, and waits (bounded) for the
// server to close the connection. True when it closed.
bool GarbageIsRefused(int port, const std::string& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  bool closed = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size())) {
    char buf[512];
    for (int i = 0; i < 100; ++i) {
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n == 0 || (n < 0 && errno == ECONNRESET)) {
        closed = true;
        break;
      }
      if (n < 0) break;  // timeout
    }
  }
  ::close(fd);
  return closed;
}

TEST_F(WorkerTest, BadInputOnThePortIsRefusedOrSkippedAndWorkKeepsFlowing) {
  TopologyOptions o;
  o.count = 6000;
  o.rate = 3000;
  const WorkerPlan pb = StartWarmPair(o, 500).second;
  ASSERT_FALSE(HasFailure());

  // Garbage, and a well-formed header announcing an oversized frame.
  EXPECT_TRUE(GarbageIsRefused(b_->port(), std::string(4096, '\x5a')));
  std::string oversized("TMPF\x01\x00\x00\x00", 8);
  oversized += std::string("\xff\xff\xff\x7f", 4);
  oversized += std::string(36, '\0');
  EXPECT_TRUE(GarbageIsRefused(b_->port(), oversized));

  // A transport client with the wrong secret.
  auto loop = net::EventLoop::Create("wrong-secret");
  ASSERT_TRUE(loop.ok());
  net::TransportClientOptions co;
  co.port = b_->port();
  co.secret = "not-the-secret";
  co.reconnect_initial = milliseconds(50);
  co.metrics = &a_->metrics();  // keep B's client metrics apart
  auto client = net::TransportClient::Create(**loop, co);
  ASSERT_TRUE(client.ok());
  net::Batch batch;
  batch.Add(1, "hello");
  EXPECT_TRUE((*client)->Send(batch).ok());
  (*client)->Flush();
  EXPECT_TRUE(Eventually(
      [&] {
        int64_t unauthenticated = 0;
        for (const core::MetricSample& m : b_->metrics().Snapshot()) {
          if (m.name == "tempest_net_connection_errors_total" &&
              m.labels.at("reason") != "bad_magic" && m.labels.at("reason") != "oversized") {
            unauthenticated += m.value;
          }
        }
        return unauthenticated >= 1;
      },
      seconds(20)));
  (*client)->Close();
  client->reset();

  // An authenticated peer sending a message that does not decode, and one
  // for a task B does not run (gen's task, which runs in A): both counted
  // and skipped.
  net::TransportClientOptions good = co;
  good.secret = pb.secret;
  auto peer = net::TransportClient::Create(**loop, good);
  ASSERT_TRUE(peer.ok());
  const int32_t gen_task = a_->layout().TasksOf(api::ComponentId("gen")).front().value();
  const int32_t verify_task = b_->layout().TasksOf(api::ComponentId("verify")).front().value();
  std::string spout_ack(1, static_cast<char>(MessageKind::kSpoutAck));
  spout_ack += std::string(16, '\x01');
  spout_ack.push_back(static_cast<char>(gen_task));
  net::Batch bad;
  bad.Add(verify_task, std::string("\xff\xff", 2));
  bad.Add(gen_task, spout_ack);
  EXPECT_TRUE((*peer)->Send(bad).ok());
  (*peer)->Flush();
  EXPECT_TRUE(Eventually([&] { return b_->RemoteMalformed() >= 1 && b_->RemoteUnknownTask() >= 1; },
                         seconds(20)));
  (*peer)->Close();
  peer->reset();

  // Nothing reached the executors from those connections, and the topology
  // still completes with nothing lost.
  EXPECT_GE(MetricSum(*b_, "tempest_net_connection_errors_total"), 3);
  EXPECT_TRUE(Eventually([&] { return a_->Stats().acked >= o.count; }, seconds(60)));
  EXPECT_EQ(b_->RemoteMalformed(), 1);
  EXPECT_EQ(b_->RemoteUnknownTask(), 1);
  EXPECT_TRUE(a_->Kill(seconds(2)).ok());
  EXPECT_TRUE(b_->Kill(seconds(2)).ok());
  const bolts::VerificationReport r = Verify(Logs(o), o.count);
  EXPECT_EQ(r.missing, 0);
  EXPECT_EQ(r.duplicated, 0);
}

TEST(WorkerPlanTest, RefusesPlansThatDoNotMatchTheLayout) {
  TopologyOptions o;
  support::TempDir dir("worker-plan");
  core::TopologyDef def = MakeTopology(o, dir.File("v.log"));
  auto [pa, pb] = MakePlans(def, 0, 0);

  WorkerPlan overlap = pa;
  overlap.local_executors.push_back(pb.local_executors.front());
  auto w1 = Worker::Create(overlap, Options());
  ASSERT_FALSE(w1.ok());
  EXPECT_NE(w1.status().message().find("assigned to both"), std::string::npos) << w1.status();

  WorkerPlan missing = pa;
  missing.remote_workers[0].executors.pop_back();
  auto w2 = Worker::Create(missing, Options());
  ASSERT_FALSE(w2.ok());
  EXPECT_NE(w2.status().message().find("assigned to no worker"), std::string::npos)
      << w2.status();

  WorkerPlan wrong_range = pa;
  wrong_range.local_executors[0] = {1, 7};
  auto w3 = Worker::Create(wrong_range, Options());
  ASSERT_FALSE(w3.ok());
  EXPECT_NE(w3.status().message().find("not an executor of the task layout"), std::string::npos)
      << w3.status();
}

TEST(WorkerPlanTest, PortInUseIsAClearError) {
  TopologyOptions o;
  support::TempDir dir("worker-port");
  core::TopologyDef def = MakeTopology(o, dir.File("v.log"));
  auto [pa, pb] = MakePlans(def, support::FreePort(), support::FreePort());
  auto first = Worker::Create(pa, Options());
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Worker::Create(pa, Options());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find(std::to_string(pa.port)), std::string::npos)
      << second.status();
}

}  // namespace
}  // namespace tempest::worker
