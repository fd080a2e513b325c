#include "nimbus/rest_views.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/core/metrics_registry.h"
#include "nimbus/rebalance.h"
#include "nimbus/rest_cluster_views.h"
#include "nimbus/topology_state.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {

using SlotKey = std::pair<std::string, int>;  // supervisor id, port

int AssignedWorkers(const std::optional<v1::Assignment>& a) {
  if (!a.has_value()) return 0;
  std::set<SlotKey> slots;
  for (const auto& e : a->executors()) slots.insert({e.node(), e.port()});
  return static_cast<int>(slots.size());
}

std::vector<const StoredBeat*> CurrentBeats(const TopologyView& view) {
  std::set<SlotKey> slots;
  if (view.assignment.has_value()) {
    for (const auto& e : view.assignment->executors()) slots.insert({e.node(), e.port()});
  }
  std::vector<const StoredBeat*> out;
  for (const StoredBeat& b : view.beats) {
    if (b.parsed && slots.contains({b.slot.node, b.slot.port})) out.push_back(&b);
  }
  return out;
}

void Totals::Add(const v1::WorkerHeartbeat& b) {
  emitted += b.emitted();
  transferred += b.transferred();
  acked += b.acked();
  failed += b.failed();
  restarts += b.restarts();
  p99_us = std::max(p99_us, b.complete_latency_p99_us());
  ++workers;
}

Totals TotalsOf(const std::vector<const StoredBeat*>& beats) {
  Totals t;
  for (const StoredBeat* b : beats) t.Add(b->beat);
  return t;
}

namespace {

using json = nlohmann::json;

// Storm UI's spelling of a latency: milliseconds as a string, 3 decimals.
std::string LatencyMs(int64_t us) {
  return absl::StrFormat("%.3f", static_cast<double>(us) / 1000.0);
}

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

std::string ExecutorName(int start, int end) { return absl::StrCat("[", start, "-", end, "]"); }

// The host of a supervisor as the assignment records it ("" if unknown).
std::string HostOf(const v1::Assignment& a, const std::string& node) {
  return a.node_host().contains(node) ? a.node_host().at(node) : "";
}

// Where an error came from, as Storm's UI names it: the host of the worker's
// supervisor (its id when the assignment does not name it any more).
std::string ErrorHost(const TopologyView& view, const StoredError& e) {
  if (view.assignment.has_value()) {
    const std::string host = HostOf(*view.assignment, e.node);
    if (!host.empty()) return host;
  }
  return e.node;
}

// One error in Storm's componentErrors shape (errorTime in ms, as Storm's UI).
json ErrorJson(const TopologyView& view, const StoredError& e, int64_t now_secs) {
  return json{{"errorTime", e.time_secs * 1000},
              {"errorHost", ErrorHost(view, e)},
              {"errorPort", e.port},
              {"error", e.message},
              {"errorLapsedSecs", std::max<int64_t>(0, now_secs - e.time_secs)},
              {"errorWorkerLogLink", ""},
              {"task", e.task}};
}

// Storm's last-error fields of a component's row on the topology page
// (empty strings when the component never reported one).
void AddLastError(const TopologyView& view, const std::string& component, int64_t now_secs,
                  json& entry) {
  const StoredError* last = nullptr;
  for (const StoredError& e : view.errors) {
    if (e.component == component) last = &e;  // oldest first: the last one wins
  }
  entry["lastError"] = last != nullptr ? last->message : "";
  entry["errorHost"] = last != nullptr ? ErrorHost(view, *last) : "";
  entry["errorPort"] = last != nullptr ? json(last->port) : json("");
  entry["errorTime"] = last != nullptr ? json(last->time_secs * 1000) : json(nullptr);
  entry["errorLapsedSecs"] =
      last != nullptr ? json(std::max<int64_t>(0, now_secs - last->time_secs)) : json(nullptr);
  entry["errorWorkerLogLink"] = "";
}

// Executor (start, end task) -> its slot in the assignment.
std::map<std::pair<int, int>, const v1::ExecutorAssignment*> PlacedExecutors(
    const std::optional<v1::Assignment>& a) {
  std::map<std::pair<int, int>, const v1::ExecutorAssignment*> placed;
  if (a.has_value()) {
    for (const auto& e : a->executors()) placed[{e.start_task(), e.end_task()}] = &e;
  }
  return placed;
}

json TopologySummaryJson(const TopologyView& view, const std::vector<const StoredBeat*>& beats,
                         int64_t now_secs) {
  const StoredTopology& t = view.topology;
  const std::optional<v1::Assignment>& assignment = view.assignment;
  const int64_t uptime = now_secs - t.base.launch_time_secs();
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
              {"workerRestarts", totals.restarts},
              {"topologyStats", StatsJson(totals)}};
}

// "spouts" and "bolts" of the topology page.
void AddComponents(const TopologyView& view, int64_t now_secs, json& body) {
  json spouts = json::array(), bolts = json::array();
  for (const v1::ComponentSummary& c : view.topology.base.components()) {
    json entry = {{"executors", c.executors()}, {"tasks", c.tasks()}};
    AddLastError(view, c.id(), now_secs, entry);
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
}

// Executors and the worker slots they are assigned to (none until a
// supervisor offers slots).
json ExecutorStatsJson(const TopologyView& view) {
  const auto placed = PlacedExecutors(view.assignment);
  json executors = json::array();
  for (const v1::ExecutorRange& e : view.topology.base.executors()) {
    json entry = {{"id", ExecutorName(e.start_task(), e.end_task())}, {"component", e.component()}};
    auto it = placed.find({e.start_task(), e.end_task()});
    if (it != placed.end()) {
      entry["supervisorId"] = it->second->node();
      entry["host"] = HostOf(*view.assignment, it->second->node());
      entry["port"] = it->second->port();
    }
    executors.push_back(entry);
  }
  return executors;
}

json WorkersJson(const TopologyView& view, const std::vector<const StoredBeat*>& beats,
                 int64_t now_secs) {
  json workers = json::array();
  for (const StoredBeat* b : beats) {
    json ex = json::array();
    for (const v1::ExecutorRange& r : b->beat.executors()) {
      ex.push_back(ExecutorName(r.start_task(), r.end_task()));
    }
    // Storm's worker summary (rest_cluster_views.h), then the slot's totals.
    json row = WorkerSlotJson(view, b->slot.node, b->slot.port, b);
    row.update(
        json{// The worker's own clock: for display only.
             {"lastBeatSecsAgo", std::max<int64_t>(0, now_secs - b->beat.time_secs())},
             {"executors", ex},
             {"emitted", b->beat.emitted()},
             {"acked", b->beat.acked()},
             {"failed", b->beat.failed()},
             {"restarts", b->beat.restarts()},
             {"completeLatency", LatencyMs(b->beat.complete_latency_p99_us())}});
    workers.push_back(std::move(row));
  }
  return workers;
}

// configOverrides, componentExecutors and the fields of a pending kill or
// rebalance.
void AddStateFields(const v1::StormBase& base, int64_t now_secs, json& body) {
  json overrides = json::object();
  for (const auto& [k, v] : base.config_overrides()) overrides[k] = v;
  body["configOverrides"] = overrides;
  if (base.status() == v1::KILLED) {
    body["removeInSeconds"] = std::max<int64_t>(0, base.remove_at_secs() - now_secs);
  }
  json component_executors = json::object();
  for (const auto& [k, v] : base.component_executors()) component_executors[k] = v;
  body["componentExecutors"] = component_executors;
  if (base.status() == v1::REBALANCING) {
    body["rebalanceInSeconds"] = std::max<int64_t>(0, base.rebalance_at_secs() - now_secs);
    json pending = json::object();
    for (const auto& [k, v] : PendingExecutors(base)) pending[k] = v;
    body["pendingExecutors"] = pending;
    if (base.rebalance_num_workers() > 0) body["pendingWorkers"] = base.rebalance_num_workers();
  }
}

}  // namespace

namespace {

// A config value as JSON (config values are bounded in depth by the loader).
json ConfigValueJson(const api::Value& v) {
  switch (v.type()) {
    case api::Value::Type::kNil:
      return nullptr;
    case api::Value::Type::kBool:
      return v.AsBool();
    case api::Value::Type::kInt:
      return v.AsInt();
    case api::Value::Type::kDouble:
      return v.AsDouble();
    case api::Value::Type::kString:
    case api::Value::Type::kBytes:
      return v.CoerceString().value_or("");
    case api::Value::Type::kList: {
      json list = json::array();
      for (const api::Value& item : v.AsList()) list.push_back(ConfigValueJson(item));
      return list;
    }
    case api::Value::Type::kMap: {
      json map = json::object();
      for (const auto& [k, item] : v.AsMap()) map[k] = ConfigValueJson(item);
      return map;
    }
  }
  return nullptr;
}

bool HoldsCredentials(const std::string& key) {
  const std::string lower = absl::AsciiStrToLower(key);
  for (const char* word : {"password", "secret", "payload", "token"}) {
    if (absl::StrContains(lower, word)) return true;
  }
  return false;
}

}  // namespace

std::string RenderClusterConfiguration(const api::Config& config) {
  json body = json::object();
  for (const auto& [key, value] : config.entries()) {
    body[key] = HoldsCredentials(key) ? json("<redacted>") : ConfigValueJson(value);
  }
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

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

std::string RenderTopologyDetail(const TopologyView& view, int64_t now_secs) {
  const std::vector<const StoredBeat*> beats = CurrentBeats(view);
  json body = TopologySummaryJson(view, beats, now_secs);
  body["msgTimeout"] = view.topology.base.message_timeout_secs();
  AddComponents(view, now_secs, body);
  body["executorStats"] = ExecutorStatsJson(view);
  body["workers"] = WorkersJson(view, beats, now_secs);
  AddStateFields(view.topology.base, now_secs, body);
  return body.dump();
}

// Storm UI's lag answer (TopologySpoutLag): per spout component, its Kafka
// partitions as its tasks last reported them in their workers' beats.
std::string RenderTopologyLag(const TopologyView& view) {
  json spouts = json::object();
  for (const StoredBeat* b : CurrentBeats(view)) {
    for (const v1::SpoutPartitionLag& p : b->beat.kafka_partitions()) {
      json& spout = spouts[p.component()];
      if (spout.is_null()) {
        spout = json{
            {"spoutId", p.component()}, {"spoutType", "KAFKA"}, {"spoutLagResult", json::array()}};
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
  return json{{"topologyId", view.topology.id}, {"spouts", spouts}}.dump();
}

namespace {

// The component's stored errors, newest first, as Storm's component page
// lists them.
json ComponentErrorsJson(const TopologyView& view, std::string_view component, int64_t now_secs) {
  json errors = json::array();
  for (auto it = view.errors.rbegin(); it != view.errors.rend(); ++it) {
    if (it->component == component) errors.push_back(ErrorJson(view, *it, now_secs));
  }
  return errors;
}

}  // namespace

std::optional<std::string> RenderComponentDetail(const TopologyView& view,
                                                 std::string_view component, int64_t now_secs) {
  const StoredTopology& t = view.topology;
  const v1::ComponentSummary* summary = nullptr;
  for (const v1::ComponentSummary& c : t.base.components()) {
    if (c.id() == component) summary = &c;
  }
  if (summary == nullptr) return std::nullopt;
  const auto placed = PlacedExecutors(view.assignment);
  std::map<SlotKey, const StoredBeat*> beat_of;
  for (const StoredBeat* b : CurrentBeats(view)) beat_of[{b->slot.node, b->slot.port}] = b;
  json executors = json::array();
  std::set<SlotKey> slots;
  for (const v1::ExecutorRange& e : t.base.executors()) {
    if (e.component() != component) continue;
    json entry = {{"id", ExecutorName(e.start_task(), e.end_task())}};
    auto it = placed.find({e.start_task(), e.end_task()});
    if (it != placed.end()) {
      const v1::ExecutorAssignment& ea = *it->second;
      entry["supervisorId"] = ea.node();
      entry["host"] = HostOf(*view.assignment, ea.node());
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
  return json{{"id", std::string(component)},
              {"name", t.base.name()},
              {"topologyId", t.id},
              {"componentType", summary->spout() ? "spout" : "bolt"},
              {"executors", summary->executors()},
              {"tasks", summary->tasks()},
              {"executorStats", executors},
              {"workersTotal", totals.workers},
              {"workerStats", StatsJson(totals)},
              {"statsScope", "sums over the workers running this component's executors"},
              {"componentErrors", ComponentErrorsJson(view, component, now_secs)}}
      .dump();
}


}  // namespace tempest::nimbus
