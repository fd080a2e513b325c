#include "common/core/topology/task_layout.h"

#include "gtest/gtest.h"

namespace tempest::core {
namespace {

using api::ComponentId;
using api::TaskId;

ComponentDef Component(ComponentDef::Kind kind, std::string id, int parallelism, int tasks = -1) {
  ComponentDef c;
  c.kind = kind;
  c.id = ComponentId(id);
  c.parallelism = parallelism;
  c.num_tasks = tasks;
  return c;
}

std::vector<TaskId> Range(int from, int to) {
  std::vector<TaskId> out;
  for (int i = from; i <= to; ++i) out.emplace_back(i);
  return out;
}

TEST(TaskLayoutTest, NumbersTasksFromOneInComponentIdOrder) {
  TopologyDef def;
  def.spouts.push_back(Component(ComponentDef::Kind::kSpout, "spout", 2));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "count", 3, 5));
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "Split", 1));
  absl::StatusOr<TaskLayout> layout = TaskLayout::Create(def, 2);
  ASSERT_TRUE(layout.ok()) << layout.status();
  // Sorted ids: "Split" < "__acker" < "count" < "spout" (byte order, as Java's String).
  EXPECT_EQ(layout->TasksOf(ComponentId("Split")), Range(1, 1));
  EXPECT_EQ(layout->TasksOf(ComponentId("__acker")), Range(2, 3));
  EXPECT_EQ(layout->TasksOf(ComponentId("count")), Range(4, 8));
  EXPECT_EQ(layout->TasksOf(ComponentId("spout")), Range(9, 10));
  EXPECT_EQ(layout->num_tasks(), 10);
  ASSERT_NE(layout->ComponentOf(TaskId(5)), nullptr);
  EXPECT_EQ(*layout->ComponentOf(TaskId(5)), ComponentId("count"));
  EXPECT_EQ(layout->ComponentOf(TaskId(11)), nullptr);
}

TEST(TaskLayoutTest, ExecutorsAreContiguousRangesLargestFirst) {
  TopologyDef def;
  def.bolts.push_back(Component(ComponentDef::Kind::kBolt, "b", 3, 7));
  def.spouts.push_back(Component(ComponentDef::Kind::kSpout, "s", 4, 2));  // capped at 2
  absl::StatusOr<TaskLayout> layout = TaskLayout::Create(def, 0);
  ASSERT_TRUE(layout.ok());
  std::vector<ExecutorInfo> expected = {{ComponentId("b"), TaskId(1), TaskId(3)},
                                        {ComponentId("b"), TaskId(4), TaskId(5)},
                                        {ComponentId("b"), TaskId(6), TaskId(7)},
                                        {ComponentId("s"), TaskId(8), TaskId(8)},
                                        {ComponentId("s"), TaskId(9), TaskId(9)}};
  EXPECT_EQ(layout->executors(), expected);
  EXPECT_TRUE(layout->TasksOf(ComponentId("__acker")).empty());
}

TEST(TaskLayoutTest, AckerCountFollowsConfig) {
  api::Config c;
  c.Set(api::kTopologyWorkers, 3);
  c.Set(api::kTopologyAckerExecutors, nullptr);
  EXPECT_EQ(TaskLayout::AckerExecutors(c), 3);  // null: one per worker
  c.Set(api::kTopologyAckerExecutors, 0);
  EXPECT_EQ(TaskLayout::AckerExecutors(c), 0);
  c.Set(api::kTopologyAckerExecutors, 5);
  EXPECT_EQ(TaskLayout::AckerExecutors(c), 5);
  EXPECT_EQ(TaskLayout::AckerExecutors(api::Config()), 1);
}

TEST(TaskLayoutTest, RejectsComponentsWithoutTasks) {
  TopologyDef def;
  def.spouts.push_back(Component(ComponentDef::Kind::kSpout, "s", 0));
  EXPECT_FALSE(TaskLayout::Create(def, 1).ok());
}

TEST(TaskLayoutTest, TopologyInfoFeedsContexts) {
  TopologyDef def;
  def.name = "wc";
  def.spouts.push_back(Component(ComponentDef::Kind::kSpout, "s", 2));
  def.spouts[0].config.Set(api::kTopologyDebug, true);
  TaskLayout layout = *TaskLayout::Create(def, 1);
  ComponentStreams streams;
  streams[ComponentId("s")][api::DefaultStreamId()] = {api::Fields({"x"}), false};
  api::Config config;
  config.Set(api::kTopologyDebug, false);
  auto info = MakeTopologyInfo(def, layout, streams, "wc-1-1", config);
  api::TopologyContext ctx(info, TaskId(3));
  EXPECT_EQ(ctx.ThisComponentId(), ComponentId("s"));
  EXPECT_EQ(ctx.ThisTaskIndex(), 1);
  EXPECT_EQ(ctx.TopologyId(), "wc-1-1");
  EXPECT_TRUE(ctx.config().GetBool(api::kTopologyDebug, false));
  EXPECT_EQ(ctx.ThisOutputFields(api::DefaultStreamId())->Get(0), "x");
  EXPECT_EQ(ctx.ComponentTasks(ComponentId("__acker")), Range(1, 1));
}

}  // namespace
}  // namespace tempest::core
