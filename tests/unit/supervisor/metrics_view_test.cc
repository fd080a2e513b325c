#include "supervisor/metrics_view.h"

#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace tempest::supervisor {
namespace {

v1::MetricPoint Point(const std::string& name, v1::MetricPoint::Kind kind, int64_t value,
                      const std::map<std::string, std::string>& labels = {}) {
  v1::MetricPoint p;
  p.set_name(name);
  p.set_kind(kind);
  p.set_value(value);
  for (const auto& [k, v] : labels) (*p.mutable_labels())[k] = v;
  return p;
}

SupervisorMetricsView BaseView() {
  SupervisorMetricsView view;
  view.supervisor_id = "sup-a";
  view.host = "127.0.0.1";
  view.version = "tempest-0.1.0";
  view.now_secs = 1000;
  view.uptime_secs = 42;
  view.slots_offered = 2;
  view.slots_used = 1;
  return view;
}

WorkerMetricsSource Worker(int port, const std::string& topology,
                           std::initializer_list<v1::MetricPoint> points, int64_t time_secs = 998) {
  auto beat = std::make_shared<v1::WorkerHeartbeat>();
  beat->set_topology_id(topology);
  beat->set_port(port);
  beat->set_time_secs(time_secs);
  for (const v1::MetricPoint& p : points) *beat->add_local_metrics() = p;
  return WorkerMetricsSource{port, topology, beat};
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

// Every family has exactly one HELP and one TYPE line, and no series line
// (name and labels) appears twice.
void ExpectWellFormed(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::set<std::string> helps, types, series;
  while (std::getline(in, line)) {
    ASSERT_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0) {
      EXPECT_TRUE(helps.insert(line.substr(7, line.find(' ', 7) - 7)).second) << line;
    } else if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(types.insert(line.substr(7, line.find(' ', 7) - 7)).second) << line;
    } else {
      EXPECT_TRUE(series.insert(line.substr(0, line.rfind(' '))).second) << "repeated: " << line;
    }
  }
  EXPECT_EQ(helps, types);
}

TEST(SupervisorMetricsViewTest, OwnSeriesWithoutWorkers) {
  SupervisorMetricsView view = BaseView();
  core::MetricsRegistry registry;
  registry.GetCounter("tempest_supervisor_worker_launches_total").Add(3);
  registry
      .GetCounter("tempest_zk_session_transitions_total",
                  {{"from", "connecting"}, {"to", "connected"}})
      .Add();
  view.own = registry.Snapshot();
  const std::string text = RenderSupervisorMetrics(view);
  ExpectWellFormed(text);
  EXPECT_TRUE(Has(text,
                  "tempest_supervisor_info{supervisor_id=\"sup-a\",host=\"127.0.0.1\","
                  "version=\"tempest-0.1.0\"} 1"))
      << text;
  EXPECT_TRUE(Has(text, "# TYPE tempest_supervisor_slots_offered gauge"));
  EXPECT_TRUE(
      Has(text, "tempest_supervisor_slots_offered{supervisor_id=\"sup-a\",host=\"127.0.0.1\"} 2"));
  EXPECT_TRUE(
      Has(text, "tempest_supervisor_slots_used{supervisor_id=\"sup-a\",host=\"127.0.0.1\"} 1"));
  EXPECT_TRUE(Has(text, "tempest_supervisor_workers_running 0"));
  EXPECT_TRUE(Has(text, "tempest_supervisor_uptime_seconds 42"));
  EXPECT_TRUE(Has(text, "# TYPE tempest_supervisor_worker_launches_total counter"));
  EXPECT_TRUE(Has(text, "tempest_supervisor_worker_launches_total 3"));
  EXPECT_TRUE(
      Has(text, "tempest_zk_session_transitions_total{from=\"connecting\",to=\"connected\"} 1"));
  // Families are sorted, so a scrape reads the same every time.
  EXPECT_LT(text.find("# TYPE tempest_supervisor_info"),
            text.find("# TYPE tempest_supervisor_slots_offered"));
}

TEST(SupervisorMetricsViewTest, WorkerSeriesGetTheirSlotLabelsAndValidNames) {
  SupervisorMetricsView view = BaseView();
  v1::MetricPoint latency = Point("tempest_complete_latency_us", v1::MetricPoint::HISTOGRAM, 4,
                                  {{"component", "spout"}, {"stream", "default"}, {"task", "3"}});
  latency.set_sum(3'000'000);
  latency.set_p50(500'000);
  latency.set_p99(1'500'000);
  view.workers.push_back(
      Worker(6700, "wc-1-100",
             {Point("tempest_emitted_total", v1::MetricPoint::COUNTER, 17,
                    {{"component", "spout"}, {"stream", "default"}, {"task", "3"}}),
              // A counter without _total gets it; a gauge never keeps one.
              Point("tempest_kafka_spout_lost_messages", v1::MetricPoint::COUNTER, 2,
                    {{"partition", "0"}}),
              Point("tempest_odd_total", v1::MetricPoint::GAUGE, 5),
              // The worker's own topology label agrees with the slot's: written once.
              Point("tempest_topology_acked_total", v1::MetricPoint::COUNTER, 9,
                    {{"topology", "wc-1-100"}}),
              latency}));
  const std::string text = RenderSupervisorMetrics(view);
  ExpectWellFormed(text);
  EXPECT_TRUE(Has(text, "# TYPE tempest_emitted_total counter"));
  EXPECT_TRUE(Has(text,
                  "tempest_emitted_total{topology_id=\"wc-1-100\",topology=\"wc\",port=\"6700\","
                  "component=\"spout\",stream=\"default\",task=\"3\"} 17"))
      << text;
  EXPECT_TRUE(Has(text,
                  "tempest_kafka_spout_lost_messages_total{topology_id=\"wc-1-100\",topology="
                  "\"wc\",port=\"6700\",partition=\"0\"} 2"));
  EXPECT_TRUE(Has(text, "# TYPE tempest_odd gauge"));
  EXPECT_TRUE(Has(
      text,
      "tempest_topology_acked_total{topology_id=\"wc-1-100\",topology=\"wc\",port=\"6700\"} 9"));
  // Microseconds become seconds, as a summary.
  EXPECT_TRUE(Has(text, "# TYPE tempest_complete_latency_seconds summary"));
  const std::string labels =
      "topology_id=\"wc-1-100\",topology=\"wc\",port=\"6700\",component=\"spout\",stream="
      "\"default\",task=\"3\"";
  EXPECT_TRUE(Has(text, "tempest_complete_latency_seconds{" + labels + ",quantile=\"0.5\"} 0.5"));
  EXPECT_TRUE(Has(text, "tempest_complete_latency_seconds{" + labels + ",quantile=\"0.99\"} 1.5"));
  EXPECT_TRUE(Has(text, "tempest_complete_latency_seconds_sum{" + labels + "} 3"));
  EXPECT_TRUE(Has(text, "tempest_complete_latency_seconds_count{" + labels + "} 4"));
  EXPECT_TRUE(Has(text,
                  "tempest_supervisor_worker_heartbeat_age_seconds{topology_id=\"wc-1-100\","
                  "topology=\"wc\",port=\"6700\"} 2"));
  EXPECT_EQ(text.find("_us{"), std::string::npos) << text;
  EXPECT_EQ(text.find("_us_"), std::string::npos) << text;
}

TEST(SupervisorMetricsViewTest, TwoWorkersShareOneFamilyBlock) {
  SupervisorMetricsView view = BaseView();
  view.workers.push_back(
      Worker(6700, "a-1-1", {Point("tempest_acked_total", v1::MetricPoint::COUNTER, 1)}));
  view.workers.push_back(
      Worker(6701, "b-2-2", {Point("tempest_acked_total", v1::MetricPoint::COUNTER, 2)}));
  // A worker that has not beaten yet contributes nothing.
  view.workers.push_back(WorkerMetricsSource{6702, "c-3-3", nullptr});
  const std::string text = RenderSupervisorMetrics(view);
  ExpectWellFormed(text);
  EXPECT_TRUE(Has(text,
                  "# TYPE tempest_acked_total counter\n"
                  "tempest_acked_total{topology_id=\"a-1-1\",topology=\"a\",port=\"6700\"} 1\n"
                  "tempest_acked_total{topology_id=\"b-2-2\",topology=\"b\",port=\"6701\"} 2"))
      << text;
  EXPECT_TRUE(Has(text, "tempest_supervisor_workers_running 3"));
  EXPECT_EQ(text.find("c-3-3"), std::string::npos);
}

TEST(SupervisorMetricsViewTest, HostileWorkerSeriesAreLeftOutOrEscaped) {
  SupervisorMetricsView view = BaseView();
  view.workers.push_back(
      Worker(6700, "t-1-1",
             {Point("bad name{", v1::MetricPoint::COUNTER, 1), Point("", v1::MetricPoint::GAUGE, 1),
              Point("tempest_x_total", v1::MetricPoint::COUNTER, 1, {{"bad-label", "v"}}),
              Point("tempest_x_total", v1::MetricPoint::COUNTER, 1, {{"__reserved", "v"}}),
              // A gauge named like the summary a histogram became: another type,
              // left out.
              Point("tempest_y_us", v1::MetricPoint::HISTOGRAM, 1),
              Point("tempest_y_seconds", v1::MetricPoint::GAUGE, 7),
              // A label that disagrees with the slot's is kept under exported_.
              Point("tempest_z_total", v1::MetricPoint::COUNTER, 1,
                    {{"topology", "other"}, {"port", "6700"}, {"component", "a\"b\\c\nd"}}),
              // A repeat of a series already written.
              Point("tempest_z_total", v1::MetricPoint::COUNTER, 5,
                    {{"topology", "other"}, {"component", "a\"b\\c\nd"}})}));
  const std::string text = RenderSupervisorMetrics(view);
  ExpectWellFormed(text);
  EXPECT_EQ(text.find("bad name"), std::string::npos);
  EXPECT_EQ(text.find("bad-label"), std::string::npos);
  EXPECT_EQ(text.find("__reserved"), std::string::npos);
  EXPECT_TRUE(Has(text, "# TYPE tempest_y_seconds summary"));
  EXPECT_TRUE(
      Has(text, "tempest_y_seconds_count{topology_id=\"t-1-1\",topology=\"t\",port=\"6700\"} 1"));
  EXPECT_EQ(text.find("tempest_y_seconds{topology_id=\"t-1-1\",topology=\"t\",port=\"6700\"} 7"),
            std::string::npos);
  EXPECT_TRUE(Has(text,
                  "tempest_z_total{topology_id=\"t-1-1\",topology=\"t\",port=\"6700\","
                  "component=\"a\\\"b\\\\c\\nd\",exported_topology=\"other\"} 1"))
      << text;
  EXPECT_EQ(text.find("} 5\n"), std::string::npos);
}

TEST(SupervisorMetricsViewTest, TopologyNamesComeFromNimbusIds) {
  EXPECT_EQ(TopologyNameOf("word-count-3-1700000000"), "word-count");
  EXPECT_EQ(TopologyNameOf("wc-1-100"), "wc");
  EXPECT_EQ(TopologyNameOf("not-an-id"), "not-an-id");
  EXPECT_EQ(TopologyNameOf("1-2"), "1-2");
  EXPECT_EQ(TopologyNameOf("-1-2"), "-1-2");
  EXPECT_EQ(TopologyNameOf(""), "");
}

}  // namespace
}  // namespace tempest::supervisor
