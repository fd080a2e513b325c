#include "worker/executor_stats.h"

#include "gtest/gtest.h"

namespace tempest::worker {
namespace {

using Kind = core::MetricSample::Kind;

core::MetricSample Counter(std::string name, core::MetricLabels labels, int64_t value) {
  core::MetricSample m;
  m.name = std::move(name);
  m.labels = std::move(labels);
  m.kind = Kind::kCounter;
  m.value = value;
  return m;
}

core::MetricSample Histogram(std::string name, core::MetricLabels labels, int64_t count,
                             int64_t sum) {
  core::MetricSample m = Counter(std::move(name), std::move(labels), count);
  m.kind = Kind::kHistogram;
  m.sum = sum;
  return m;
}

core::ExecutorInfo Executor(const char* component, int start, int end) {
  return {api::ComponentId(component), api::TaskId(start), api::TaskId(end)};
}

TEST(ExecutorStatsTest, SumsTasksIntoTheirExecutorPerStream) {
  const std::vector<core::MetricSample> samples = {
      Counter("tempest_emitted_total", {{"component", "spout"}, {"stream", "default"}, {"task", "1"}}, 10),
      Counter("tempest_emitted_total", {{"component", "spout"}, {"stream", "default"}, {"task", "2"}}, 5),
      Counter("tempest_transferred_total", {{"component", "spout"}, {"stream", "default"}, {"task", "1"}}, 20),
      Counter("tempest_acked_total", {{"component", "spout"}, {"stream", "default"}, {"task", "2"}}, 4),
      Histogram("tempest_complete_latency_us", {{"component", "spout"}, {"stream", "default"}, {"task", "1"}}, 2, 3000),
      Counter("tempest_executed_total", {{"component", "bolt"}, {"task", "3"},
               {"input_component", "spout"}, {"input_stream", "default"}}, 15),
      Histogram("tempest_execute_latency_us", {{"component", "bolt"}, {"task", "3"},
                 {"input_component", "spout"}, {"input_stream", "default"}}, 3, 90),
      // Not this worker's executors, or not an executor series: ignored.
      Counter("tempest_emitted_total", {{"component", "other"}, {"stream", "default"}, {"task", "9"}}, 7),
      Counter("tempest_ticks_total", {{"component", "bolt"}, {"task", "3"}}, 1),
  };
  const std::vector<v1::ExecutorStats> stats = CollectExecutorStats(
      samples, {Executor("spout", 1, 2), Executor("bolt", 3, 3)}, {"spout"}, 42);
  ASSERT_EQ(stats.size(), 2u);
  const v1::ExecutorStats& spout = stats[0];
  EXPECT_TRUE(spout.spout());
  EXPECT_EQ(spout.uptime_secs(), 42);
  ASSERT_EQ(spout.outputs_size(), 1);
  EXPECT_EQ(spout.outputs(0).stream(), "default");
  EXPECT_EQ(spout.outputs(0).emitted(), 15);
  EXPECT_EQ(spout.outputs(0).transferred(), 20);
  EXPECT_EQ(spout.outputs(0).acked(), 4);
  EXPECT_EQ(spout.outputs(0).complete_latency_samples(), 2);
  EXPECT_EQ(spout.outputs(0).complete_latency_us_sum(), 3000);
  const v1::ExecutorStats& bolt = stats[1];
  EXPECT_FALSE(bolt.spout());
  EXPECT_EQ(bolt.outputs_size(), 0);
  ASSERT_EQ(bolt.inputs_size(), 1);
  EXPECT_EQ(bolt.inputs(0).component(), "spout");
  EXPECT_EQ(bolt.inputs(0).executed(), 15);
  EXPECT_EQ(bolt.inputs(0).execute_latency_samples(), 3);
  EXPECT_EQ(bolt.inputs(0).execute_latency_us_sum(), 90);
}

TEST(ExecutorStatsTest, CarriedStatsContinueTheSameExecutorsStreams) {
  std::vector<v1::ExecutorStats> now = CollectExecutorStats(
      {Counter("tempest_emitted_total", {{"component", "spout"}, {"stream", "s"}, {"task", "1"}}, 3)},
      {Executor("spout", 1, 1)}, {"spout"}, 1);
  google::protobuf::RepeatedPtrField<v1::ExecutorStats> previous;
  v1::ExecutorStats* same = previous.Add();
  same->set_start_task(1);
  same->set_end_task(1);
  same->set_component("spout");
  v1::StreamStats* s = same->add_outputs();
  s->set_stream("s");
  s->set_emitted(100);
  v1::StreamStats* gone = same->add_outputs();  // a stream this worker has not used yet
  gone->set_stream("t");
  gone->set_emitted(7);
  v1::ExecutorStats* other = previous.Add();  // an executor this slot no longer runs
  other->set_start_task(5);
  other->set_end_task(5);
  other->set_component("spout");
  other->add_outputs()->set_emitted(1000);
  AddCarriedStats(previous, now);
  ASSERT_EQ(now.size(), 1u);
  ASSERT_EQ(now[0].outputs_size(), 2);
  EXPECT_EQ(now[0].outputs(0).emitted(), 103);
  EXPECT_EQ(now[0].outputs(1).stream(), "t");
  EXPECT_EQ(now[0].outputs(1).emitted(), 7);
}

TEST(ExecutorStatsTest, MetricPointsKeepKindLabelsAndValues) {
  google::protobuf::RepeatedPtrField<v1::MetricPoint> points;
  ToMetricPoints({Histogram("tempest_execute_latency_us", {{"component", "b"}}, 4, 80)}, points);
  ASSERT_EQ(points.size(), 1);
  EXPECT_EQ(points[0].kind(), v1::MetricPoint::HISTOGRAM);
  EXPECT_EQ(points[0].labels().at("component"), "b");
  EXPECT_EQ(points[0].value(), 4);
  EXPECT_EQ(points[0].sum(), 80);
}

}  // namespace
}  // namespace tempest::worker
