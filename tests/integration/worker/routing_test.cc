// Routing through the executors: fields, global, local-or-shuffle and
// direct groupings, emit returning its target tasks, and CompleteTopology.

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>

#include "common/core/grouping/fields_grouper.h"
#include "common/core/topology/topology_validator.h"
#include "gtest/gtest.h"
#include "tests/integration/worker/test_components.h"
#include "worker/local_cluster.h"
#include "worker/task_router.h"
#include "worker/testing/complete_topology.h"
#include "worker/testing/fixed_tuple_spout.h"
#include "worker/testing/topology_builder.h"
#include "worker/testing/tuple_capture_bolt.h"

namespace tempest::worker::testing {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kWait(30000);

std::vector<api::Values> KeyedInput(int keys, int copies) {
  std::vector<api::Values> out;
  for (int c = 0; c < copies; ++c) {
    for (int k = 0; k < keys; ++k) {
      out.push_back({api::Value("key-" + std::to_string(k)), api::Value(int64_t{c})});
    }
  }
  return out;
}

// Runs `def` until finished with a capture bolt registered as "capture".
std::unique_ptr<LocalCluster> RunToCompletion(core::TopologyDef def,
                                              const api::ComponentRegistry& r) {
  LocalClusterOptions options;
  options.registry = &r;
  auto cluster = LocalCluster::Create(std::move(def), options);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return nullptr;
  EXPECT_TRUE((*cluster)->Start().ok());
  EXPECT_TRUE((*cluster)->WaitFinished(kWait));
  return std::move(*cluster);
}

TEST(RoutingTest, FieldsGroupingSendsEqualKeysToTheSameTask) {
  api::ComponentRegistry r;
  auto input = KeyedInput(16, 10);
  auto store = std::make_shared<CaptureStore>();
  AddSpout(r, "fixed", [input] {
    return std::make_unique<FixedTupleSpout>(input, api::Fields({"key", "n"}));
  });
  AddBolt(r, "capture", [store] { return std::make_unique<TupleCaptureBolt>(store); });
  TopologyBuilder b("fields");
  b.SetSpout("src", "fixed");
  b.SetBolt("sink", "capture", 4).FieldsGrouping("src", {"key"});
  auto cluster = RunToCompletion(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  const std::vector<api::TaskId>& tasks = cluster->layout().TasksOf(api::ComponentId("sink"));
  ASSERT_EQ(tasks.size(), 4u);
  std::map<std::string, std::set<int32_t>> key_tasks;
  std::set<int32_t> used;
  for (const CapturedTuple& t : store->All()) {
    key_tasks[t.values[0].AsString()].insert(t.receiving_task);
    used.insert(t.receiving_task);
  }
  ASSERT_EQ(store->size(), input.size());
  ASSERT_EQ(key_tasks.size(), 16u);
  // Placement is Storm's: the task at index floorMod(javaHash(key), n).
  core::FieldsGrouper reference(tasks, {0});
  for (const auto& [key, seen] : key_tasks) {
    ASSERT_EQ(seen.size(), 1u) << key << " went to several tasks";
    const int index = reference.ChooseIndex({api::Value(key), api::Value(int64_t{0})});
    EXPECT_EQ(*seen.begin(), tasks[index].value()) << key;
  }
  EXPECT_GT(used.size(), 1u);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

TEST(RoutingTest, GlobalGroupingSendsEverythingToTheLowestTask) {
  api::ComponentRegistry r;
  auto input = KeyedInput(5, 4);
  auto store = std::make_shared<CaptureStore>();
  AddSpout(r, "fixed", [input] {
    return std::make_unique<FixedTupleSpout>(input, api::Fields({"key", "n"}));
  });
  AddBolt(r, "capture", [store] { return std::make_unique<TupleCaptureBolt>(store); });
  TopologyBuilder b("global");
  b.SetSpout("src", "fixed", 2);
  b.SetBolt("sink", "capture", 3).GlobalGrouping("src");
  auto cluster = RunToCompletion(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  const auto& tasks = cluster->layout().TasksOf(api::ComponentId("sink"));
  const int32_t lowest = std::min_element(tasks.begin(), tasks.end())->value();
  ASSERT_EQ(store->size(), 2 * input.size());  // both spout tasks emit the list
  for (const CapturedTuple& t : store->All()) EXPECT_EQ(t.receiving_task, lowest);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

TEST(RoutingTest, LocalOrShuffleSpreadsOverTheLocalTasks) {
  api::ComponentRegistry r;
  auto input = KeyedInput(10, 10);
  auto store = std::make_shared<CaptureStore>();
  AddSpout(r, "fixed", [input] {
    return std::make_unique<FixedTupleSpout>(input, api::Fields({"key", "n"}));
  });
  AddBolt(r, "capture", [store] { return std::make_unique<TupleCaptureBolt>(store); });
  TopologyBuilder b("local-or-shuffle");
  b.SetSpout("src", "fixed");
  b.SetBolt("sink", "capture", 2).LocalOrShuffleGrouping("src");
  auto cluster = RunToCompletion(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  // In one process every task is local, so it behaves as shuffle: an even
  // round-robin split.
  std::map<int32_t, int> per_task;
  for (const CapturedTuple& t : store->All()) ++per_task[t.receiving_task];
  ASSERT_EQ(per_task.size(), 2u);
  for (const auto& [task, n] : per_task) EXPECT_EQ(n, 50) << task;
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// The router hands the worker's local task set to local-or-shuffle: with
// only some consumer tasks local, only those are chosen.
TEST(RoutingTest, RouterUsesTheWorkersLocalTaskSet) {
  api::ComponentRegistry r;
  AddSpout(r, "fixed", [] {
    return std::make_unique<FixedTupleSpout>(std::vector<api::Values>{}, api::Fields({"k"}));
  });
  AddBolt(r, "ack", [] { return std::make_unique<AckBolt>(); });
  TopologyBuilder b("router");
  b.SetSpout("src", "fixed");
  b.SetBolt("sink", "ack", 4).LocalOrShuffleGrouping("src");
  core::TopologyDef def = b.Build();
  core::TopologyValidator validator(r);
  auto streams = validator.Validate(def);
  ASSERT_TRUE(streams.ok()) << streams.status();
  auto layout = core::TaskLayout::Create(def, 1);
  ASSERT_TRUE(layout.ok());
  core::MetricsRegistry metrics;
  WorkerContext ctx;
  ctx.def = &def;
  ctx.streams = &*streams;
  ctx.layout = &*layout;
  ctx.registry = &r;
  ctx.metrics = &metrics;
  ctx.info = core::MakeTopologyInfo(def, *layout, *streams, "router-1", def.config);
  const auto& sink_tasks = layout->TasksOf(api::ComponentId("sink"));
  ctx.local_tasks = {sink_tasks[1], sink_tasks[3]};
  const api::TaskId spout_task = layout->TasksOf(api::ComponentId("src")).front();
  api::TopologyContext context(ctx.info, spout_task);
  auto router = TaskRouter::Create(ctx, spout_task, context);
  ASSERT_TRUE(router.ok()) << router.status();
  StreamRoute* route = (*router)->Find(api::DefaultStreamId());
  ASSERT_NE(route, nullptr);
  std::map<api::TaskId, int> chosen;
  for (int i = 0; i < 100; ++i) {
    std::vector<api::TaskId> targets;
    ASSERT_TRUE((*router)->Targets(*route, {api::Value("x")}, targets).ok());
    ASSERT_EQ(targets.size(), 1u);
    ++chosen[targets[0]];
  }
  EXPECT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[sink_tasks[1]], 50);
  EXPECT_EQ(chosen[sink_tasks[3]], 50);
}

// A spout that emits direct tuples to a chosen consumer task, and also the
// invalid variants, recording what EmitDirect / Emit reported.
class DirectSpout final : public api::Spout {
 public:
  absl::Status Open(const api::Config&, const api::TopologyContext& context,
                    api::SpoutOutputCollector& collector) override {
    collector_ = &collector;
    targets_ = context.ComponentTasks(api::ComponentId("sink"));
    return absl::OkStatus();
  }
  void NextTuple() override {
    if (done_) return;
    done_ = true;
    for (int i = 0; i < 10; ++i) {
      collector_->EmitDirect(targets_[2], api::StreamId("direct"), {api::Value(int64_t{i})});
    }
    // Invalid: direct emit on a non-direct stream, regular emit on a direct
    // stream, direct emit to a task that is not a direct consumer.
    collector_->EmitDirect(targets_[0], api::StreamId("plain"), {api::Value(int64_t{100})});
    collector_->Emit(api::StreamId("direct"), {api::Value(int64_t{101})});
    collector_->EmitDirect(api::TaskId(9999), api::StreamId("direct"),
                           {api::Value(int64_t{102})});
    std::vector<api::TaskId> ids;
    collector_->Emit(api::StreamId("plain"), {api::Value(int64_t{200})}, api::MessageId(), &ids);
    reported_ = ids;
  }
  bool IsExhausted() const override { return done_; }
  void DeclareOutputFields(api::OutputFieldsDeclarer& d) const override {
    d.DeclareDirectStream("direct", api::Fields({"n"}));
    d.DeclareStream("plain", api::Fields({"n"}));
  }
  static std::vector<api::TaskId> reported_;

 private:
  api::SpoutOutputCollector* collector_ = nullptr;
  std::vector<api::TaskId> targets_;
  bool done_ = false;
};
std::vector<api::TaskId> DirectSpout::reported_;

TEST(RoutingTest, DirectEmitsReachTheNamedTaskAndAreValidated) {
  api::ComponentRegistry r;
  auto store = std::make_shared<CaptureStore>();
  auto plain = std::make_shared<CaptureStore>();
  AddSpout(r, "direct", [] { return std::make_unique<DirectSpout>(); });
  AddBolt(r, "capture", [store] { return std::make_unique<TupleCaptureBolt>(store); });
  AddBolt(r, "capture-plain", [plain] { return std::make_unique<TupleCaptureBolt>(plain); });
  TopologyBuilder b("direct");
  b.SetSpout("src", "direct");
  b.SetBolt("sink", "capture", 3).DirectGrouping("src", "direct");
  b.SetBolt("other", "capture-plain").ShuffleGrouping("src", "plain");
  auto cluster = RunToCompletion(b.Build(), r);
  ASSERT_NE(cluster, nullptr);
  const auto& sink_tasks = cluster->layout().TasksOf(api::ComponentId("sink"));
  ASSERT_EQ(store->size(), 10u);
  for (const CapturedTuple& t : store->All()) {
    EXPECT_EQ(t.receiving_task, sink_tasks[2].value());
    EXPECT_LT(t.values[0].AsInt(), 100);
  }
  // Only the valid regular emit reached "plain"; emit reported its target.
  ASSERT_EQ(plain->size(), 1u);
  EXPECT_EQ(plain->All()[0].values[0].AsInt(), 200);
  const auto& other_tasks = cluster->layout().TasksOf(api::ComponentId("other"));
  EXPECT_EQ(DirectSpout::reported_, other_tasks);
  // Each invalid emit was reported as an error.
  EXPECT_EQ(cluster->Stats().errors, 3);
  ASSERT_TRUE(cluster->Kill(milliseconds(0)).ok());
}

// Storm's completeTopology idiom: fixed input, every stream captured.
class SplitBolt final : public TestBolt {
 public:
  void Execute(const api::Tuple& input) override {
    const std::string& s = input.GetString(0);
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(' ', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) collector_->Emit(input, {api::Value(s.substr(start, end - start))});
      start = end + 1;
    }
    collector_->Ack(input);
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer& d) const override {
    d.Declare(api::Fields({"word"}));
  }
};

TEST(RoutingTest, CompleteTopologyCapturesEveryStream) {
  api::ComponentRegistry r;
  std::vector<api::Values> sentences = {{api::Value("the quick fox")},
                                        {api::Value("jumps over")},
                                        {api::Value("the dog")}};
  auto tracker = std::make_shared<AckFailTracker>();
  AddSpout(r, "sentences", [sentences, tracker] {
    return std::make_unique<FixedTupleSpout>(sentences, api::Fields({"sentence"}), tracker);
  });
  AddBolt(r, "split", [] { return std::make_unique<SplitBolt>(); });
  TopologyBuilder b("complete");
  b.SetSpout("spout", "sentences");
  b.SetBolt("split", "split", 2).ShuffleGrouping("spout");
  auto result = CompleteTopology(b.Build(), r);
  ASSERT_TRUE(result.ok()) << result.status();
  std::multiset<std::string> words;
  for (const api::Values& v : (*result)->Read("split")) words.insert(v[0].AsString());
  EXPECT_EQ(words, (std::multiset<std::string>{"the", "quick", "fox", "jumps", "over", "the",
                                               "dog"}));
  EXPECT_EQ((*result)->Read("spout").size(), 3u);
  EXPECT_EQ(tracker->num_acked(), 3u);
}

}  // namespace
}  // namespace tempest::worker::testing
