// A worker regroups its own bolt tasks into other executors without
// stopping (Worker::RegroupExecutors): while a spout in another worker
// streams acked trees into a two-task counting bolt, the bolt's worker goes
// from one executor to two and back. Every tree is acked once and none
// fails, and each task's bolt object (its instance id and its count) is the
// same before and after.
//
// And a bolt executor leaves its worker for a new one without stopping the
// worker (ADR 0035): every tree is acked once, none fails, and what the
// spout's worker still sends to the old worker by its old routes is
// forwarded to the new one, also when the new one is not up yet and the
// forwards must wait for room.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/api/component_registry.h"
#include "spout/builtin_spouts.h"
#include "tests/support/eventually.h"
#include "tests/support/temp_dir.h"
#include "worker/testing/topology_builder.h"
#include "worker/worker.h"

namespace tempest::worker {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
namespace support = ::tempest::testing;

// What each counting task reported last: the object serving it, how often
// it was prepared and how many tuples that object has counted in all.
struct Seen {
  int64_t instance = 0;
  int prepares = 0;
  int64_t count = 0;
  int cleanups = 0;
};
std::mutex seen_mu;
std::map<int32_t, Seen> seen;  // by task
std::atomic<int64_t> next_instance{1};
std::atomic<int64_t> executed_total{0};  // Execute calls of every counting bolt

// Counts its tuples in the object, as a word count keeps its words.
class CountingBolt final : public api::Bolt {
 public:
  absl::Status Prepare(const api::Config&, const api::TopologyContext& context,
                       api::OutputCollector& collector) override {
    task_ = context.ThisTaskId().value();
    collector_ = &collector;
    std::lock_guard<std::mutex> lock(seen_mu);
    Seen& s = seen[task_];
    s.instance = instance_;
    ++s.prepares;
    return absl::OkStatus();
  }
  void Execute(const api::Tuple& input) override {
    ++count_;
    executed_total.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(seen_mu);
      Seen& s = seen[task_];
      s.instance = instance_;
      s.count = count_;
    }
    collector_->Ack(input);
  }
  void Cleanup() override {
    std::lock_guard<std::mutex> lock(seen_mu);
    ++seen[task_].cleanups;
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer&) const override {}

 private:
  const int64_t instance_ = next_instance.fetch_add(1);
  int32_t task_ = 0;
  int64_t count_ = 0;
  api::OutputCollector* collector_ = nullptr;
};

const api::ComponentRegistry& Registry() {
  static api::ComponentRegistry* registry = [] {
    auto* r = new api::ComponentRegistry();
    EXPECT_TRUE(spout::RegisterBuiltinSpouts(*r).ok());
    EXPECT_TRUE(r->RegisterBolt("test.CountingBolt", [](const api::ComponentArgs&) {
                   return absl::StatusOr<std::unique_ptr<api::Bolt>>(
                       std::make_unique<CountingBolt>());
                 }).ok());
    return r;
  }();
  return *registry;
}

using Range = std::pair<int32_t, int32_t>;

constexpr int64_t kTrees = 6000;

core::TopologyDef MakeTopology() {
  testing::TopologyBuilder b("regroup");
  b.SetSpout("gen", "tempest.SequenceSpout", 1);
  b.SetBolt("count", "test.CountingBolt", 1).NumTasks(2).ShuffleGrouping("gen");
  b.Config(api::kTopologyAckerExecutors, int64_t{1});
  // Far beyond the test: a tree could only be replayed because it failed.
  b.Config(api::kTopologyMessageTimeoutSecs, int64_t{600});
  core::TopologyDef def = b.Build();
  def.spouts[0].args.properties = {
      {"count", kTrees}, {"payloadBytes", int64_t{100}}, {"rate", 2000.0}};
  return def;
}

WorkerOptions Options() {
  WorkerOptions o;
  o.registry = &Registry();
  o.executor.max_park = milliseconds(20);
  o.reconnect_max = milliseconds(200);
  return o;
}

class RegroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const core::TopologyDef def = MakeTopology();
    auto layout = core::TaskLayout::Create(def, 1);
    ASSERT_TRUE(layout.ok());
    std::vector<Range> a;
    for (const core::ExecutorInfo& e : layout->executors()) {
      const Range r{e.start.value(), e.end.value()};
      if (e.component.value() == "count") {
        count_ = r;
      } else {
        a.push_back(r);
      }
    }
    ASSERT_EQ(count_.second - count_.first, 1);
    WorkerPlan pa;
    pa.topology_id = "regroup-1-1";
    pa.def = def;
    pa.local_executors = a;
    pa.port = support::FreePort();
    pa.secret = "regroup-secret";
    WorkerPlan pb = pa;
    pb.local_executors = {count_};
    pb.port = support::FreePort();
    pa.remote_workers = {RemoteWorker{"127.0.0.1", pb.port, pb.local_executors}};
    pb.remote_workers = {RemoteWorker{"127.0.0.1", pa.port, a}};
    a_ranges_ = a;
    a_port_ = pa.port;
    auto wa = Worker::Create(pa, Options());
    auto wb = Worker::Create(pb, Options());
    ASSERT_TRUE(wa.ok()) << wa.status();
    ASSERT_TRUE(wb.ok()) << wb.status();
    a_ = *std::move(wa);
    b_ = *std::move(wb);
    ASSERT_TRUE(b_->Start().ok());
    ASSERT_TRUE(a_->Start().ok());
  }

  void TearDown() override {
    if (a_) {
      EXPECT_TRUE(a_->Kill(seconds(2)).ok());
    }
    if (b_) {
      EXPECT_TRUE(b_->Kill(seconds(2)).ok());
    }
  }

  std::vector<RemoteWorker> ToA() const { return {RemoteWorker{"127.0.0.1", a_port_, a_ranges_}}; }

  bool AckedAtLeast(int64_t n) {
    return support::Eventually(seconds(60), [&] { return a_->Stats().acked >= n; });
  }

  std::map<int32_t, Seen> Snapshot() {
    std::lock_guard<std::mutex> lock(seen_mu);
    return seen;
  }

  std::vector<Range> CountExecutors() {
    std::vector<Range> ranges;
    for (const core::ExecutorInfo& e : b_->Executors()) {
      if (e.component.value() == "count") ranges.emplace_back(e.start.value(), e.end.value());
    }
    return ranges;
  }

  Range count_;
  std::vector<Range> a_ranges_;
  int a_port_ = 0;
  std::unique_ptr<Worker> a_;
  std::unique_ptr<Worker> b_;
};

TEST_F(RegroupTest, BoltSplitAndMergedInPlaceKeepsItsObjectsAndLosesNoTree) {
  ASSERT_TRUE(AckedAtLeast(kTrees / 4));
  const std::map<int32_t, Seen> before = Snapshot();
  ASSERT_EQ(before.size(), 2u);

  const Range first{count_.first, count_.first};
  const Range second{count_.second, count_.second};
  ASSERT_TRUE(b_->RegroupExecutors({first, second}, ToA()).ok());
  EXPECT_EQ(CountExecutors(), (std::vector<Range>{first, second}));
  ASSERT_TRUE(AckedAtLeast(kTrees / 2));

  ASSERT_TRUE(b_->RegroupExecutors({count_}, ToA()).ok());
  EXPECT_EQ(CountExecutors(), (std::vector<Range>{count_}));
  ASSERT_TRUE(AckedAtLeast(kTrees)) << "acked " << a_->Stats().acked << ", failed "
                                    << a_->Stats().failed;
  EXPECT_TRUE(support::Eventually(seconds(30), [&] { return b_->Idle() && a_->Idle(); }));

  EXPECT_EQ(a_->Stats().acked, kTrees);
  EXPECT_EQ(a_->Stats().failed, 0);
  const std::map<int32_t, Seen> after = Snapshot();
  int64_t counted = 0;
  for (const auto& [task, s] : after) {
    ASSERT_TRUE(before.contains(task));
    EXPECT_EQ(s.instance, before.at(task).instance) << "task " << task << " got a new bolt";
    EXPECT_EQ(s.prepares, 1) << "task " << task;
    EXPECT_GE(s.count, before.at(task).count);
    counted += s.count;
  }
  // Counts that restarted from zero would sum to less; replays to more.
  EXPECT_EQ(counted, kTrees);
}

TEST_F(RegroupTest, RegroupingsThatNeedARestartAreRefusedAndTheWorkerRunsOn) {
  ASSERT_TRUE(AckedAtLeast(100));
  // A task leaving this worker out of an executor that stays in part:
  // only whole bolt executors leave in place.
  std::vector<Range> with_second = a_ranges_;
  with_second.emplace_back(count_.second, count_.second);
  const absl::Status leaves = b_->RegroupExecutors(
      {{count_.first, count_.first}}, {RemoteWorker{"127.0.0.1", a_port_, with_second}});
  EXPECT_EQ(leaves.code(), absl::StatusCode::kFailedPrecondition) << leaves;
  // Routes that leave a task to no one.
  const absl::Status uncovered =
      b_->RegroupExecutors({{count_.first, count_.first}, {count_.second, count_.second}}, {});
  EXPECT_FALSE(uncovered.ok());
  EXPECT_EQ(CountExecutors(), (std::vector<Range>{count_}));
  ASSERT_TRUE(AckedAtLeast(kTrees));
  EXPECT_EQ(a_->Stats().failed, 0);
}

// Three workers: S runs the spout and the acker, A both counting
// executors; N, started beside them, is the new worker a rebalance gives one
// of A's executors to.
class LeaveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    {
      std::lock_guard<std::mutex> lock(seen_mu);
      seen.clear();
    }
    executed_total.store(0);
    def_ = MakeTopology();
    def_.bolts[0].parallelism = 2;
    def_.spouts[0].args.properties["count"] = trees_;
    auto layout = core::TaskLayout::Create(def_, 1);
    ASSERT_TRUE(layout.ok());
    for (const core::ExecutorInfo& e : layout->executors()) {
      const Range r{e.start.value(), e.end.value()};
      (e.component.value() == "count" ? counts_ : s_ranges_).push_back(r);
    }
    ASSERT_EQ(counts_.size(), 2u);
    s_port_ = support::FreePort();
    a_port_ = support::FreePort();
    n_port_ = support::FreePort();
    s_ = Make(s_port_, s_ranges_, {To(a_port_, counts_)});
    a_ = Make(a_port_, counts_, {To(s_port_, s_ranges_)});
    n_ = Make(n_port_, {Leaving()}, {To(s_port_, s_ranges_), To(a_port_, {Staying()})});
    ASSERT_TRUE(a_ && s_ && n_);
    ASSERT_TRUE(a_->Start().ok());
    ASSERT_TRUE(n_->Start().ok());
    ASSERT_TRUE(s_->Start().ok());
  }

  void TearDown() override {
    for (std::unique_ptr<Worker>* w : {&s_, &a_, &n_}) {
      if (*w) {
        EXPECT_TRUE((*w)->Kill(seconds(2)).ok());
      }
    }
  }

  static RemoteWorker To(int port, std::vector<Range> ranges) {
    return RemoteWorker{"127.0.0.1", port, std::move(ranges)};
  }
  Range Staying() const { return counts_[0]; }
  Range Leaving() const { return counts_[1]; }

  std::unique_ptr<Worker> Make(int port, std::vector<Range> local,
                               std::vector<RemoteWorker> remote) {
    WorkerPlan p;
    p.topology_id = "leave-1-1";
    p.def = def_;
    p.local_executors = std::move(local);
    p.remote_workers = std::move(remote);
    p.port = port;
    p.secret = "leave-secret";
    WorkerOptions o = Options();
    o.max_queued_bytes = max_queued_bytes_;
    auto w = Worker::Create(std::move(p), o);
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? *std::move(w) : nullptr;
  }

  bool AckedAtLeast(int64_t n) {
    return support::Eventually(seconds(60), [&] { return s_->Stats().acked >= n; });
  }

  int64_t trees_ = kTrees;
  size_t max_queued_bytes_ = WorkerOptions().max_queued_bytes;
  core::TopologyDef def_;
  std::vector<Range> counts_;
  std::vector<Range> s_ranges_;
  int s_port_ = 0;
  int a_port_ = 0;
  int n_port_ = 0;
  std::unique_ptr<Worker> s_;
  std::unique_ptr<Worker> a_;
  std::unique_ptr<Worker> n_;
};

TEST_F(LeaveTest, ABoltExecutorLeavesInPlaceAndLateSendsAreForwarded) {
  ASSERT_TRUE(AckedAtLeast(kTrees / 4));
  // A spout or acker executor leaving needs a restart: refused, nothing
  // changes.
  ASSERT_EQ(s_ranges_.size(), 2u);
  const absl::Status spout_leaves = s_->RegroupExecutors(
      {s_ranges_[0]}, {To(a_port_, counts_), To(n_port_, {s_ranges_[1]})});
  EXPECT_EQ(spout_leaves.code(), absl::StatusCode::kFailedPrecondition) << spout_leaves;

  ASSERT_TRUE(a_->RegroupExecutors({Staying()}, {To(s_port_, s_ranges_),
                                                 To(n_port_, {Leaving()})})
                  .ok());
  std::vector<Range> running;
  for (const core::ExecutorInfo& e : a_->Executors()) {
    running.emplace_back(e.start.value(), e.end.value());
  }
  EXPECT_EQ(running, (std::vector<Range>{Staying()}));
  // S still sends the leaving task's tuples to A, which forwards them.
  EXPECT_TRUE(support::Eventually(seconds(60), [&] { return a_->RemoteForwarded() > 0; }));
  ASSERT_TRUE(s_->UpdateRemoteWorkers({To(a_port_, {Staying()}), To(n_port_, {Leaving()})}).ok());

  ASSERT_TRUE(AckedAtLeast(kTrees)) << "acked " << s_->Stats().acked << ", failed "
                                    << s_->Stats().failed;
  EXPECT_TRUE(support::Eventually(
      seconds(30), [&] { return s_->Idle() && a_->Idle() && n_->Idle(); }));
  EXPECT_EQ(s_->Stats().acked, kTrees);
  EXPECT_EQ(s_->Stats().failed, 0);
  // Each tuple executed once: none lost, none replayed.
  EXPECT_EQ(executed_total.load(), kTrees);
  EXPECT_EQ(a_->RemoteUnknownTask(), 0);
  std::lock_guard<std::mutex> lock(seen_mu);
  // The leaving task's object in A was cleaned up; N prepared its own.
  EXPECT_EQ(seen[Leaving().first].cleanups, 1);
  EXPECT_EQ(seen[Leaving().first].prepares, 2);
  EXPECT_EQ(seen[Staying().first].prepares, 1);
  EXPECT_EQ(seen[Staying().first].cleanups, 0);
}

// The new worker is down while the leave happens: the forwarded messages
// fill the (small) connection to it and wait, the spout's connection to the
// old worker pauses, and once the new worker is up everything flows on.
class LeaveToAWorkerNotUpYetTest : public LeaveTest {
 protected:
  void SetUp() override {
    trees_ = 20000;
    max_queued_bytes_ = 64 << 10;
    LeaveTest::SetUp();
  }
};

TEST_F(LeaveToAWorkerNotUpYetTest, ForwardsWaitForRoomAndNothingIsLost) {
  ASSERT_TRUE(AckedAtLeast(1000));
  // Nothing was sent to it yet: its port goes quiet until it comes back.
  ASSERT_TRUE(n_->Kill(seconds(0)).ok());
  n_.reset();
  ASSERT_TRUE(a_->RegroupExecutors({Staying()}, {To(s_port_, s_ranges_),
                                                 To(n_port_, {Leaving()})})
                  .ok());
  const core::MetricLabels labels{{"topology", "leave-1-1"}};
  core::Counter& pauses = a_->metrics().GetCounter("tempest_worker_remote_pauses_total", labels);
  EXPECT_TRUE(support::Eventually(seconds(60), [&] { return pauses.Value() > 0; }));
  const int64_t forwarded = a_->RemoteForwarded();
  EXPECT_GT(forwarded, 0);
  n_ = Make(n_port_, {Leaving()}, {To(s_port_, s_ranges_), To(a_port_, {Staying()})});
  ASSERT_TRUE(n_ != nullptr);
  ASSERT_TRUE(n_->Start().ok());
  EXPECT_TRUE(support::Eventually(seconds(60), [&] { return a_->RemoteForwarded() > forwarded; }));
  ASSERT_TRUE(s_->UpdateRemoteWorkers({To(a_port_, {Staying()}), To(n_port_, {Leaving()})}).ok());

  ASSERT_TRUE(AckedAtLeast(trees_)) << "acked " << s_->Stats().acked << ", failed "
                                    << s_->Stats().failed;
  EXPECT_EQ(s_->Stats().acked, trees_);
  EXPECT_EQ(s_->Stats().failed, 0);
  EXPECT_EQ(executed_total.load(), trees_);
  EXPECT_EQ(a_->RemoteUnknownTask(), 0);
}

}  // namespace
}  // namespace tempest::worker
