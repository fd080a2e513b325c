#include "nimbus/prometheus_view.h"

#include <set>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace tempest::nimbus {
namespace {

v1::StreamStats* Stream(google::protobuf::RepeatedPtrField<v1::StreamStats>* list,
                        const std::string& stream, const std::string& component = "") {
  v1::StreamStats* s = list->Add();
  s->set_stream(stream);
  s->set_component(component);
  return s;
}

// A spout (task 1) and a bolt (tasks 2-3) on slot sup-a:6700; a beat of a
// slot the topology no longer has (sup-b:6701) that must be ignored; a
// beat on the assigned slot also listing the bolt's executor from before a
// reassignment must not count it twice.
ClusterView KafkaTopology() {
  ClusterView view;
  view.leader = true;
  v1::SupervisorInfo sup;
  sup.set_supervisor_id("sup-a");
  sup.set_hostname("host-a");
  sup.add_slot_ports(6700);
  sup.add_slot_ports(6701);
  sup.add_used_ports(6700);
  view.supervisors.push_back(sup);

  TopologyView t;
  t.topology.id = "kt-1-100";
  t.topology.base.set_name("k\"t");
  t.topology.base.set_status(v1::ACTIVE);
  v1::Assignment a;
  (*a.mutable_node_host())["sup-a"] = "host-a";
  for (auto [start, end] : {std::pair{1, 1}, std::pair{2, 3}}) {
    v1::ExecutorAssignment* e = a.add_executors();
    e->set_start_task(start);
    e->set_end_task(end);
    e->set_node("sup-a");
    e->set_port(6700);
  }
  t.assignment = a;

  StoredBeat b;
  b.slot = WorkerSlot{"sup-a", 6700};
  b.parsed = true;
  b.beat.set_restarts(2);
  v1::ExecutorStats* spout = b.beat.add_executor_stats();
  spout->set_start_task(1);
  spout->set_end_task(1);
  spout->set_component("kafka");
  spout->set_spout(true);
  v1::StreamStats* out = Stream(spout->mutable_outputs(), "default");
  out->set_emitted(100);
  out->set_transferred(100);
  out->set_acked(90);
  out->set_failed(3);
  out->set_complete_latency_us_sum(2'500'000);
  out->set_complete_latency_samples(5);
  v1::ExecutorStats* bolt = b.beat.add_executor_stats();
  bolt->set_start_task(2);
  bolt->set_end_task(3);
  bolt->set_component("sink");
  v1::StreamStats* in = Stream(bolt->mutable_inputs(), "default", "kafka");
  in->set_executed(95);
  in->set_acked(94);
  in->set_failed(1);
  in->set_execute_latency_us_sum(1500);
  in->set_execute_latency_samples(3);
  Stream(bolt->mutable_outputs(), "default")->set_emitted(7);
  v1::SpoutPartitionLag* p0 = b.beat.add_kafka_partitions();
  p0->set_component("kafka");
  p0->set_task(1);
  p0->set_topic("events");
  p0->set_partition(0);
  p0->set_committed_offset(40);
  p0->set_log_end_offset(50);
  p0->set_lag(10);
  p0->set_lag_ms(1500);
  v1::SpoutPartitionLag* p1 = b.beat.add_kafka_partitions();
  *p1 = *p0;
  p1->set_partition(1);
  p1->set_log_end_offset(-1);
  p1->set_lag(-1);
  p1->set_lag_ms(-1);
  t.beats.push_back(b);

  StoredBeat stale = b;  // a slot the assignment no longer has
  stale.slot = WorkerSlot{"sup-b", 6701};
  t.beats.push_back(stale);
  // What nimbus measured: partition 0 committed at 40 of a log ending at 50;
  // Kafka did not answer for partition 1.
  spout::SpoutLag measured;
  measured.component = "kafka";
  spout::StoredPartitionOffset m0;
  m0.topic = "events";
  m0.partition = 0;
  m0.state = spout::StormKafkaOffset{};
  m0.state->offset = 40;
  m0.log_start_offset = 0;
  m0.log_end_offset = 50;
  m0.lag = 10;
  m0.lag_basis = "committed";
  spout::StoredPartitionOffset m1 = m0;
  m1.partition = 1;
  m1.log_start_offset.reset();
  m1.log_end_offset.reset();
  m1.lag.reset();
  m1.kafka_error = "timed out";
  measured.partitions = {m0, m1};
  measured.totals = spout::SumLag(measured.partitions);
  t.kafka_lag.push_back(measured);
  spout::SpoutLag unreachable;
  unreachable.component = "other";
  unreachable.status = absl::UnavailableError("broker down");
  t.kafka_lag.push_back(unreachable);
  view.topologies.push_back(t);
  return view;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST(PrometheusViewTest, ExecutorStreamsAreCountersWithComponentLabels) {
  const std::string text = RenderNimbusMetrics(KafkaTopology());
  const std::string spout =
      "topology_id=\"kt-1-100\",topology=\"k\\\"t\",component=\"kafka\",executor=\"1-1\","
      "stream=\"default\"";
  EXPECT_TRUE(Has(text, "# TYPE tempest_component_emitted_total counter"));
  EXPECT_TRUE(Has(text, "tempest_component_emitted_total{" + spout + "} 100")) << text;
  EXPECT_TRUE(Has(text, "tempest_component_acked_total{" + spout + "} 90"));
  EXPECT_TRUE(Has(text, "tempest_component_failed_total{" + spout + "} 3"));
  EXPECT_TRUE(Has(text, "# TYPE tempest_component_complete_latency_seconds summary"));
  EXPECT_TRUE(Has(text, "tempest_component_complete_latency_seconds_sum{" + spout + "} 2.5"));
  EXPECT_TRUE(Has(text, "tempest_component_complete_latency_seconds_count{" + spout + "} 5"));
  const std::string bolt_in =
      "topology_id=\"kt-1-100\",topology=\"k\\\"t\",component=\"sink\",executor=\"2-3\","
      "input_component=\"kafka\",stream=\"default\"";
  EXPECT_TRUE(Has(text, "tempest_component_executed_total{" + bolt_in + "} 95"));
  EXPECT_TRUE(Has(text, "tempest_component_acked_total{" + bolt_in + "} 94"));
  EXPECT_TRUE(Has(text, "tempest_component_execute_latency_seconds_sum{" + bolt_in + "} 0.0015"));
  EXPECT_TRUE(Has(text, "tempest_component_execute_latency_seconds_count{" + bolt_in + "} 3"));
  // A bolt's output stream has emitted, not the trees' outcome.
  EXPECT_TRUE(Has(text,
                  "tempest_component_emitted_total{topology_id=\"kt-1-100\",topology=\"k\\\"t\","
                  "component=\"sink\",executor=\"2-3\",stream=\"default\"} 7"));
  EXPECT_EQ(Count(text, "tempest_component_acked_total{"), 2u) << text;
  // The stale slot's beat is not counted.
  EXPECT_EQ(Count(text, "tempest_component_emitted_total{"), 2u);
}

TEST(PrometheusViewTest, KafkaPartitionsSlotsAndSupervisors) {
  const std::string text = RenderNimbusMetrics(KafkaTopology());
  const std::string p0 =
      "topology_id=\"kt-1-100\",topology=\"k\\\"t\",component=\"kafka\",topic=\"events\","
      "partition=\"0\"";
  EXPECT_TRUE(Has(text, "tempest_kafka_partition_lag{" + p0 + "} 10")) << text;
  EXPECT_TRUE(Has(text, "tempest_kafka_partition_lag_seconds{" + p0 + "} 1.5"));
  EXPECT_TRUE(Has(text, "tempest_kafka_partition_committed_offset{" + p0 + "} 40"));
  EXPECT_TRUE(Has(text, "tempest_kafka_partition_log_end_offset{" + p0 + "} 50"));
  // Partition 1 has no known log end: only its committed offset (and lag
  // in seconds from the spout's beat).
  EXPECT_EQ(Count(text, "partition=\"1\""), 1u) << text;
  // A spout nimbus could not measure says so, and has no lag of 0.
  EXPECT_TRUE(Has(text,
                  "tempest_kafka_spout_lag_measured{topology_id=\"kt-1-100\","
                  "topology=\"k\\\"t\",component=\"other\"} 0"))
      << text;
  EXPECT_TRUE(Has(text,
                  "tempest_kafka_spout_lag_measured{topology_id=\"kt-1-100\","
                  "topology=\"k\\\"t\",component=\"kafka\"} 1"));
  EXPECT_EQ(Count(text, "component=\"other\",topic="), 0u);
  EXPECT_TRUE(Has(text,
                  "tempest_worker_restarts_total{topology_id=\"kt-1-100\","
                  "topology=\"k\\\"t\",supervisor_id=\"sup-a\",host=\"host-a\","
                  "port=\"6700\"} 2"));
  EXPECT_TRUE(
      Has(text, "tempest_supervisor_slots_offered{supervisor_id=\"sup-a\",host=\"host-a\"} 2"));
  EXPECT_TRUE(
      Has(text, "tempest_supervisor_slots_used{supervisor_id=\"sup-a\",host=\"host-a\"} 1"));
  EXPECT_TRUE(Has(text, "tempest_nimbus_leader 1"));
}

TEST(PrometheusViewTest, OneHelpAndTypePerFamilyAndNoRepeatedSeries) {
  std::istringstream in(RenderNimbusMetrics(KafkaTopology()));
  std::string line;
  std::set<std::string> types, series;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(types.insert(line).second) << line;
    } else if (line.rfind("#", 0) != 0) {
      EXPECT_TRUE(series.insert(line.substr(0, line.rfind(' '))).second) << line;
    }
  }
  EXPECT_GT(series.size(), 20u);
}

}  // namespace
}  // namespace tempest::nimbus
