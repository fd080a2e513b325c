#include "nimbus/prometheus_view.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/core/metrics_registry.h"
#include "nimbus/rest_cluster_views.h"
#include "nimbus/rest_views.h"
#include "nimbus/topology_state.h"

namespace tempest::nimbus {
namespace {

// Label set of a topology's series: {topology_id, topology}, in that order.
struct MetricsRow {
  std::string id;
  std::string name;
  int workers = 0;
  Totals totals;
  int failing = 0;  // slots whose supervisor says their worker keeps failing
};

int FailingSlots(const TopologyView& t) {
  int n = 0;
  for (const StoredWorkerFailure* f : CurrentFailures(t)) n += f->failing ? 1 : 0;
  return n;
}

void WriteTopologySeries(const std::vector<MetricsRow>& rows, core::PrometheusTextWriter& out) {
  // Sums of the slots' running totals: they survive worker restarts, but a
  // rebalance that takes a slot away drops its share, so they are gauges.
  const struct {
    const char* name;
    const char* help;
    int64_t (*get)(const MetricsRow&);
  } series[] = {
      {"tempest_topology_workers", "Worker slots assigned to the topology.",
       [](const MetricsRow& r) -> int64_t { return r.workers; }},
      {"tempest_topology_emitted", "Tuples emitted, summed over the topology's live workers.",
       [](const MetricsRow& r) { return r.totals.emitted; }},
      {"tempest_topology_transferred", "Tuples transferred, summed over the live workers.",
       [](const MetricsRow& r) { return r.totals.transferred; }},
      {"tempest_topology_acked", "Tuple trees acked, summed over the live workers.",
       [](const MetricsRow& r) { return r.totals.acked; }},
      {"tempest_topology_failed", "Tuple trees failed, summed over the live workers.",
       [](const MetricsRow& r) { return r.totals.failed; }},
      {"tempest_topology_worker_restarts",
       "Worker restarts after a crash, summed over the topology's assigned slots.",
       [](const MetricsRow& r) { return r.totals.restarts; }},
      {"tempest_topology_failing_workers",
       "Assigned slots whose worker failed and has not come back (the supervisors' records).",
       [](const MetricsRow& r) -> int64_t { return r.failing; }},
  };
  for (const auto& s : series) {
    out.Family(s.name, "gauge", s.help);
    for (const MetricsRow& r : rows) {
      const core::PrometheusTextWriter::Label labels[] = {{"topology_id", r.id},
                                                          {"topology", r.name}};
      out.Sample(s.name, labels, s.get(r));
    }
  }
  // Prometheus's base unit for time is the second.
  constexpr const char* kLatency = "tempest_topology_complete_latency_p99_seconds";
  out.Family(kLatency, "gauge", "Largest per-worker p99 complete latency, in seconds.");
  for (const MetricsRow& r : rows) {
    const core::PrometheusTextWriter::Label labels[] = {{"topology_id", r.id},
                                                        {"topology", r.name}};
    out.SampleFraction(kLatency, labels, static_cast<double>(r.totals.p99_us) / 1e6);
  }
}

using Label = core::PrometheusTextWriter::Label;

// One stream of one executor (an output stream, or a bolt's input stream
// from `input_component`), from the beat of the slot the assignment gives
// the executor.
struct StreamRow {
  const MetricsRow* topology;
  std::string component;
  std::string executor;         // "start-end", as the workers' receive-queue series
  std::string input_component;  // inputs only
  bool spout = false;
  const v1::StreamStats* stats;

  std::vector<Label> Labels() const {
    std::vector<Label> l = {{"topology_id", topology->id},
                            {"topology", topology->name},
                            {"component", component},
                            {"executor", executor}};
    if (!input_component.empty()) l.emplace_back("input_component", input_component);
    l.emplace_back("stream", stats->stream());
    return l;
  }
};

// One KafkaSpout partition as nimbus measured it (TopologyView::kafka_lag),
// with the beat of the task reading it, if any (lag in seconds).
struct PartitionRow {
  const MetricsRow* topology;
  std::string component;
  const spout::StoredPartitionOffset* measured;
  const v1::SpoutPartitionLag* beat;
};

// Whether nimbus could measure a spout's lag.
struct SpoutRow {
  const MetricsRow* topology;
  std::string component;
  bool measured;
};

struct SlotRow {
  const MetricsRow* topology;
  std::string supervisor_id;
  std::string host;
  std::string port;
  int64_t restarts = 0;
};

// What the executor statistics of the current beats say (and the Kafka
// partitions nimbus measured), each executor counted once: from the beat of the slot its
// assignment names (a worker still running on a reassigned slot may beat
// the executor too, until it exits).
struct BeatRows {
  std::vector<StreamRow> outputs, inputs;
  std::vector<PartitionRow> partitions;
  std::vector<SpoutRow> spouts;
  std::vector<SlotRow> slots;
};

void CollectLagRows(const TopologyView& t, const MetricsRow& row, BeatRows& out) {
  for (const spout::SpoutLag& s : t.kafka_lag) {
    out.spouts.push_back(SpoutRow{&row, s.component, s.status.ok()});
    for (const spout::StoredPartitionOffset& p : s.partitions) {
      out.partitions.push_back(
          PartitionRow{&row, s.component, &p, BeatLagOf(t, s.component, p.topic, p.partition)});
    }
  }
}

void CollectBeatRows(const TopologyView& t, const MetricsRow& row, BeatRows& out) {
  if (!t.assignment.has_value()) return;
  std::set<std::tuple<int, std::string, int>> placed;  // (start task, node, port)
  for (const v1::ExecutorAssignment& e : t.assignment->executors()) {
    placed.insert({e.start_task(), e.node(), e.port()});
  }
  // Every assigned slot, beating or not: a worker that dies before its first
  // beat is counted by its supervisor.
  for (const auto& [name, restarts] : RestartsBySlot(t)) {
    std::optional<WorkerSlot> slot = ParseBeatName(name);
    if (!slot) continue;
    auto host = t.assignment->node_host().find(slot->node);
    out.slots.push_back(SlotRow{&row, slot->node,
                                host == t.assignment->node_host().end() ? "" : host->second,
                                absl::StrCat(slot->port), restarts});
  }
  for (const StoredBeat* b : CurrentBeats(t)) {
    for (const v1::ExecutorStats& e : b->beat.executor_stats()) {
      if (!placed.contains({e.start_task(), b->slot.node, b->slot.port})) continue;
      const std::string executor = absl::StrCat(e.start_task(), "-", e.end_task());
      for (const v1::StreamStats& s : e.outputs()) {
        out.outputs.push_back(StreamRow{&row, e.component(), executor, "", e.spout(), &s});
      }
      for (const v1::StreamStats& s : e.inputs()) {
        out.inputs.push_back(StreamRow{&row, e.component(), executor,
                                       s.component().empty() ? "unknown" : s.component(), false,
                                       &s});
      }
    }
  }
}

// Storm's executor statistics per topology, component, executor and
// stream. They are all-time counts carried across a slot's worker
// restarts, so counters: one restarts from 0 only when its executor moves
// to another slot, which rate() reads as a counter reset.
void WriteStreamCounters(const BeatRows& rows, core::PrometheusTextWriter& out) {
  const struct {
    const char* name;
    const char* help;
    bool outputs, inputs;
    int64_t (*get)(const v1::StreamStats&);
  } counters[] = {
      {"tempest_component_emitted_total", "Tuples emitted per output stream.", true, false,
       [](const v1::StreamStats& s) { return s.emitted(); }},
      {"tempest_component_transferred_total",
       "Tuples transferred to other tasks per output stream.", true, false,
       [](const v1::StreamStats& s) { return s.transferred(); }},
      {"tempest_component_acked_total",
       "Acked: a spout's tuple trees by root stream, a bolt's tuples by input stream.", true, true,
       [](const v1::StreamStats& s) { return s.acked(); }},
      {"tempest_component_failed_total",
       "Failed: a spout's tuple trees by root stream, a bolt's tuples by input stream.", true, true,
       [](const v1::StreamStats& s) { return s.failed(); }},
      {"tempest_component_executed_total", "Tuples a bolt executed per input stream.", false, true,
       [](const v1::StreamStats& s) { return s.executed(); }},
  };
  for (const auto& c : counters) {
    out.Family(c.name, "counter", c.help);
    for (const auto* list : {&rows.outputs, &rows.inputs}) {
      if ((list == &rows.outputs && !c.outputs) || (list == &rows.inputs && !c.inputs)) continue;
      for (const StreamRow& r : *list) {
        // A spout's outputs carry its trees' acked/failed; a bolt's do not.
        if (list == &rows.outputs && c.inputs && !r.spout) continue;
        out.Sample(c.name, r.Labels(), c.get(*r.stats));
      }
    }
  }
}

// Sampled latencies: the sum over the sampled tuples and their count, a
// summary without quantiles (sum / count is the mean).
void WriteStreamLatencies(const BeatRows& rows, core::PrometheusTextWriter& out) {
  const struct {
    const char* name;
    const char* help;
    bool outputs;
    int64_t (*sum_us)(const v1::StreamStats&);
    int64_t (*count)(const v1::StreamStats&);
  } latencies[] = {
      {"tempest_component_complete_latency_seconds",
       "A spout's complete latency per root stream, over sampled tuple trees.", true,
       [](const v1::StreamStats& s) { return s.complete_latency_us_sum(); },
       [](const v1::StreamStats& s) { return s.complete_latency_samples(); }},
      {"tempest_component_execute_latency_seconds",
       "A bolt's execute latency per input stream, over sampled tuples.", false,
       [](const v1::StreamStats& s) { return s.execute_latency_us_sum(); },
       [](const v1::StreamStats& s) { return s.execute_latency_samples(); }},
      {"tempest_component_process_latency_seconds",
       "A bolt's process latency (execute to ack) per input stream, over sampled tuples.", false,
       [](const v1::StreamStats& s) { return s.process_latency_us_sum(); },
       [](const v1::StreamStats& s) { return s.process_latency_samples(); }},
  };
  for (const auto& l : latencies) {
    out.Family(l.name, "summary", l.help);
    const std::string sum = absl::StrCat(l.name, "_sum");
    const std::string count = absl::StrCat(l.name, "_count");
    for (const StreamRow& r : l.outputs ? rows.outputs : rows.inputs) {
      if (l.outputs && !r.spout) continue;
      const std::vector<Label> labels = r.Labels();
      out.SampleFraction(sum, labels, static_cast<double>(l.sum_us(*r.stats)) / 1e6);
      out.Sample(count, labels, l.count(*r.stats));
    }
  }
}

// Storm's executor statistics per topology, component, executor and stream.
void WriteStreamSeries(const BeatRows& rows, core::PrometheusTextWriter& out) {
  WriteStreamCounters(rows, out);
  WriteStreamLatencies(rows, out);
}

// Whether nimbus could measure each KafkaSpout: never a lag of 0 instead.
void WriteSpoutMeasuredSeries(const BeatRows& rows, core::PrometheusTextWriter& out) {
  constexpr const char* kMeasured = "tempest_kafka_spout_lag_measured";
  out.Family(kMeasured, "gauge",
             "1 when nimbus measured the spout's lag, 0 when it could not (Kafka or ZooKeeper "
             "did not answer; GET /lag says why).");
  for (const SpoutRow& r : rows.spouts) {
    const Label labels[] = {{"topology_id", r.topology->id},
                            {"topology", r.topology->name},
                            {"component", r.component}};
    out.Sample(kMeasured, labels, r.measured ? 1 : 0);
  }
}

// KafkaSpout partitions as nimbus measured them (the log end from Kafka,
// the offsets where the spout stores them: the same numbers as GET /lag);
// values not known (-1) are left out, and a spout nimbus could not measure
// says so in tempest_kafka_spout_lag_measured rather than with a lag of 0.
void WritePartitionSeries(const BeatRows& rows, core::PrometheusTextWriter& out) {
  using Offset = spout::StoredPartitionOffset;
  const struct {
    const char* name;
    const char* help;
    bool fraction;
    double (*get)(const PartitionRow&);
  } series[] = {
      {"tempest_kafka_partition_lag",
       "Records between the stored offset (or, without one, the start policy) and the log end.",
       false,
       [](const PartitionRow& r) {
         const Offset& p = *r.measured;
         return p.lag && !p.out_of_range ? static_cast<double>(*p.lag) : -1.0;
       }},
      {"tempest_kafka_partition_lag_seconds",
       "The newest record's time minus that of the first record not yet committed.", true,
       [](const PartitionRow& r) {
         return r.beat != nullptr && r.beat->lag_ms() >= 0
                    ? static_cast<double>(r.beat->lag_ms()) / 1e3
                    : -1.0;
       }},
      {"tempest_kafka_partition_committed_offset",
       "The next offset of the partition to process after a restart.", false,
       [](const PartitionRow& r) {
         return r.measured->state ? static_cast<double>(r.measured->state->offset) : -1.0;
       }},
      {"tempest_kafka_partition_log_end_offset", "The partition's log end offset.", false,
       [](const PartitionRow& r) {
         return static_cast<double>(r.measured->log_end_offset.value_or(-1));
       }},
  };
  for (const auto& s : series) {
    out.Family(s.name, "gauge", s.help);
    for (const PartitionRow& r : rows.partitions) {
      const double value = s.get(r);
      if (value < 0) continue;
      const std::string partition = absl::StrCat(r.measured->partition);
      const Label labels[] = {{"topology_id", r.topology->id},
                              {"topology", r.topology->name},
                              {"component", r.component},
                              {"topic", r.measured->topic},
                              {"partition", partition}};
      if (s.fraction) {
        out.SampleFraction(s.name, labels, value);
      } else {
        out.Sample(s.name, labels, static_cast<int64_t>(value));
      }
    }
  }
  WriteSpoutMeasuredSeries(rows, out);
}

void WriteSlotSeries(const BeatRows& rows, core::PrometheusTextWriter& out) {
  constexpr const char* kRestarts = "tempest_worker_restarts_total";
  out.Family(kRestarts, "counter",
             "Restarts of the slot's worker after it died, while the slot keeps the topology.");
  for (const SlotRow& r : rows.slots) {
    const Label labels[] = {{"topology_id", r.topology->id},
                            {"topology", r.topology->name},
                            {"supervisor_id", r.supervisor_id},
                            {"host", r.host},
                            {"port", r.port}};
    out.Sample(kRestarts, labels, r.restarts);
  }
}

void WriteSupervisorSeries(const ClusterView& view, core::PrometheusTextWriter& out) {
  const std::map<std::string, int> used = AssignedSlotsBySupervisor(view);
  const auto used_on = [&used](const v1::SupervisorInfo& s) {
    auto it = used.find(s.supervisor_id());
    return it == used.end() ? 0 : it->second;
  };
  const struct {
    const char* name;
    const char* help;
    std::function<int(const v1::SupervisorInfo&)> get;
  } series[] = {
      {"tempest_supervisor_slots_offered", "Worker slots the supervisor offers.",
       [](const v1::SupervisorInfo& s) { return s.slot_ports_size(); }},
      {"tempest_supervisor_slots_used", "Worker slots of the supervisor assigned to a topology.",
       used_on},
      {"tempest_supervisor_slots_running", "Worker slots of the supervisor running a worker.",
       [](const v1::SupervisorInfo& s) { return s.used_ports_size(); }},
  };
  // A supervisor node is keyed by its id: ids are unique.
  for (const auto& s : series) {
    out.Family(s.name, "gauge", s.help);
    for (const v1::SupervisorInfo& info : view.supervisors) {
      const Label labels[] = {{"supervisor_id", info.supervisor_id()}, {"host", info.hostname()}};
      out.Sample(s.name, labels, s.get(info));
    }
  }
}

}  // namespace

std::string RenderNimbusMetrics(const ClusterView& view) {
  int64_t slots_total = 0, slots_used = 0;
  for (const v1::SupervisorInfo& s : view.supervisors) slots_total += s.slot_ports_size();
  std::map<std::string, int> by_status = {
      {"ACTIVE", 0}, {"INACTIVE", 0}, {"REBALANCING", 0}, {"KILLED", 0}};
  std::vector<MetricsRow> rows;
  for (const TopologyView& t : view.topologies) {
    ++by_status[std::string(TopologyStatusName(t.topology.base.status()))];
    const int workers = AssignedWorkers(t.assignment);
    Totals totals = TotalsOf(CurrentBeats(t));
    totals.restarts = TopologyRestarts(t);  // the supervisors count those that never beat
    rows.push_back(
        MetricsRow{t.topology.id, t.topology.base.name(), workers, totals, FailingSlots(t)});
  }
  // The count the cluster summary and the supervisor rows show.
  const std::map<std::string, int> used = AssignedSlotsBySupervisor(view);
  for (const v1::SupervisorInfo& s : view.supervisors) {
    auto it = used.find(s.supervisor_id());
    slots_used += it == used.end() ? 0 : it->second;
  }
  core::PrometheusTextWriter out;
  out.Family("tempest_nimbus_leader", "gauge", "1 if this nimbus is the leader.");
  out.Sample("tempest_nimbus_leader", view.leader ? 1 : 0);
  out.Family("tempest_supervisors", "gauge", "Supervisors registered in ZooKeeper.");
  out.Sample("tempest_supervisors", static_cast<int64_t>(view.supervisors.size()));
  // Not "_total": Prometheus keeps that suffix for counters.
  out.Family("tempest_slots_offered", "gauge", "Worker slots offered by the supervisors.");
  out.Sample("tempest_slots_offered", slots_total);
  out.Family("tempest_slots_used", "gauge", "Worker slots assigned to topologies.");
  out.Sample("tempest_slots_used", slots_used);
  out.Family("tempest_topologies", "gauge", "Stored topologies by status.");
  for (const auto& [status, n] : by_status) {
    const core::PrometheusTextWriter::Label labels[] = {{"status", status}};
    out.Sample("tempest_topologies", labels, n);
  }
  WriteTopologySeries(rows, out);
  WriteSupervisorSeries(view, out);
  BeatRows beat_rows;
  for (size_t i = 0; i < view.topologies.size(); ++i) {
    CollectBeatRows(view.topologies[i], rows[i], beat_rows);
    CollectLagRows(view.topologies[i], rows[i], beat_rows);
  }
  WriteStreamSeries(beat_rows, out);
  WritePartitionSeries(beat_rows, out);
  WriteSlotSeries(beat_rows, out);
  return out.Take();
}

}  // namespace tempest::nimbus
