#include "nimbus/rest_api.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/api/string_view_compat.h"
#include "nimbus/nimbus.h"
#include "nimbus/topology_state.h"
#include "nimbus/web_ui.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {
namespace {

using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

std::string ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Internal Server Error";
  }
}

HttpResponse ErrorResponse(Nimbus& nimbus, const absl::Status& status) {
  const int code = HttpStatusFor(status);
  json body = {{"error", ReasonPhrase(code)}, {"errorMessage", std::string(status.message())}};
  if (absl::IsUnavailable(status) && !nimbus.IsLeader()) {
    absl::StatusOr<std::string> leader = nimbus.Leader();
    if (leader.ok()) body["leader"] = *leader;
  }
  return HttpResponse::Json(code, body.dump());
}

HttpResponse Ok(const json& body) { return HttpResponse::Json(200, body.dump()); }

// Storm UI's uptime spelling: "1d 2h 3m 4s" (leading zero units left out).
std::string PrettyUptime(int64_t secs) {
  if (secs < 0) secs = 0;
  const int64_t d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, s = secs % 60;
  std::string out;
  if (d > 0) absl::StrAppend(&out, d, "d ");
  if (d > 0 || h > 0) absl::StrAppend(&out, h, "h ");
  if (d > 0 || h > 0 || m > 0) absl::StrAppend(&out, m, "m ");
  absl::StrAppend(&out, s, "s");
  return out;
}

int64_t NowSecs(Nimbus& nimbus) { return nimbus.clock().WallMillis() / 1000; }

int AssignedWorkers(const std::optional<v1::Assignment>& a) {
  if (!a.has_value()) return 0;
  std::set<std::pair<std::string, int>> slots;
  for (const auto& e : a->executors()) slots.insert({e.node(), e.port()});
  return static_cast<int>(slots.size());
}

// The beats of the workers a topology is assigned to now (stale beats of
// slots it no longer has are left out until the leader deletes them).
std::vector<const StoredBeat*> CurrentBeats(const std::vector<StoredBeat>& beats,
                                            const std::optional<v1::Assignment>& assignment) {
  std::set<std::pair<std::string, int>> slots;
  if (assignment.has_value()) {
    for (const auto& e : assignment->executors()) slots.insert({e.node(), e.port()});
  }
  std::vector<const StoredBeat*> out;
  for (const StoredBeat& b : beats) {
    if (b.parsed && slots.contains({b.slot.node, b.slot.port})) out.push_back(&b);
  }
  return out;
}

// Running totals summed over workers. Approximate by nature: a worker's
// totals start again from 0 when it restarts, and the p99 of the whole
// topology is taken as the largest per-worker p99 (percentiles do not add).
struct Totals {
  int64_t emitted = 0, transferred = 0, acked = 0, failed = 0, p99_us = 0;
  int workers = 0;
  void Add(const v1::WorkerHeartbeat& b) {
    emitted += b.emitted();
    transferred += b.transferred();
    acked += b.acked();
    failed += b.failed();
    p99_us = std::max(p99_us, b.complete_latency_p99_us());
    ++workers;
  }
};

// Storm UI's spelling of a latency: milliseconds as a string, 3 decimals.
std::string LatencyMs(int64_t us) { return absl::StrFormat("%.3f", static_cast<double>(us) / 1000.0); }

json StatsJson(const Totals& t) {
  return json::array({json{{"window", ":all-time"},
                           {"windowPretty", "All time"},
                           {"emitted", t.emitted},
                           {"transferred", t.transferred},
                           {"acked", t.acked},
                           {"failed", t.failed},
                           {"completeLatency", LatencyMs(t.p99_us)},
                           {"completeLatencyP99Us", t.p99_us}}});
}

Totals TotalsOf(const std::vector<const StoredBeat*>& beats) {
  Totals t;
  for (const StoredBeat* b : beats) t.Add(b->beat);
  return t;
}

std::string ExecutorName(int start, int end) { return absl::StrCat("[", start, "-", end, "]"); }

json TopologySummaryJson(Nimbus& nimbus, const StoredTopology& t,
                         const std::optional<v1::Assignment>& assignment,
                         const std::vector<const StoredBeat*>& beats) {
  const int64_t uptime = NowSecs(nimbus) - t.base.launch_time_secs();
  const Totals totals = TotalsOf(beats);
  return json{{"id", t.id},
              {"name", t.base.name()},
              {"status", std::string(TopologyStatusName(t.base.status()))},
              {"uptime", PrettyUptime(uptime)},
              {"uptimeSeconds", uptime},
              {"tasksTotal", t.base.num_tasks()},
              {"executorsTotal", t.base.num_executors()},
              {"workersTotal", AssignedWorkers(assignment)},
              {"requestedWorkers", t.base.num_workers()},
              {"assignedExecutors", assignment.has_value() ? assignment->executors_size() : 0},
              {"owner", t.base.owner()},
              {"emitted", totals.emitted},
              {"acked", totals.acked},
              {"failed", totals.failed},
              {"completeLatency", LatencyMs(totals.p99_us)},
              {"topologyStats", StatsJson(totals)}};
}

HttpResponse ClusterSummary(Nimbus& nimbus) {
  absl::StatusOr<std::vector<StoredTopology>> topologies = nimbus.Topologies();
  if (!topologies.ok()) return ErrorResponse(nimbus, topologies.status());
  absl::StatusOr<std::vector<v1::SupervisorInfo>> supervisors = nimbus.Supervisors();
  if (!supervisors.ok()) return ErrorResponse(nimbus, supervisors.status());
  int64_t slots_total = 0, slots_used = 0, executors = 0, tasks = 0;
  for (const v1::SupervisorInfo& s : *supervisors) slots_total += s.slot_ports_size();
  for (const StoredTopology& t : *topologies) {
    executors += t.base.num_executors();
    tasks += t.base.num_tasks();
    absl::StatusOr<std::optional<v1::Assignment>> a = nimbus.AssignmentOf(t.id);
    if (!a.ok()) return ErrorResponse(nimbus, a.status());
    slots_used += AssignedWorkers(*a);
  }
  return Ok(json{{"stormVersion", "tempest-0.1.0"},
                 {"supervisors", supervisors->size()},
                 {"topologies", topologies->size()},
                 {"slotsTotal", slots_total},
                 {"slotsUsed", slots_used},
                 {"slotsFree", slots_total - slots_used},
                 {"executorsTotal", executors},
                 {"tasksTotal", tasks}});
}

HttpResponse NimbusSummary(Nimbus& nimbus) {
  absl::StatusOr<std::vector<NimbusPeer>> peers = nimbus.Nimbuses();
  if (!peers.ok()) return ErrorResponse(nimbus, peers.status());
  json list = json::array();
  for (const NimbusPeer& p : *peers) {
    const int64_t uptime = NowSecs(nimbus) - p.summary.launch_time_secs();
    list.push_back(json{{"host", p.summary.host()},
                        {"port", p.summary.port()},
                        {"id", p.id},
                        {"status", p.leader ? "Leader" : "Not a Leader"},
                        {"version", p.summary.version()},
                        {"nimbusUpTime", PrettyUptime(uptime)},
                        {"nimbusUpTimeSeconds", uptime}});
  }
  return Ok(json{{"nimbuses", list}});
}

HttpResponse SupervisorSummary(Nimbus& nimbus) {
  absl::StatusOr<std::vector<v1::SupervisorInfo>> supervisors = nimbus.Supervisors();
  if (!supervisors.ok()) return ErrorResponse(nimbus, supervisors.status());
  json list = json::array();
  for (const v1::SupervisorInfo& s : *supervisors) {
    list.push_back(json{{"id", s.supervisor_id()},
                        {"host", s.hostname()},
                        {"uptime", PrettyUptime(s.uptime_secs())},
                        {"uptimeSeconds", s.uptime_secs()},
                        {"slotsTotal", s.slot_ports_size()},
                        {"slotsUsed", s.used_ports_size()},
                        {"version", s.version()}});
  }
  return Ok(json{{"supervisors", list}});
}

HttpResponse TopologySummary(Nimbus& nimbus) {
  absl::StatusOr<std::vector<StoredTopology>> topologies = nimbus.Topologies();
  if (!topologies.ok()) return ErrorResponse(nimbus, topologies.status());
  json list = json::array();
  for (const StoredTopology& t : *topologies) {
    absl::StatusOr<std::optional<v1::Assignment>> a = nimbus.AssignmentOf(t.id);
    if (!a.ok()) return ErrorResponse(nimbus, a.status());
    absl::StatusOr<std::vector<StoredBeat>> beats = nimbus.WorkerBeats(t.id);
    if (!beats.ok()) return ErrorResponse(nimbus, beats.status());
    list.push_back(TopologySummaryJson(nimbus, t, *a, CurrentBeats(*beats, *a)));
  }
  return Ok(json{{"topologies", list}});
}

// What the topology pages read: the record, its assignment (if any) and
// every workerbeat.
struct TopologyView {
  StoredTopology topology;
  std::optional<v1::Assignment> assignment;
  std::vector<StoredBeat> beats;
};

absl::StatusOr<TopologyView> ReadTopologyView(Nimbus& nimbus, const std::string& id) {
  absl::StatusOr<StoredTopology> t = nimbus.Topology(id);
  if (!t.ok()) return t.status();
  absl::StatusOr<std::optional<v1::Assignment>> a = nimbus.AssignmentOf(id);
  if (!a.ok()) return a.status();
  absl::StatusOr<std::vector<StoredBeat>> beats = nimbus.WorkerBeats(id);
  if (!beats.ok()) return beats.status();
  return TopologyView{*std::move(t), *std::move(a), *std::move(beats)};
}

HttpResponse TopologyDetail(Nimbus& nimbus, const std::string& id) {
  absl::StatusOr<TopologyView> view = ReadTopologyView(nimbus, id);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  const StoredTopology* t = &view->topology;
  const std::optional<v1::Assignment>* a = &view->assignment;
  const std::vector<StoredBeat>* all_beats = &view->beats;
  const std::vector<const StoredBeat*> beats = CurrentBeats(*all_beats, *a);
  json body = TopologySummaryJson(nimbus, *t, *a, beats);
  body["msgTimeout"] = t->base.message_timeout_secs();
  json spouts = json::array(), bolts = json::array();
  for (const v1::ComponentSummary& c : t->base.components()) {
    json entry = {{"executors", c.executors()}, {"tasks", c.tasks()}};
    if (c.spout()) {
      entry["spoutId"] = c.id();
      spouts.push_back(entry);
    } else {
      entry["boltId"] = c.id();
      bolts.push_back(entry);
    }
  }
  body["spouts"] = spouts;
  body["bolts"] = bolts;
  // Executors and the worker slots they are assigned to (none until a
  // supervisor offers slots).
  std::map<std::pair<int, int>, const v1::ExecutorAssignment*> placed;
  if (a->has_value()) {
    for (const auto& e : (*a)->executors()) placed[{e.start_task(), e.end_task()}] = &e;
  }
  json executors = json::array();
  for (const v1::ExecutorRange& e : t->base.executors()) {
    json entry = {{"id", ExecutorName(e.start_task(), e.end_task())},
                  {"component", e.component()}};
    auto it = placed.find({e.start_task(), e.end_task()});
    if (it != placed.end()) {
      entry["supervisorId"] = it->second->node();
      entry["host"] = (*a)->node_host().contains(it->second->node())
                          ? (*a)->node_host().at(it->second->node())
                          : "";
      entry["port"] = it->second->port();
    }
    executors.push_back(entry);
  }
  body["executorStats"] = executors;
  json workers = json::array();
  for (const StoredBeat* b : beats) {
    json ex = json::array();
    for (const v1::ExecutorRange& r : b->beat.executors()) {
      ex.push_back(ExecutorName(r.start_task(), r.end_task()));
    }
    const auto& hosts = (*a)->node_host();
    workers.push_back(json{{"supervisorId", b->slot.node},
                           {"host", hosts.contains(b->slot.node) ? hosts.at(b->slot.node) : ""},
                           {"port", b->slot.port},
                           {"uptime", PrettyUptime(b->beat.uptime_secs())},
                           {"uptimeSeconds", b->beat.uptime_secs()},
                           // The worker's own clock: for display only.
                           {"lastBeatSecsAgo", std::max<int64_t>(0, NowSecs(nimbus) -
                                                                        b->beat.time_secs())},
                           {"executors", ex},
                           {"emitted", b->beat.emitted()},
                           {"acked", b->beat.acked()},
                           {"failed", b->beat.failed()},
                           {"completeLatency", LatencyMs(b->beat.complete_latency_p99_us())}});
  }
  body["workers"] = workers;
  json overrides = json::object();
  for (const auto& [k, v] : t->base.config_overrides()) overrides[k] = v;
  body["configOverrides"] = overrides;
  if (t->base.status() == v1::KILLED) body["removeInSeconds"] =
      std::max<int64_t>(0, t->base.remove_at_secs() - NowSecs(nimbus));
  if (t->base.status() == v1::REBALANCING) {
    body["rebalanceInSeconds"] =
        std::max<int64_t>(0, t->base.rebalance_at_secs() - NowSecs(nimbus));
  }
  json component_executors = json::object();
  for (const auto& [k, v] : t->base.component_executors()) component_executors[k] = v;
  body["componentExecutors"] = component_executors;
  if (t->base.status() == v1::REBALANCING) {
    json pending = json::object();
    for (const auto& [k, v] : PendingExecutors(t->base)) pending[k] = v;
    body["pendingExecutors"] = pending;
    if (t->base.rebalance_num_workers() > 0) {
      body["pendingWorkers"] = t->base.rebalance_num_workers();
    }
  }
  return Ok(body);
}

HttpResponse Operation(Nimbus& nimbus, std::string_view op, const std::string& id,
                       const absl::StatusOr<v1::StormBase>& result);

// Storm UI's lag answer (TopologySpoutLag): per spout component, its Kafka
// partitions as its tasks last reported them in their workers' beats.
HttpResponse Lag(Nimbus& nimbus, const std::string& id) {
  absl::StatusOr<TopologyView> view = ReadTopologyView(nimbus, id);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  json spouts = json::object();
  for (const StoredBeat* b : CurrentBeats(view->beats, view->assignment)) {
    for (const v1::SpoutPartitionLag& p : b->beat.kafka_partitions()) {
      json& spout = spouts[p.component()];
      if (spout.is_null()) {
        spout = json{{"spoutId", p.component()}, {"spoutType", "KAFKA"},
                     {"spoutLagResult", json::array()}};
      }
      spout["spoutLagResult"].push_back(
          json{{"topic", p.topic()},
               {"partition", p.partition()},
               {"task", p.task()},
               {"consumerCommittedOffset", p.committed_offset()},
               {"latestEmittedOffset", p.latest_emitted_offset()},
               {"logHeadOffset", p.lag() >= 0 ? p.committed_offset() + p.lag() : -1},
               {"lag", p.lag()}});
    }
  }
  return Ok(json{{"topologyId", id}, {"spouts", spouts}});
}

HttpResponse ComponentDetail(Nimbus& nimbus, const std::string& id, const std::string& component) {
  absl::StatusOr<TopologyView> view = ReadTopologyView(nimbus, id);
  if (!view.ok()) return ErrorResponse(nimbus, view.status());
  const StoredTopology* t = &view->topology;
  const std::optional<v1::Assignment>* a = &view->assignment;
  const std::vector<StoredBeat>* all_beats = &view->beats;
  const v1::ComponentSummary* summary = nullptr;
  for (const v1::ComponentSummary& c : t->base.components()) {
    if (c.id() == component) summary = &c;
  }
  if (summary == nullptr) {
    return HttpResponse::Error(404, "Not Found",
                               absl::StrCat("topology ", id, " has no component '", component, "'"));
  }
  const std::vector<const StoredBeat*> beats = CurrentBeats(*all_beats, *a);
  std::map<std::pair<int, int>, const v1::ExecutorAssignment*> placed;
  if (a->has_value()) {
    for (const auto& e : (*a)->executors()) placed[{e.start_task(), e.end_task()}] = &e;
  }
  std::map<std::pair<std::string, int>, const StoredBeat*> beat_of;
  for (const StoredBeat* b : beats) beat_of[{b->slot.node, b->slot.port}] = b;
  json executors = json::array();
  std::set<std::pair<std::string, int>> slots;
  for (const v1::ExecutorRange& e : t->base.executors()) {
    if (e.component() != component) continue;
    json entry = {{"id", ExecutorName(e.start_task(), e.end_task())}};
    auto it = placed.find({e.start_task(), e.end_task()});
    if (it != placed.end()) {
      const v1::ExecutorAssignment& ea = *it->second;
      const auto& hosts = (*a)->node_host();
      entry["supervisorId"] = ea.node();
      entry["host"] = hosts.contains(ea.node()) ? hosts.at(ea.node()) : "";
      entry["port"] = ea.port();
      auto b = beat_of.find({ea.node(), ea.port()});
      if (b != beat_of.end()) {
        entry["uptime"] = PrettyUptime(b->second->beat.uptime_secs());
        entry["uptimeSeconds"] = b->second->beat.uptime_secs();
        slots.insert({ea.node(), ea.port()});
      }
    }
    executors.push_back(entry);
  }
  // Workers report totals per worker, not per executor: these are the sums
  // over the workers that run at least one executor of this component, so
  // they include the other components in those workers.
  Totals totals;
  for (const auto& slot : slots) totals.Add(beat_of[slot]->beat);
  return Ok(json{{"id", component},
                 {"name", t->base.name()},
                 {"topologyId", id},
                 {"componentType", summary->spout() ? "spout" : "bolt"},
                 {"executors", summary->executors()},
                 {"tasks", summary->tasks()},
                 {"executorStats", executors},
                 {"workersTotal", totals.workers},
                 {"workerStats", StatsJson(totals)},
                 {"statsScope", "sums over the workers running this component's executors"}});
}

// An integer given as a JSON number or a string of digits (Storm UI sends
// executor counts either way).
bool IntField(const json& v, int* out) {
  if (v.is_number_integer()) {
    const int64_t n = v.get<int64_t>();
    if (n < INT32_MIN || n > INT32_MAX) return false;
    *out = static_cast<int>(n);
    return true;
  }
  if (v.is_string()) return absl::SimpleAtoi(v.get<std::string>(), out);
  return false;
}

HttpResponse Rebalance(Nimbus& nimbus, const HttpRequest& req, const std::string& id,
                       std::optional<int> wait) {
  RebalanceRequest request;
  request.wait_secs = wait;
  std::string_view text = req.body;
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  if (!text.empty()) {
    json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object()) {
      return HttpResponse::Error(400, "Bad Request", "the request body is not a JSON object");
    }
    if (body.contains("rebalanceOptions")) {
      const json& o = body["rebalanceOptions"];
      if (!o.is_object()) {
        return HttpResponse::Error(400, "Bad Request", "\"rebalanceOptions\" is an object");
      }
      if (o.contains("numWorkers")) {
        int n = 0;
        if (!IntField(o["numWorkers"], &n)) {
          return HttpResponse::Error(400, "Bad Request",
                                     "\"numWorkers\" is a whole number (or a string of one)");
        }
        request.num_workers = n;
      }
      if (o.contains("executors")) {
        if (!o["executors"].is_object()) {
          return HttpResponse::Error(400, "Bad Request",
                                     "\"executors\" is an object of component: count");
        }
        for (const auto& [component, count] : o["executors"].items()) {
          int n = 0;
          if (!IntField(count, &n)) {
            return HttpResponse::Error(
                400, "Bad Request",
                absl::StrCat("the executor count of '", component,
                             "' is not a whole number (or a string of one)"));
          }
          request.executors[component] = n;
        }
      }
    }
  }
  return Operation(nimbus, "rebalance", id, nimbus.Rebalance(id, request));
}

// Prometheus label values escape backslash, quote and newline.
std::string Label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

HttpResponse Metrics(Nimbus& nimbus) {
  absl::StatusOr<std::vector<StoredTopology>> topologies = nimbus.Topologies();
  if (!topologies.ok()) return ErrorResponse(nimbus, topologies.status());
  absl::StatusOr<std::vector<v1::SupervisorInfo>> supervisors = nimbus.Supervisors();
  if (!supervisors.ok()) return ErrorResponse(nimbus, supervisors.status());
  int64_t slots_total = 0, slots_used = 0;
  for (const v1::SupervisorInfo& s : *supervisors) slots_total += s.slot_ports_size();
  std::map<std::string, int> by_status = {{"ACTIVE", 0}, {"INACTIVE", 0}, {"REBALANCING", 0}, {"KILLED", 0}};
  struct Row {
    std::string labels;
    int workers;
    Totals totals;
  };
  std::vector<Row> rows;
  for (const StoredTopology& t : *topologies) {
    ++by_status[std::string(TopologyStatusName(t.base.status()))];
    absl::StatusOr<std::optional<v1::Assignment>> a = nimbus.AssignmentOf(t.id);
    if (!a.ok()) return ErrorResponse(nimbus, a.status());
    absl::StatusOr<std::vector<StoredBeat>> beats = nimbus.WorkerBeats(t.id);
    if (!beats.ok()) return ErrorResponse(nimbus, beats.status());
    const int workers = AssignedWorkers(*a);
    slots_used += workers;
    rows.push_back(Row{absl::StrCat("topology_id=\"", Label(t.id), "\",topology=\"",
                                    Label(t.base.name()), "\""),
                       workers, TotalsOf(CurrentBeats(*beats, *a))});
  }
  std::string out;
  auto gauge = [&out](std::string_view name, std::string_view help) {
    absl::StrAppend(&out, "# HELP ", api::Sv(name), " ", api::Sv(help), "\n# TYPE ", api::Sv(name),
                    " gauge\n");
  };
  gauge("tempest_nimbus_leader", "1 if this nimbus is the leader.");
  absl::StrAppend(&out, "tempest_nimbus_leader ", nimbus.IsLeader() ? 1 : 0, "\n");
  gauge("tempest_supervisors", "Supervisors registered in ZooKeeper.");
  absl::StrAppend(&out, "tempest_supervisors ", supervisors->size(), "\n");
  gauge("tempest_slots_total", "Worker slots offered by the supervisors.");
  absl::StrAppend(&out, "tempest_slots_total ", slots_total, "\n");
  gauge("tempest_slots_used", "Worker slots assigned to topologies.");
  absl::StrAppend(&out, "tempest_slots_used ", slots_used, "\n");
  gauge("tempest_topologies", "Stored topologies by status.");
  for (const auto& [status, n] : by_status) {
    absl::StrAppend(&out, "tempest_topologies{status=\"", status, "\"} ", n, "\n");
  }
  // Sums of the workers' running totals: gauges, since a restarted worker
  // starts again from 0.
  const struct {
    const char* name;
    const char* help;
    int64_t (*get)(const Row&);
  } series[] = {
      {"tempest_topology_workers", "Worker slots assigned to the topology.",
       [](const Row& r) -> int64_t { return r.workers; }},
      {"tempest_topology_emitted", "Tuples emitted, summed over the topology's live workers.",
       [](const Row& r) { return r.totals.emitted; }},
      {"tempest_topology_transferred", "Tuples transferred, summed over the live workers.",
       [](const Row& r) { return r.totals.transferred; }},
      {"tempest_topology_acked", "Tuple trees acked, summed over the live workers.",
       [](const Row& r) { return r.totals.acked; }},
      {"tempest_topology_failed", "Tuple trees failed, summed over the live workers.",
       [](const Row& r) { return r.totals.failed; }},
      {"tempest_topology_complete_latency_p99_microseconds",
       "Largest per-worker p99 complete latency.",
       [](const Row& r) { return r.totals.p99_us; }},
  };
  for (const auto& s : series) {
    gauge(s.name, s.help);
    for (const Row& r : rows) absl::StrAppend(&out, s.name, "{", r.labels, "} ", s.get(r), "\n");
  }
  HttpResponse response;
  response.status = 200;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = std::move(out);
  return response;
}

HttpResponse Operation(Nimbus& nimbus, std::string_view op, const std::string& id,
                       const absl::StatusOr<v1::StormBase>& result) {
  if (!result.ok()) return ErrorResponse(nimbus, result.status());
  return Ok(json{{"topologyOperation", std::string(op)},
                 {"topologyId", id},
                 {"status", "success"},
                 {"topologyStatus", std::string(TopologyStatusName(result->status()))}});
}

HttpResponse Submit(Nimbus& nimbus, const HttpRequest& req) {
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return HttpResponse::Error(400, "Bad Request", "the request body is not a JSON object");
  }
  SubmitRequest request;
  auto string_field = [&body](const char* key, std::string* out) -> bool {
    if (!body.contains(key)) return true;
    if (!body[key].is_string()) return false;
    *out = body[key].get<std::string>();
    return true;
  };
  if (!body.contains("flux") || !string_field("flux", &request.flux_text)) {
    return HttpResponse::Error(400, "Bad Request",
                               "\"flux\" (the Flux YAML text, a string) is required");
  }
  if (!string_field("fileName", &request.file_name) || !string_field("name", &request.name) ||
      !string_field("owner", &request.owner)) {
    return HttpResponse::Error(400, "Bad Request", "\"fileName\", \"name\" and \"owner\" are strings");
  }
  if (body.contains("inactive")) {
    if (!body["inactive"].is_boolean()) {
      return HttpResponse::Error(400, "Bad Request", "\"inactive\" is a boolean");
    }
    request.inactive = body["inactive"].get<bool>();
  }
  if (body.contains("config")) {
    if (!body["config"].is_object()) {
      return HttpResponse::Error(400, "Bad Request", "\"config\" is an object of key: value");
    }
    for (const auto& [key, value] : body["config"].items()) {
      // JSON is YAML, so the value goes through the same parser as `-c k=v`.
      request.config_overrides[key] = value.dump();
    }
  }
  if (body.contains("resources")) {
    // [{"path": "splitsentence.py", "data": "<base64>", "executable": false}]
    const json& files = body["resources"];
    if (!files.is_array()) {
      return HttpResponse::Error(400, "Bad Request", "\"resources\" is an array of files");
    }
    for (const json& f : files) {
      std::string decoded;
      if (!f.is_object() || !f.contains("path") || !f["path"].is_string() ||
          !f.contains("data") || !f["data"].is_string() ||
          (f.contains("executable") && !f["executable"].is_boolean()) ||
          !absl::Base64Unescape(f["data"].get<std::string>(), &decoded)) {
        return HttpResponse::Error(
            400, "Bad Request",
            "each resource is {\"path\": string, \"data\": base64 string, \"executable\": bool}");
      }
      v1::ResourceFile* file = request.resources.add_files();
      file->set_path(f["path"].get<std::string>());
      file->set_data(std::move(decoded));
      file->set_executable(f.value("executable", false));
    }
  }
  absl::StatusOr<std::string> id = nimbus.Submit(request);
  if (!id.ok()) return ErrorResponse(nimbus, id.status());
  absl::StatusOr<StoredTopology> t = nimbus.Topology(*id);
  return Ok(json{{"topologyOperation", "submit"},
                 {"topologyId", *id},
                 {"topologyName", t.ok() ? t->base.name() : ""},
                 {"status", "success"}});
}

}  // namespace

int HttpStatusFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    default:
      return 500;
  }
}

absl::StatusOr<net::HttpRouter> MakeNimbusRouter(Nimbus& nimbus) {
  net::HttpRouter router;
  Nimbus* n = &nimbus;
  struct Route {
    const char* method;
    const char* pattern;
    net::HttpHandler handler;
  };
  const Route routes[] = {
      {"GET", "/api/v1/cluster/summary", [n](const HttpRequest&) { return ClusterSummary(*n); }},
      {"GET", "/api/v1/nimbus/summary", [n](const HttpRequest&) { return NimbusSummary(*n); }},
      {"GET", "/api/v1/supervisor/summary",
       [n](const HttpRequest&) { return SupervisorSummary(*n); }},
      {"GET", "/api/v1/topology/summary",
       [n](const HttpRequest&) { return TopologySummary(*n); }},
      {"GET", "/api/v1/topology/:id",
       [n](const HttpRequest& r) { return TopologyDetail(*n, r.params.at("id")); }},
      {"POST", "/api/v1/topology", [n](const HttpRequest& r) { return Submit(*n, r); }},
      {"POST", "/api/v1/topology/:id/activate",
       [n](const HttpRequest& r) {
         const std::string& id = r.params.at("id");
         return Operation(*n, "activate", id, n->Activate(id));
       }},
      {"POST", "/api/v1/topology/:id/deactivate",
       [n](const HttpRequest& r) {
         const std::string& id = r.params.at("id");
         return Operation(*n, "deactivate", id, n->Deactivate(id));
       }},
      {"POST", "/api/v1/topology/:id/kill",
       [n](const HttpRequest& r) {
         const std::string& id = r.params.at("id");
         return Operation(*n, "kill", id, n->Kill(id, std::nullopt));
       }},
      {"POST", "/api/v1/topology/:id/kill/:wait",
       [n](const HttpRequest& r) {
         const std::string& id = r.params.at("id");
         int wait = 0;
         if (!absl::SimpleAtoi(r.params.at("wait"), &wait) || wait < 0) {
           return HttpResponse::Error(
               400, "Bad Request",
               absl::StrCat("wait must be a whole number of seconds, not '", r.params.at("wait"),
                            "'"));
         }
         return Operation(*n, "kill", id, n->Kill(id, wait));
       }},
      {"GET", "/api/v1/topology/:id/lag",
       [n](const HttpRequest& r) { return Lag(*n, r.params.at("id")); }},
      {"GET", "/api/v1/topology/:id/component/:component",
       [n](const HttpRequest& r) {
         return ComponentDetail(*n, r.params.at("id"), r.params.at("component"));
       }},
      {"POST", "/api/v1/topology/:id/rebalance",
       [n](const HttpRequest& r) { return Rebalance(*n, r, r.params.at("id"), std::nullopt); }},
      {"POST", "/api/v1/topology/:id/rebalance/:wait",
       [n](const HttpRequest& r) {
         int wait = 0;
         if (!absl::SimpleAtoi(r.params.at("wait"), &wait) || wait < 0) {
           return HttpResponse::Error(
               400, "Bad Request",
               absl::StrCat("wait must be a whole number of seconds, not '", r.params.at("wait"),
                            "'"));
         }
         return Rebalance(*n, r, r.params.at("id"), wait);
       }},
      {"GET", "/metrics", [n](const HttpRequest&) { return Metrics(*n); }},
      {"GET", "/",
       [](const HttpRequest&) {
         HttpResponse r;
         r.content_type = "text/html; charset=utf-8";
         r.body = std::string(WebUiIndexHtml());
         return r;
       }},
  };
  for (const Route& route : routes) {
    if (absl::Status s = router.Add(route.method, route.pattern, route.handler); !s.ok()) return s;
  }
  return router;
}

}  // namespace tempest::nimbus
