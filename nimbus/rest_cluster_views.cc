#include "nimbus/rest_cluster_views.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/core/stream_stats.h"
#include "nimbus/rest_json.h"
#include "nimbus/stats_history.h"
#include "nimbus/topology_state.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {
namespace {

using json = nlohmann::json;
using SlotKey = std::pair<std::string, int>;  // supervisor id, port

std::string Dump(const json& body) {
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string HostOf(const std::optional<v1::Assignment>& a, const std::string& node) {
  if (!a.has_value() || !a->node_host().contains(node)) return "";
  return a->node_host().at(node);
}

// The slots of an assignment, sorted.
std::set<SlotKey> SlotsOf(const std::optional<v1::Assignment>& a) {
  std::set<SlotKey> slots;
  if (a.has_value()) {
    for (const auto& e : a->executors()) slots.insert({e.node(), e.port()});
  }
  return slots;
}

// The slots model's resource fields of a supervisor row.
void AddSupervisorResources(const v1::SupervisorInfo& s, int used, json& row) {
  row["schedulerDisplayResource"] = false;
  row["totalMem"] = static_cast<double>(s.slot_ports_size());
  row["totalCpu"] = static_cast<double>(s.slot_ports_size());
  row["usedMem"] = static_cast<double>(used);
  row["usedCpu"] = static_cast<double>(used);
}

// `used`: the supervisor's slots the assignments give a topology
// (AssignedSlotsBySupervisor); `slotsRunning` is what the supervisor last
// said runs a worker (less than used while a worker starts or crash-loops).
json SupervisorJson(const v1::SupervisorInfo& s, int used) {
  json row = {{"id", s.supervisor_id()},
              {"host", s.hostname()},
              {"uptime", PrettyUptime(s.uptime_secs())},
              {"uptimeSeconds", s.uptime_secs()},
              {"slotsTotal", s.slot_ports_size()},
              {"slotsUsed", used},
              {"slotsRunning", s.used_ports_size()},
              {"version", s.version()}};
  // The ports the supervisor itself registered (its supervisor.slots.ports),
  // not nimbus's setting of that key.
  json ports = json::array();
  for (const int32_t port : s.slot_ports()) ports.push_back(port);
  row["slotPorts"] = std::move(ports);
  AddSupervisorResources(s, used, row);
  return row;
}

int UsedOn(const std::map<std::string, int>& used, const v1::SupervisorInfo& s) {
  auto it = used.find(s.supervisor_id());
  return it == used.end() ? 0 : it->second;
}

// One row of /topology/summary: Storm's fields, the slots model's
// resources, and the running totals of the topology's current workers.
json TopologySummaryRow(const TopologyView& view, int replication_count, int64_t now_secs) {
  json row = TopologyTotalsJson(view, now_secs);
  AddTopologyResources(view, replication_count, row);
  return row;
}

// The current beat of each slot of a topology.
std::map<SlotKey, const StoredBeat*> BeatsBySlot(const TopologyView& view) {
  std::map<SlotKey, const StoredBeat*> out;
  for (const StoredBeat* b : CurrentBeats(view)) out[{b->slot.node, b->slot.port}] = b;
  return out;
}

}  // namespace

void AddTopologyResources(const TopologyView& view, int nimbuses, json& body) {
  const double requested = view.topology.base.num_workers();
  const double assigned = AssignedWorkers(view.assignment);
  // The Flux text lives in ZooKeeper, so every live nimbus has it.
  body["replicationCount"] = nimbuses;
  body["schedulerDisplayResource"] = false;
  body["requestedMemOnHeap"] = requested;
  body["requestedMemOffHeap"] = 0.0;
  body["requestedTotalMem"] = requested;
  body["requestedCpu"] = requested;
  body["assignedMemOnHeap"] = assigned;
  body["assignedMemOffHeap"] = 0.0;
  body["assignedTotalMem"] = assigned;
  body["assignedCpu"] = assigned;
}

void AddComponentResources(json& body) {
  body["requestedMemOnHeap"] = 0.0;
  body["requestedMemOffHeap"] = 0.0;
  body["requestedCpu"] = 0.0;
}

json WorkerSlotJson(const TopologyView& view, const std::string& node, int port,
                    const StoredBeat* beat) {
  std::map<std::pair<int, int>, std::string> component_of;
  for (const v1::ExecutorRange& r : view.topology.base.executors()) {
    component_of[{r.start_task(), r.end_task()}] = r.component();
  }
  int executors = 0;
  json tasks = json::object();
  if (view.assignment.has_value()) {
    for (const v1::ExecutorAssignment& e : view.assignment->executors()) {
      if (e.node() != node || e.port() != port) continue;
      ++executors;
      auto c = component_of.find({e.start_task(), e.end_task()});
      if (c == component_of.end() || IsSystemId(c->second)) continue;
      const int n = e.end_task() - e.start_task() + 1;
      tasks[c->second] = tasks.value(c->second, 0) + n;
    }
  }
  const int64_t uptime = beat != nullptr ? beat->beat.uptime_secs() : 0;
  return json{{"supervisorId", node},
              {"host", HostOf(view.assignment, node)},
              {"port", port},
              {"topologyId", view.topology.id},
              {"topologyName", view.topology.base.name()},
              {"executorsTotal", executors},
              {"componentNumTasks", tasks},
              {"assignedMemOnHeap", 1.0},
              {"assignedMemOffHeap", 0.0},
              {"assignedCpu", 1.0},
              {"uptime", PrettyUptime(uptime)},
              {"uptimeSeconds", uptime},
              {"workerLogLink", ""}};
}

std::string RenderClusterSummary(const ClusterView& view) {
  int64_t slots_total = 0, slots_used = 0, executors = 0, tasks = 0;
  // The same count as the supervisor rows, so the rows add up to it.
  const std::map<std::string, int> used = AssignedSlotsBySupervisor(view);
  for (const v1::SupervisorInfo& s : view.supervisors) {
    slots_total += s.slot_ports_size();
    slots_used += UsedOn(used, s);
  }
  for (const TopologyView& t : view.topologies) {
    executors += t.topology.base.num_executors();
    tasks += t.topology.base.num_tasks();
  }
  const double total = static_cast<double>(slots_total);
  const double free = static_cast<double>(std::max<int64_t>(0, slots_total - slots_used));
  const double used_percent =
      slots_total > 0 ? std::min(100.0, 100.0 * static_cast<double>(slots_used) / total) : 0.0;
  return Dump(json{{"stormVersion", "tempest-0.1.0"},
                   {"supervisors", view.supervisors.size()},
                   {"topologies", view.topologies.size()},
                   {"slotsTotal", slots_total},
                   {"slotsUsed", slots_used},
                   {"slotsFree", slots_total - slots_used},
                   {"executorsTotal", executors},
                   {"tasksTotal", tasks},
                   {"schedulerDisplayResource", false},
                   {"totalMem", total},
                   {"totalCpu", total},
                   {"availMem", free},
                   {"availCpu", free},
                   {"memAssignedPercentUtil", used_percent},
                   {"cpuAssignedPercentUtil", used_percent}});
}

std::string RenderNimbusSummary(const std::vector<NimbusPeer>& peers, int64_t now_secs) {
  json list = json::array();
  for (const NimbusPeer& p : peers) {
    const int64_t uptime = std::max<int64_t>(0, now_secs - p.summary.launch_time_secs());
    list.push_back(json{{"host", p.summary.host()},
                        {"port", p.summary.port()},
                        {"id", p.id},
                        {"status", p.leader ? "Leader" : "Not a Leader"},
                        {"version", p.summary.version()},
                        {"nimbusUpTime", PrettyUptime(uptime)},
                        {"nimbusUpTimeSeconds", uptime},
                        // No log viewer: nimbus logs to its stderr / tempest.log.dir.
                        {"nimbusLogLink", ""}});
  }
  return Dump(json{{"nimbuses", list}});
}

std::map<std::string, int> AssignedSlotsBySupervisor(const ClusterView& view) {
  std::map<std::string, int> used;
  for (const TopologyView& t : view.topologies) {
    for (const auto& [node, port] : SlotsOf(t.assignment)) ++used[node];
  }
  return used;
}

std::string RenderSupervisorSummary(const ClusterView& view) {
  const std::map<std::string, int> used = AssignedSlotsBySupervisor(view);
  json list = json::array();
  for (const v1::SupervisorInfo& s : view.supervisors) list.push_back(SupervisorJson(s, UsedOn(used, s)));
  return Dump(json{{"supervisors", list}, {"schedulerDisplayResource", false}});
}

std::string RenderTopologySummary(const ClusterView& view) {
  json list = json::array();
  for (const TopologyView& t : view.topologies) {
    list.push_back(TopologySummaryRow(t, view.nimbuses, view.now_secs));
  }
  return Dump(json{{"topologies", list}, {"schedulerDisplayResource", false}});
}

std::optional<std::string> RenderSupervisorDetail(const ClusterView& view, std::string_view id,
                                                  std::string_view host) {
  std::set<std::string> matched;
  json supervisors = json::array();
  for (const v1::SupervisorInfo& s : view.supervisors) {
    const bool match = !id.empty()     ? s.supervisor_id() == id
                       : !host.empty() ? s.hostname() == host
                                       : true;
    if (!match) continue;
    matched.insert(s.supervisor_id());
    supervisors.push_back(SupervisorJson(s, UsedOn(AssignedSlotsBySupervisor(view), s)));
  }
  if (!id.empty() && matched.empty()) return std::nullopt;
  // (supervisor, port, topology) -> row, so the list reads slot by slot.
  std::map<std::tuple<std::string, int, std::string>, json> rows;
  for (const TopologyView& t : view.topologies) {
    const auto beats = BeatsBySlot(t);
    for (const auto& [node, port] : SlotsOf(t.assignment)) {
      if (!matched.contains(node)) continue;
      auto b = beats.find({node, port});
      rows[{node, port, t.topology.id}] =
          WorkerSlotJson(t, node, port, b != beats.end() ? b->second : nullptr);
    }
  }
  json workers = json::array();
  for (auto& [key, row] : rows) workers.push_back(std::move(row));
  return Dump(json{{"supervisors", supervisors},
                   {"workers", workers},
                   {"schedulerDisplayResource", false}});
}

std::string RenderHistorySummary(const ClusterView& view) {
  json ids = json::array();
  for (const TopologyView& t : view.topologies) ids.push_back(t.topology.id);
  return Dump(json{{"topo-history", ids}});
}

std::string RenderOwnerResources(const ClusterView& view, std::optional<std::string_view> owner) {
  struct Sums {
    int topologies = 0;
    int64_t executors = 0, workers = 0, tasks = 0, requested = 0;
  };
  std::map<std::string, Sums> by_owner;
  for (const TopologyView& t : view.topologies) {
    const std::string& o = t.topology.base.owner();
    if (owner.has_value() && o != *owner) continue;
    Sums& s = by_owner[o];
    ++s.topologies;
    s.executors += t.topology.base.num_executors();
    s.tasks += t.topology.base.num_tasks();
    s.workers += AssignedWorkers(t.assignment);
    s.requested += t.topology.base.num_workers();
  }
  json owners = json::array();
  for (const auto& [name, s] : by_owner) {
    const double assigned = static_cast<double>(s.workers);
    const double requested = static_cast<double>(s.requested);
    owners.push_back(json{{"owner", name},
                          {"totalTopologies", s.topologies},
                          {"totalExecutors", s.executors},
                          {"totalWorkers", s.workers},
                          {"totalTasks", s.tasks},
                          {"totalMemoryUsage", assigned},
                          {"totalCpuUsage", assigned},
                          // Guarantees belong to resource-aware scheduling pools.
                          {"memoryGuarantee", "N/A"},
                          {"cpuGuarantee", "N/A"},
                          {"isolatedNodes", "N/A"},
                          {"memoryGuaranteeRemaining", "N/A"},
                          {"cpuGuaranteeRemaining", "N/A"},
                          {"totalReqOnHeapMem", requested},
                          {"totalReqOffHeapMem", 0.0},
                          {"totalReqMem", requested},
                          {"totalReqCpu", requested},
                          {"totalAssignedOnHeapMem", assigned},
                          {"totalAssignedOffHeapMem", 0.0}});
  }
  return Dump(json{{"owners", owners}, {"schedulerDisplayResource", false}});
}

std::string RenderTopologyWorkers(const TopologyView& view) {
  json list = json::array();
  for (const auto& [node, port] : SlotsOf(view.assignment)) {
    list.push_back(json{{"host", HostOf(view.assignment, node)}, {"port", port}});
  }
  return Dump(json{{"hostPortList", list}, {"logviewerPort", nullptr}});
}

namespace {

// The counts of one component's streams, summed over its executors.
struct ComponentStreams {
  bool spout = false;
  std::map<std::string, v1::StreamStats> outputs;                          // by stream
  std::map<std::pair<std::string, std::string>, v1::StreamStats> inputs;  // (component, stream)
};

// Storm lists a stream under a statistic once it was counted there.
json ByStream(const std::map<std::string, v1::StreamStats>& streams,
              int64_t (*count)(const v1::StreamStats&), bool all = false) {
  json out = json::array();
  for (const auto& [stream, s] : streams) {
    if (all || count(s) > 0) out.push_back(json{{"stream_id", stream}, {"value", count(s)}});
  }
  return out;
}

json ByInput(const std::map<std::pair<std::string, std::string>, v1::StreamStats>& inputs,
             int64_t (*count)(const v1::StreamStats&)) {
  json out = json::array();
  for (const auto& [key, s] : inputs) {
    if (count(s) > 0) {
      out.push_back(json{{"component_id", key.first}, {"stream_id", key.second}, {"value", count(s)}});
    }
  }
  return out;
}

json LatencyByInput(const std::map<std::pair<std::string, std::string>, v1::StreamStats>& inputs,
                    int64_t (*count)(const v1::StreamStats&),
                    int64_t (*sum)(const v1::StreamStats&),
                    int64_t (*samples)(const v1::StreamStats&)) {
  json out = json::array();
  for (const auto& [key, s] : inputs) {
    if (count(s) > 0) {
      out.push_back(json{{"component_id", key.first},
                         {"stream_id", key.second},
                         {"value", MeanMs(sum(s), samples(s))}});
    }
  }
  return out;
}

// Each component's counts by stream, summed over its executors' `stats`
// (system components and streams only with `include_sys`).
std::map<std::string, ComponentStreams> StreamsByComponent(
    const TopologyView& view, const std::vector<v1::ExecutorStats>& stats, bool include_sys) {
  std::map<std::string, ComponentStreams> components;
  for (const v1::ComponentSummary& c : view.topology.base.components()) {
    if (include_sys || !IsSystemId(c.id())) components[c.id()].spout = c.spout();
  }
  for (const v1::ExecutorStats& e : stats) {
    auto c = components.find(e.component());
    if (c == components.end()) continue;
    for (const v1::StreamStats& o : e.outputs()) {
      if (include_sys || !IsSystemId(o.stream())) {
        core::AddStreamCounts(o, c->second.outputs[o.stream()]);
      }
    }
    for (const v1::StreamStats& i : e.inputs()) {
      if (include_sys || !IsSystemId(i.stream())) {
        core::AddStreamCounts(i, c->second.inputs[{i.component(), i.stream()}]);
      }
    }
  }
  return components;
}

}  // namespace

std::string RenderTopologyMetrics(const TopologyView& view,
                                  const std::vector<v1::ExecutorStats>& stats, int64_t window_secs,
                                  bool include_sys) {
  const std::map<std::string, ComponentStreams> components =
      StreamsByComponent(view, stats, include_sys);
  using S = v1::StreamStats;
  json spouts = json::array(), bolts = json::array();
  for (const auto& [id, c] : components) {
    json row = {{"id", id},
                {"emitted", ByStream(c.outputs, [](const S& s) { return s.emitted(); }, true)},
                {"transferred",
                 ByStream(c.outputs, [](const S& s) { return s.transferred(); }, true)}};
    if (c.spout) {
      row["acked"] = ByStream(c.outputs, [](const S& s) { return s.acked(); });
      row["failed"] = ByStream(c.outputs, [](const S& s) { return s.failed(); });
      json complete = json::array();
      for (const auto& [stream, s] : c.outputs) {
        if (s.acked() > 0) {
          complete.push_back(json{
              {"stream_id", stream},
              {"value", MeanMs(s.complete_latency_us_sum(), s.complete_latency_samples())}});
        }
      }
      row["complete_ms_avg"] = complete;
      spouts.push_back(row);
    } else {
      row["acked"] = ByInput(c.inputs, [](const S& s) { return s.acked(); });
      row["failed"] = ByInput(c.inputs, [](const S& s) { return s.failed(); });
      row["process_ms_avg"] = LatencyByInput(
          c.inputs, [](const S& s) { return s.acked(); },
          [](const S& s) { return s.process_latency_us_sum(); },
          [](const S& s) { return s.process_latency_samples(); });
      row["executed"] = ByInput(c.inputs, [](const S& s) { return s.executed(); });
      row["executed_ms_avg"] = LatencyByInput(
          c.inputs, [](const S& s) { return s.executed(); },
          [](const S& s) { return s.execute_latency_us_sum(); },
          [](const S& s) { return s.execute_latency_samples(); });
      bolts.push_back(row);
    }
  }
  const std::string hint = StatsWindowPretty(window_secs);
  return Dump(json{{"window", StatsWindowName(window_secs)},
                   {"windowHint", hint},
                   {"window-hint", hint},
                   {"spouts", spouts},
                   {"bolts", bolts}});
}

}  // namespace tempest::nimbus
