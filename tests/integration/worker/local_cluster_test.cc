// LocalCluster lifecycle: clean kill (drain, then Close/Cleanup on every
// task), activate/deactivate, tick tuples, set-up failures, metrics.

#include <pwd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "tests/integration/worker/test_components.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_clock.h"
#include "worker/local_cluster.h"
#include "worker/testing/feeder_spout.h"
#include "worker/testing/fixed_tuple_spout.h"
#include "worker/testing/topology_builder.h"

namespace tempest::worker::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
constexpr milliseconds kWait(30000);

struct Lifecycle {
  std::atomic<int> prepared{0};
  std::atomic<int> cleaned_up{0};
  std::atomic<int> closed{0};
  std::atomic<int> executed{0};
  std::atomic<int> executed_at_cleanup{-1};
  std::atomic<int> ticks{0};
};

// Slow sink: sleeps per tuple so that a kill finds a backlog to drain.
class SlowSink final : public TestBolt {
 public:
  explicit SlowSink(std::shared_ptr<Lifecycle> l) : l_(std::move(l)) {}
  absl::Status Prepare(const api::Config& c, const api::TopologyContext& ctx,
                       api::OutputCollector& out) override {
    l_->prepared.fetch_add(1);
    return TestBolt::Prepare(c, ctx, out);
  }
  void Execute(const api::Tuple& input) override {
    if (input.IsTick()) {
      EXPECT_EQ(input.source_component().value(), "__system");
      EXPECT_EQ(input.source_stream().value(), "__tick");
      l_->ticks.fetch_add(1);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    l_->executed.fetch_add(1);
    collector_->Ack(input);
  }
  void Cleanup() override {
    l_->cleaned_up.fetch_add(1);
    l_->executed_at_cleanup = l_->executed.load();
  }

 private:
  std::shared_ptr<Lifecycle> l_;
};

class ClosingSpout final : public api::Spout {
 public:
  ClosingSpout(std::shared_ptr<Lifecycle> l, int count) : l_(std::move(l)), count_(count) {}
  absl::Status Open(const api::Config&, const api::TopologyContext&,
                    api::SpoutOutputCollector& c) override {
    collector_ = &c;
    return absl::OkStatus();
  }
  void NextTuple() override {
    if (next_ < count_) collector_->Emit({api::Value(int64_t{next_++})});
  }
  void Close() override { l_->closed.fetch_add(1); }
  bool IsExhausted() const override { return next_ >= count_; }
  void DeclareOutputFields(api::OutputFieldsDeclarer& d) const override {
    d.Declare(api::Fields({"num"}));
  }

 private:
  std::shared_ptr<Lifecycle> l_;
  int count_;
  int next_ = 0;
  api::SpoutOutputCollector* collector_ = nullptr;
};

TEST(LocalClusterTest, KillDrainsQueuesThenClosesAndCleansUpEveryTask) {
  api::ComponentRegistry r;
  auto l = std::make_shared<Lifecycle>();
  AddSpout(r, "spout", [l] { return std::make_unique<ClosingSpout>(l, 2000); });
  AddBolt(r, "sink", [l] { return std::make_unique<SlowSink>(l); });
  TopologyBuilder b("kill");
  b.SetSpout("s", "spout", 2);
  b.SetBolt("k", "sink", 1, 3).ShuffleGrouping("s");
  LocalClusterOptions options;
  options.registry = &r;
  auto cluster = LocalCluster::Create(b.Build(), options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->Start().ok());
  EXPECT_EQ(l->prepared.load(), 3);
  // Kill as soon as the spouts are done emitting: the slow sink still has a
  // backlog, and the kill (wait 0) must drain it before Cleanup.
  ASSERT_TRUE(tempest::testing::Eventually(kWait, [&] {
    return (*cluster)->SpoutEmitted() == 4000;
  }));
  ASSERT_TRUE((*cluster)->Kill(milliseconds(0)).ok());
  EXPECT_EQ(l->executed.load(), 4000);
  EXPECT_EQ(l->closed.load(), 2);
  EXPECT_EQ(l->cleaned_up.load(), 3);
  EXPECT_EQ(l->executed_at_cleanup.load(), 4000);
}

TEST(LocalClusterTest, DeactivatedSpoutsEmitNothingUntilActivated) {
  api::ComponentRegistry r;
  auto feeder = std::make_shared<Feeder>();
  auto tracker = std::make_shared<AckFailTracker>();
  AddSpout(r, "feeder", [feeder, tracker] {
    return std::make_unique<FeederSpout>(feeder, api::Fields({"num"}), tracker);
  });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("inactive");
  b.SetSpout("s", "feeder");
  b.SetBolt("a", "ack").ShuffleGrouping("s");
  LocalClusterOptions options;
  options.registry = &r;
  auto cluster = LocalCluster::Create(b.Build(), options);
  ASSERT_TRUE(cluster.ok());
  ASSERT_TRUE((*cluster)->Start(/*activate=*/false).ok());  // Storm's submit --inactive
  for (int i = 0; i < 5; ++i) feeder->Feed({api::Value(int64_t{i})}, api::Value(i));
  ASSERT_TRUE((*cluster)->WaitIdle(kWait));
  EXPECT_EQ((*cluster)->SpoutEmitted(), 0);
  (*cluster)->Activate();
  ASSERT_TRUE((*cluster)->TrackedWait(5, kWait));
  EXPECT_EQ(tracker->num_acked(), 5u);
  (*cluster)->Deactivate();
  ASSERT_TRUE((*cluster)->WaitIdle(kWait));
  feeder->Feed({api::Value(int64_t{9})}, api::Value(9));
  ASSERT_TRUE((*cluster)->WaitIdle(kWait));
  EXPECT_EQ((*cluster)->SpoutEmitted(), 5);
  ASSERT_TRUE((*cluster)->Kill(milliseconds(0)).ok());
}

TEST(LocalClusterTest, TickTuplesFollowTheComponentTickFrequency) {
  tempest::testing::FakeClock clock;
  api::ComponentRegistry r;
  auto l = std::make_shared<Lifecycle>();
  AddSpout(r, "spout", [l] { return std::make_unique<ClosingSpout>(l, 0); });
  AddBolt(r, "sink", [l] { return std::make_unique<SlowSink>(l); });
  TopologyBuilder b("ticks");
  b.SetSpout("s", "spout");
  b.SetBolt("k", "sink", 2).ShuffleGrouping("s").Config(api::kTopologyTickTupleFreqSecs, 2);
  LocalClusterOptions options;
  options.registry = &r;
  options.clock = &clock;
  options.executor.max_park = milliseconds(5);
  auto cluster = LocalCluster::Create(b.Build(), options);
  ASSERT_TRUE(cluster.ok());
  ASSERT_TRUE((*cluster)->Start().ok());
  clock.Advance(seconds(1));
  ASSERT_TRUE((*cluster)->WaitForClock(kWait));
  EXPECT_EQ(l->ticks.load(), 0);
  for (int i = 0; i < 6; ++i) {  // 6 more seconds: ticks at 2, 4 and 6 s
    clock.Advance(seconds(1));
    ASSERT_TRUE((*cluster)->WaitForClock(kWait));
  }
  EXPECT_EQ(l->ticks.load(), 3 * 2);  // two executors
  ASSERT_TRUE((*cluster)->Kill(milliseconds(0)).ok());
}

class FailingPrepare final : public TestBolt {
 public:
  absl::Status Prepare(const api::Config&, const api::TopologyContext&,
                       api::OutputCollector&) override {
    return absl::UnavailableError("database down");
  }
  void Execute(const api::Tuple&) override {}
};

TEST(LocalClusterTest, StartReportsAFailedPrepare) {
  api::ComponentRegistry r;
  auto l = std::make_shared<Lifecycle>();
  AddSpout(r, "spout", [l] { return std::make_unique<ClosingSpout>(l, 10); });
  AddBolt(r, "bad", [] { return std::make_unique<FailingPrepare>(); });
  TopologyBuilder b("bad-prepare");
  b.SetSpout("s", "spout");
  b.SetBolt("b", "bad").ShuffleGrouping("s");
  LocalClusterOptions options;
  options.registry = &r;
  auto cluster = LocalCluster::Create(b.Build(), options);
  ASSERT_TRUE(cluster.ok());
  absl::Status s = (*cluster)->Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(std::string(s.message()).find("database down"), std::string::npos);
  EXPECT_EQ(l->closed.load(), 1);  // the spout that did open was closed
}

// Runs in a forked child: under RLIMIT_NPROC 1 (as `nobody` when root,
// whom the limit does not bind) no thread can start. The exit code says
// what happened: 0 when starting the cluster reported the failed thread
// start as an error.
int StartWithoutThreads() {
  if (::geteuid() == 0) {
    const passwd* pw = ::getpwnam("nobody");
    const uid_t uid = pw != nullptr ? pw->pw_uid : 65534;
    const gid_t gid = pw != nullptr ? pw->pw_gid : 65534;
    if (::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0) return 10;
  }
  const rlimit one{1, 1};
  if (::setrlimit(RLIMIT_NPROC, &one) != 0) return 11;
  api::ComponentRegistry r;
  auto feeder = std::make_shared<Feeder>();
  AddSpout(r, "feeder", [feeder] {
    return std::make_unique<FeederSpout>(feeder, api::Fields({"num"}), nullptr);
  });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("threadless");
  b.SetSpout("s", "feeder");
  b.SetBolt("a", "ack", 4).ShuffleGrouping("s");
  LocalClusterOptions options;
  options.registry = &r;
  auto cluster = LocalCluster::Create(b.Build(), options);
  absl::Status s = cluster.ok() ? (*cluster)->Start() : cluster.status();
  if (s.ok()) return 12;
  std::fprintf(stderr, "%s\n", s.ToString().c_str());
  return absl::IsResourceExhausted(s) &&
                 s.message().find("cannot start a thread") != std::string::npos
             ? 0
             : 13;
}

TEST(LocalClusterTest, AThreadThatCannotStartIsAnErrorNotAnAbort) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(StartWithoutThreads());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_FALSE(WIFSIGNALED(status)) << "the child died of signal " << WTERMSIG(status);
  ASSERT_TRUE(WIFEXITED(status));
  // 10/11: could not set up the limit; 12: threads started anyway; 13:
  // another error than the failed thread start.
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(LocalClusterTest, CreateRejectsAnInvalidTopology) {
  api::ComponentRegistry r;
  TopologyBuilder b("invalid");
  b.SetSpout("s", "no.such.Spout");
  LocalClusterOptions options;
  options.registry = &r;
  auto cluster = LocalCluster::Create(b.Build(), options);
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LocalClusterTest, MetricsCountEmitsAcksAndLatencies) {
  api::ComponentRegistry r;
  std::vector<api::Values> input;
  for (int i = 0; i < 1000; ++i) input.push_back({api::Value(int64_t{i})});
  AddSpout(r, "fixed", [input] {
    return std::make_unique<FixedTupleSpout>(input, api::Fields({"num"}));
  });
  AddBolt(r, "branch", [] { return std::make_unique<BranchingBolt>(2); });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("metrics");
  b.SetSpout("s", "fixed");
  b.SetBolt("b", "branch").ShuffleGrouping("s");
  b.SetBolt("a", "ack", 2).ShuffleGrouping("b");
  LocalClusterOptions options;
  options.registry = &r;
  auto cluster = LocalCluster::Create(b.Build(), options);
  ASSERT_TRUE(cluster.ok());
  ASSERT_TRUE((*cluster)->Start().ok());
  ASSERT_TRUE((*cluster)->WaitFinished(kWait));
  const LocalClusterStats stats = (*cluster)->Stats();
  EXPECT_EQ(stats.spout_emitted, 1000);
  EXPECT_EQ(stats.emitted, 1000 + 2000);
  EXPECT_EQ(stats.transferred, 1000 + 2000);
  EXPECT_EQ(stats.acked, 1000);
  EXPECT_EQ(stats.failed, 0);
  EXPECT_EQ(stats.pending, 0);
  EXPECT_GT(stats.complete_latency_samples, 0);
  EXPECT_GT(stats.complete_latency_p99_us, 0);
  std::map<std::string, int64_t> counts;
  for (const core::MetricSample& m : (*cluster)->metrics().Snapshot()) counts[m.name] += m.value;
  EXPECT_GT(counts["tempest_execute_latency_us"], 0);
  EXPECT_GT(counts["tempest_process_latency_us"], 0);
  EXPECT_EQ(counts["tempest_executed_total"], 3000);
  EXPECT_EQ(counts["tempest_acker_completed_total"], 1000);
  EXPECT_GT(counts["tempest_receive_queue_capacity"], 0);
  ASSERT_TRUE((*cluster)->Kill(milliseconds(0)).ok());
}

}  // namespace
}  // namespace tempest::worker::testing
