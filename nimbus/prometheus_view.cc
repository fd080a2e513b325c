#include "nimbus/prometheus_view.h"

#include <map>
#include <string>
#include <vector>

#include "common/core/metrics_registry.h"
#include "nimbus/topology_state.h"

namespace tempest::nimbus {
namespace {

// Label set of a topology's series: {topology_id, topology}, in that order.
struct MetricsRow {
  std::string id;
  std::string name;
  int workers = 0;
  Totals totals;
};

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
    slots_used += workers;
    rows.push_back(
        MetricsRow{t.topology.id, t.topology.base.name(), workers, TotalsOf(CurrentBeats(t))});
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
  return out.Take();
}

}  // namespace tempest::nimbus
