// Storm's acking integration cases (TopologyIntegrationTest: testAcking,
// testAckBranching, testAckingSelfAnchor, testTimeout, testResetTimeout) and
// the engine's own: max spout pending, ackers = 0, a throwing bolt, and the
// ack cycle under full queues.

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "common/api/component_registry.h"
#include "gtest/gtest.h"
#include "tests/integration/worker/test_components.h"
#include "tests/support/fake_clock.h"
#include "worker/local_cluster.h"
#include "worker/testing/feeder_spout.h"
#include "worker/testing/fixed_tuple_spout.h"
#include "worker/testing/topology_builder.h"

namespace tempest::worker::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr milliseconds kWait(20000);

api::Values Num(int64_t n) { return {api::Value(n)}; }

std::unique_ptr<LocalCluster> StartCluster(core::TopologyDef def,
                                           const api::ComponentRegistry& registry,
                                           core::Clock* clock = nullptr) {
  LocalClusterOptions options;
  options.registry = &registry;
  options.clock = clock;
  options.executor.max_park = milliseconds(5);
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(std::move(def), options);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return nullptr;
  absl::Status started = (*cluster)->Start();
  EXPECT_TRUE(started.ok()) << started;
  return std::move(*cluster);
}

struct Feed {
  std::shared_ptr<Feeder> feeder = std::make_shared<Feeder>();
  std::shared_ptr<AckFailTracker> tracker = std::make_shared<AckFailTracker>();
};

void AddFeeder(api::ComponentRegistry& r, const std::string& name, const Feed& f) {
  AddSpout(r, name, [f] {
    return std::make_unique<FeederSpout>(f.feeder, api::Fields({"num"}), f.tracker);
  });
}

// testAckBranching: a tree that fans out (2 and 4 copies per input, two
// levels) is acked exactly once, and only once every branch is acked.
TEST(AckingTest, BranchingTreesAreAckedOncePerSpoutTuple) {
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  AddBolt(r, "branch2", [] { return std::make_unique<BranchingBolt>(2); });
  AddBolt(r, "branch4", [] { return std::make_unique<BranchingBolt>(4); });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("branching");
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "branch2", 2).ShuffleGrouping("1");
  b.SetBolt("3", "branch4", 2).ShuffleGrouping("2");
  b.SetBolt("4", "ack", 3).ShuffleGrouping("3");
  auto cluster = StartCluster(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  for (int i = 0; i < 50; ++i) f.feeder->Feed(Num(i), api::Value(i));
  ASSERT_TRUE(cluster->TrackedWait(50, kWait));
  EXPECT_EQ(f.tracker->num_acked(), 50u);
  EXPECT_EQ(f.tracker->num_failed(), 0u);
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(f.tracker->IsAcked(api::Value(i))) << i;
  const LocalClusterStats stats = cluster->Stats();
  EXPECT_EQ(stats.acked, 50);
  EXPECT_EQ(stats.pending, 0);
  // 50 spout tuples, 100 at level 2, 400 at level 3 => 550 deliveries.
  EXPECT_EQ(stats.transferred, 50 + 100 + 400);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// testAcking's join: a tuple anchored to three trees (from two spouts)
// completes all three only when it is acked; until then none is acked.
TEST(AckingTest, AggregatingJoinAcksEveryInputTreeTogether) {
  api::ComponentRegistry r;
  Feed f1, f2;
  AddFeeder(r, "feeder1", f1);
  AddFeeder(r, "feeder2", f2);
  AddBolt(r, "agg3", [] { return std::make_unique<AggBolt>(3); });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("join");
  b.SetSpout("s1", "feeder1");
  b.SetSpout("s2", "feeder2");
  b.SetBolt("agg", "agg3").GlobalGrouping("s1").GlobalGrouping("s2");
  b.SetBolt("sink", "ack").ShuffleGrouping("agg");
  auto cluster = StartCluster(b.Build(), r);
  ASSERT_NE(cluster, nullptr);

  f1.feeder->Feed(Num(1), api::Value(1));
  f2.feeder->Feed(Num(2), api::Value(2));
  ASSERT_TRUE(cluster->TrackedWait(2, kWait));
  EXPECT_EQ(f1.tracker->num_acked() + f2.tracker->num_acked(), 0u);
  EXPECT_EQ(cluster->Stats().pending, 2);

  f1.feeder->Feed(Num(3), api::Value(3));
  ASSERT_TRUE(cluster->TrackedWait(1, kWait));
  EXPECT_TRUE(f1.tracker->IsAcked(api::Value(1)));
  EXPECT_TRUE(f1.tracker->IsAcked(api::Value(3)));
  EXPECT_TRUE(f2.tracker->IsAcked(api::Value(2)));
  EXPECT_EQ(cluster->Stats().pending, 0);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// testAckingSelfAnchor: anchoring one emit to the same input twice must not
// break the XOR (each anchor gets its own edge id).
TEST(AckingTest, SelfAnchoringTwiceStillCompletes) {
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  AddBolt(r, "dup", [] { return std::make_unique<DupAnchorBolt>(); });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("self-anchor");
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "dup").ShuffleGrouping("1");
  b.SetBolt("3", "ack").ShuffleGrouping("2");
  auto cluster = StartCluster(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  for (int i = 0; i < 20; ++i) f.feeder->Feed(Num(i), api::Value(i));
  ASSERT_TRUE(cluster->TrackedWait(20, kWait));
  EXPECT_EQ(f.tracker->num_acked(), 20u);
  EXPECT_EQ(f.tracker->num_failed(), 0u);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// testTimeout with a fake clock: every other tuple is acked; the others
// fail once the message timeout has passed (2-bucket rotation: between T
// and 2T), and not before.
TEST(AckingTest, UnackedTuplesFailAfterTheMessageTimeout) {
  tempest::testing::FakeClock clock;
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  AddBolt(r, "every-other", [] { return std::make_unique<AckEveryOtherBolt>(); });
  TopologyBuilder b("timeout");
  b.Config(api::kTopologyMessageTimeoutSecs, 10);
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "every-other").GlobalGrouping("1");
  auto cluster = StartCluster(b.Build(), r, &clock);
  ASSERT_NE(cluster, nullptr);
  for (int i = 1; i <= 4; ++i) f.feeder->Feed(Num(i), api::Value(i));
  ASSERT_TRUE(cluster->TrackedWait(4, kWait));
  EXPECT_TRUE(f.tracker->IsAcked(api::Value(1)));
  EXPECT_TRUE(f.tracker->IsAcked(api::Value(3)));
  EXPECT_EQ(f.tracker->num_acked(), 2u);

  clock.Advance(seconds(9));
  ASSERT_TRUE(cluster->WaitForClock(kWait));
  ASSERT_TRUE(cluster->WaitIdle(kWait));
  EXPECT_EQ(f.tracker->num_failed(), 0u) << "failed before the timeout";

  clock.Advance(seconds(12));  // 21 s > 2T: both rotations have happened.
  ASSERT_TRUE(cluster->WaitForClock(kWait));
  ASSERT_TRUE(cluster->WaitIdle(kWait));
  EXPECT_TRUE(f.tracker->IsFailed(api::Value(2)));
  EXPECT_TRUE(f.tracker->IsFailed(api::Value(4)));
  EXPECT_EQ(f.tracker->num_failed(), 2u);
  EXPECT_EQ(cluster->Stats().pending, 0);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// Message ids that are not integers (strings, lists) are kept aside while
// their trees are pending and handed back unchanged to Ack and, after the
// timeout, to Fail; the spout's storage for them is reused afterwards.
TEST(AckingTest, NonIntegerMessageIdsComeBackOnAckAndOnTimeout) {
  tempest::testing::FakeClock clock;
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  AddBolt(r, "every-other", [] { return std::make_unique<AckEveryOtherBolt>(); });
  TopologyBuilder b("boxed-ids");
  b.Config(api::kTopologyMessageTimeoutSecs, 10);
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "every-other").GlobalGrouping("1");
  auto cluster = StartCluster(b.Build(), r, &clock);
  ASSERT_NE(cluster, nullptr);
  auto id = [](int i) {
    return i % 3 == 0 ? api::Value(api::ValueList{api::Value("list"), api::Value(i)})
                      : api::Value("id-" + std::to_string(i));
  };
  for (int i = 1; i <= 6; ++i) f.feeder->Feed(Num(i), id(i));
  ASSERT_TRUE(cluster->TrackedWait(6, kWait));
  for (int i : {1, 3, 5}) EXPECT_TRUE(f.tracker->IsAcked(id(i))) << i;
  EXPECT_EQ(f.tracker->num_acked(), 3u);

  clock.Advance(seconds(21));  // both rotations: 2, 4 and 6 time out
  ASSERT_TRUE(cluster->WaitForClock(kWait));
  ASSERT_TRUE(cluster->WaitIdle(kWait));
  for (int i : {2, 4, 6}) EXPECT_TRUE(f.tracker->IsFailed(id(i))) << i;
  EXPECT_EQ(f.tracker->num_failed(), 3u);

  for (int i = 7; i <= 10; ++i) f.feeder->Feed(Num(i), id(i));
  ASSERT_TRUE(cluster->TrackedWait(4, kWait));
  for (int i : {7, 9}) EXPECT_TRUE(f.tracker->IsAcked(id(i))) << i;
  EXPECT_EQ(f.tracker->num_acked(), 5u);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// testResetTimeout: a bolt holding a tuple far longer than the timeout keeps
// it alive with ResetTimeout (on every tick), and the final ack completes it.
TEST(AckingTest, ResetTimeoutKeepsAHeldTupleAlive) {
  tempest::testing::FakeClock clock;
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  auto control = std::make_shared<HoldControl>();
  control->reset_on_tick = true;
  AddBolt(r, "hold", [control] { return std::make_unique<HoldBolt>(control); });
  TopologyBuilder b("reset-timeout");
  b.Config(api::kTopologyMessageTimeoutSecs, 10);
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "hold").ShuffleGrouping("1").Config(api::kTopologyTickTupleFreqSecs, 2);
  auto cluster = StartCluster(b.Build(), r, &clock);
  ASSERT_NE(cluster, nullptr);
  f.feeder->Feed(Num(7), api::Value(7));
  ASSERT_TRUE(cluster->TrackedWait(1, kWait));
  ASSERT_EQ(control->received.load(), 1);

  // 40 s of fake time in 1 s steps, letting the resets travel each time.
  for (int s = 0; s < 40; ++s) {
    clock.Advance(seconds(1));
    ASSERT_TRUE(cluster->WaitForClock(kWait));
    ASSERT_TRUE(cluster->WaitIdle(kWait));
  }
  EXPECT_GE(control->resets.load(), 15);
  EXPECT_EQ(f.tracker->num_failed(), 0u) << "timed out despite ResetTimeout";

  control->hold = false;
  clock.Advance(seconds(2));  // next tick acks what is held
  ASSERT_TRUE(cluster->WaitForClock(kWait));
  ASSERT_TRUE(cluster->WaitIdle(kWait));
  EXPECT_TRUE(f.tracker->IsAcked(api::Value(7)));
  EXPECT_EQ(f.tracker->num_failed(), 0u);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// Control for the previous test: without resets the held tuple times out.
TEST(AckingTest, HeldTupleWithoutResetTimesOut) {
  tempest::testing::FakeClock clock;
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  auto control = std::make_shared<HoldControl>();
  AddBolt(r, "hold", [control] { return std::make_unique<HoldBolt>(control); });
  TopologyBuilder b("no-reset");
  b.Config(api::kTopologyMessageTimeoutSecs, 10);
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "hold").ShuffleGrouping("1").Config(api::kTopologyTickTupleFreqSecs, 2);
  auto cluster = StartCluster(b.Build(), r, &clock);
  ASSERT_NE(cluster, nullptr);
  f.feeder->Feed(Num(7), api::Value(7));
  ASSERT_TRUE(cluster->TrackedWait(1, kWait));
  for (int s = 0; s < 25; ++s) {
    clock.Advance(seconds(1));
    ASSERT_TRUE(cluster->WaitForClock(kWait));
    ASSERT_TRUE(cluster->WaitIdle(kWait));
  }
  EXPECT_TRUE(f.tracker->IsFailed(api::Value(7)));
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// A spout's tuple for a bolt in its own worker carries its tree's init, so
// the acker hears of a tree only when the bolt answers: it tracks nothing
// while the bolt holds the tuples, and the acks alone complete the trees.
TEST(AckingTest, TreesToABoltInTheSameWorkerReachTheAckerWithTheAck) {
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  auto control = std::make_shared<HoldControl>();
  AddBolt(r, "hold", [control] { return std::make_unique<HoldBolt>(control); });
  TopologyBuilder b("carried-init");
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "hold").ShuffleGrouping("1");
  auto cluster = StartCluster(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  std::string acker_task;
  for (const core::ExecutorInfo& e : cluster->Executors()) {
    if (e.component.value() == api::kAckerComponentName) {
      acker_task = std::to_string(e.start.value());
    }
  }
  ASSERT_FALSE(acker_task.empty());
  core::Gauge& acker_trees = cluster->metrics().GetGauge(
      "tempest_acker_pending_trees",
      {{"component", std::string(api::kAckerComponentName)}, {"task", acker_task}});

  for (int i = 1; i <= 3; ++i) f.feeder->Feed(Num(i), api::Value(i));
  ASSERT_TRUE(cluster->TrackedWait(3, kWait));
  ASSERT_EQ(control->received.load(), 3);
  EXPECT_EQ(acker_trees.Value(), 0) << "the acker was sent the inits of held tuples";
  EXPECT_EQ(f.tracker->num_acked(), 0u);

  control->hold = false;
  f.feeder->Feed(Num(4), api::Value(4));  // its Execute acks all four
  ASSERT_TRUE(cluster->TrackedWait(1, kWait));
  EXPECT_EQ(f.tracker->num_acked(), 4u);
  EXPECT_EQ(f.tracker->num_failed(), 0u);
  EXPECT_EQ(acker_trees.Value(), 0);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// Emits one tuple anchored to each input and holds the input; an input
// with a negative number fails every held one and is acked itself.
class FailHeldOnSignalBolt final : public TestBolt {
 public:
  void Execute(const api::Tuple& input) override {
    if (input.GetInt(0) < 0) {
      for (const api::Tuple& t : held_) collector_->Fail(t);
      held_.clear();
      collector_->Ack(input);
      return;
    }
    collector_->Emit(input, {input.Get(0)});
    held_.push_back(input);
  }

 private:
  std::vector<api::Tuple> held_;
};

// A held tuple that carries its tree's init and is then failed reaches the
// spout as a failure at once, not after the message timeout (30 s here),
// even though the tuple it emitted was acked first: the init handed on with
// the fail keeps the tree open until the fail arrives.
TEST(AckingTest, FailingAHeldTupleThatCarriesItsInitFailsItAtOnce) {
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  AddBolt(r, "fail-later", [] { return std::make_unique<FailHeldOnSignalBolt>(); });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("carried-init-fail");
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "fail-later").ShuffleGrouping("1");
  b.SetBolt("3", "ack").ShuffleGrouping("2");
  auto cluster = StartCluster(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  f.feeder->Feed(Num(1), api::Value(1));
  f.feeder->Feed(Num(2), api::Value(2));
  ASSERT_TRUE(cluster->TrackedWait(2, kWait));
  EXPECT_EQ(f.tracker->num_acked() + f.tracker->num_failed(), 0u);
  f.feeder->Feed(Num(-1), api::Value(3));  // the signal: fail what is held, ack it
  ASSERT_TRUE(cluster->TrackedWait(1, kWait));
  EXPECT_TRUE(f.tracker->IsFailed(api::Value(1)));
  EXPECT_TRUE(f.tracker->IsFailed(api::Value(2)));
  EXPECT_TRUE(f.tracker->IsAcked(api::Value(3)));
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// topology.max.spout.pending: with 3 allowed and a bolt that holds every
// tuple, the spout stops calling NextTuple after 3; releasing the bolt lets
// the rest through, and the stall is counted.
TEST(AckingTest, MaxSpoutPendingThrottlesNextTuple) {
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  auto control = std::make_shared<HoldControl>();
  AddBolt(r, "hold", [control] { return std::make_unique<HoldBolt>(control); });
  TopologyBuilder b("max-pending");
  b.SetSpout("1", "feeder");
  b.SpoutConfig("1", api::kTopologyMaxSpoutPending, 3);
  b.SetBolt("2", "hold").ShuffleGrouping("1").Config(api::kTopologyTickTupleFreqSecs, 1);
  auto cluster = StartCluster(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  for (int i = 0; i < 10; ++i) f.feeder->Feed(Num(i), api::Value(i));
  ASSERT_TRUE(cluster->TrackedWait(3, kWait));
  EXPECT_EQ(control->received.load(), 3);
  EXPECT_EQ(cluster->Stats().pending, 3);
  int64_t stalls = 0;
  for (const core::MetricSample& m : cluster->metrics().Snapshot()) {
    if (m.name == "tempest_spout_max_pending_stalls_total") stalls += m.value;
  }
  EXPECT_GE(stalls, 1);

  control->hold = false;  // the next tick (1 s) acks what is held
  f.feeder->Finish();
  ASSERT_TRUE(cluster->WaitFinished(kWait));
  EXPECT_EQ(control->received.load(), 10);
  EXPECT_EQ(f.tracker->num_acked(), 10u);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// topology.acker.executors = 0: the spout's Ack runs at emit time, even
// though no bolt ever acks.
TEST(AckingTest, ZeroAckersAckAtEmitTime) {
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  auto control = std::make_shared<HoldControl>();
  AddBolt(r, "hold", [control] { return std::make_unique<HoldBolt>(control); });
  TopologyBuilder b("no-ackers");
  b.Config(api::kTopologyAckerExecutors, 0);
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "hold").ShuffleGrouping("1");
  auto cluster = StartCluster(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  EXPECT_TRUE(cluster->layout().TasksOf(api::ComponentId("__acker")).empty());
  for (int i = 0; i < 5; ++i) f.feeder->Feed(Num(i), api::Value(i));
  ASSERT_TRUE(cluster->TrackedWait(5, kWait));
  EXPECT_EQ(f.tracker->num_acked(), 5u);
  EXPECT_EQ(control->received.load(), 5);
  EXPECT_EQ(cluster->Stats().pending, 0);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// A bolt that acks outside Execute (Bolt::Poll) is polled while its input
// queue is idle: tuples released after the last input still complete, and
// what Poll emits flows downstream.
TEST(AckingTest, PolledBoltAcksAfterInputStops) {
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  auto control = std::make_shared<HoldControl>();
  control->hold.store(true);
  AddBolt(r, "release", [control] { return std::make_unique<PolledReleaseBolt>(control); });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("polled");
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "release").ShuffleGrouping("1");
  b.SetBolt("3", "ack").ShuffleGrouping("2");
  auto cluster = StartCluster(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  for (int i = 0; i < 10; ++i) f.feeder->Feed(Num(i), api::Value(i));
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (control->received.load() < 10 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  ASSERT_EQ(control->received.load(), 10);
  EXPECT_EQ(f.tracker->num_acked(), 0u);
  control->hold.store(false);  // no input arrives after this
  // Not TrackedWait: a bolt holding tuples looks idle to the cluster.
  while (f.tracker->num_acked() < 10 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  EXPECT_EQ(f.tracker->num_acked(), 10u);
  EXPECT_EQ(f.tracker->num_failed(), 0u);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// A bolt that throws fails its tuple at the spout; the worker keeps going
// and the error is recorded.
class ThrowOnOddBolt final : public TestBolt {
 public:
  void Execute(const api::Tuple& input) override {
    if (input.GetInt(0) % 2 == 1) throw std::runtime_error("odd input");
    collector_->Ack(input);
  }
};

TEST(AckingTest, ThrowingBoltFailsItsTupleAndKeepsRunning) {
  api::ComponentRegistry r;
  Feed f;
  AddFeeder(r, "feeder", f);
  AddBolt(r, "thrower", [] { return std::make_unique<ThrowOnOddBolt>(); });
  TopologyBuilder b("throwing");
  b.SetSpout("1", "feeder");
  b.SetBolt("2", "thrower").ShuffleGrouping("1");
  auto cluster = StartCluster(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  for (int i = 0; i < 10; ++i) f.feeder->Feed(Num(i), api::Value(i));
  ASSERT_TRUE(cluster->TrackedWait(4, kWait));
  EXPECT_EQ(f.tracker->num_acked(), 5u);
  EXPECT_EQ(f.tracker->num_failed(), 5u);
  EXPECT_TRUE(f.tracker->IsFailed(api::Value(3)));
  EXPECT_EQ(cluster->Stats().errors, 5);
  ASSERT_FALSE(cluster->RecentErrors().empty());
  EXPECT_NE(cluster->RecentErrors().front().find("odd input"), std::string::npos);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// Deadlock freedom: tiny queues (8 slots per producer), acking on, no max
// pending, a two-bolt chain with branching. The spout blocks on full bolt
// queues while acks pile up in its lane; everything must still complete.
TEST(AckingTest, AckCycleDoesNotDeadlockWithFullQueues) {
  api::ComponentRegistry r;
  std::vector<api::Values> input;
  for (int i = 0; i < 20000; ++i) input.push_back(Num(i));
  auto tracker = std::make_shared<AckFailTracker>();
  AddSpout(r, "fixed", [input, tracker] {
    return std::make_unique<FixedTupleSpout>(input, api::Fields({"num"}), tracker);
  });
  AddBolt(r, "branch2", [] { return std::make_unique<BranchingBolt>(2); });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("full-queues");
  b.SetSpout("1", "fixed");
  b.SetBolt("2", "branch2").ShuffleGrouping("1");
  b.SetBolt("3", "ack").ShuffleGrouping("2");
  LocalClusterOptions options;
  options.registry = &r;
  options.executor.ring_capacity = 8;
  options.executor.batch_size = 4;
  options.executor.drain_batch = 4;
  auto cluster = LocalCluster::Create(b.Build(), options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_TRUE((*cluster)->Start().ok());
  ASSERT_TRUE((*cluster)->WaitFinished(std::chrono::milliseconds(120000)));
  EXPECT_EQ(tracker->num_acked(), 20000u);
  EXPECT_EQ(tracker->num_failed(), 0u);
  ASSERT_TRUE((*cluster)->Kill(milliseconds(0)).ok());
}

}  // namespace
}  // namespace tempest::worker::testing
