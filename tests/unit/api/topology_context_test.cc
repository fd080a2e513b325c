#include "common/api/topology_context.h"

#include <memory>

#include "gtest/gtest.h"

namespace tempest::api {
namespace {

std::shared_ptr<const TopologyInfo> Info() {
  auto info = std::make_shared<TopologyInfo>();
  info->topology_id = "wc-1-100";
  info->topology_name = "wc";
  info->config.Set(kTopologyWorkers, 2);
  info->config.Set(kTopologyDebug, false);
  for (int t : {1, 2}) info->task_to_component[TaskId(t)] = ComponentId("count");
  for (int t : {3, 4, 5}) info->task_to_component[TaskId(t)] = ComponentId("spout");
  info->component_tasks[ComponentId("count")] = {TaskId(1), TaskId(2)};
  info->component_tasks[ComponentId("spout")] = {TaskId(3), TaskId(4), TaskId(5)};
  info->component_streams[ComponentId("spout")][DefaultStreamId()] =
      StreamDeclaration{Fields({"word"}), false};
  info->component_config[ComponentId("spout")].Set(kTopologyDebug, true);
  return info;
}

TEST(TopologyContextTest, AnswersTaskAndComponentQueries) {
  TopologyContext ctx(Info(), TaskId(4));
  EXPECT_EQ(ctx.ThisTaskId(), TaskId(4));
  EXPECT_EQ(ctx.ThisComponentId(), ComponentId("spout"));
  EXPECT_EQ(ctx.ThisTaskIndex(), 1);
  EXPECT_EQ(ctx.TopologyName(), "wc");
  EXPECT_EQ(ctx.ComponentTasks(ComponentId("count")).size(), 2u);
  EXPECT_TRUE(ctx.ComponentTasks(ComponentId("nope")).empty());
  ASSERT_NE(ctx.ComponentOf(TaskId(1)), nullptr);
  EXPECT_EQ(*ctx.ComponentOf(TaskId(1)), ComponentId("count"));
  EXPECT_EQ(ctx.ComponentOf(TaskId(99)), nullptr);
  ASSERT_NE(ctx.ThisOutputFields(DefaultStreamId()), nullptr);
  EXPECT_EQ(ctx.ThisOutputFields(DefaultStreamId())->Get(0), "word");
  EXPECT_EQ(ctx.OutputFields(ComponentId("count"), DefaultStreamId()), nullptr);
  // Component config overrides the topology config for this task only.
  EXPECT_TRUE(ctx.config().GetBool(kTopologyDebug, false));
  EXPECT_EQ(ctx.config().GetInt(kTopologyWorkers, 0), 2);
  TopologyContext other(Info(), TaskId(1));
  EXPECT_FALSE(other.config().GetBool(kTopologyDebug, true));
}

}  // namespace
}  // namespace tempest::api
