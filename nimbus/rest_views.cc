#include "nimbus/rest_views.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/core/metrics_registry.h"
#include "common/core/config/secret_config.h"
#include "common/core/flux/stored_topology.h"
#include "common/core/stream_stats.h"
#include "nimbus/rebalance.h"
#include "nimbus/rest_config_views.h"
#include "nimbus/rest_cluster_views.h"
#include "nimbus/rest_json.h"
#include "nimbus/stats_history.h"
#include "nimbus/topology_state.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {

using SlotKey = std::pair<std::string, int>;  // supervisor id, port

namespace {

using json = nlohmann::json;

// One executor's (or a sum of executors') counts in one window.
struct StatsSummary {
  int64_t emitted = 0, transferred = 0, acked = 0, failed = 0, executed = 0;
  int64_t complete_us = 0, complete_n = 0, execute_us = 0, execute_n = 0, process_us = 0,
          process_n = 0;
  // Time spent executing: executed x mean execute latency, input by input.
  double busy_us = 0;

  void Add(const StatsSummary& o) {
    emitted += o.emitted;
    transferred += o.transferred;
    acked += o.acked;
    failed += o.failed;
    executed += o.executed;
    complete_us += o.complete_us;
    complete_n += o.complete_n;
    execute_us += o.execute_us;
    execute_n += o.execute_n;
    process_us += o.process_us;
    process_n += o.process_n;
    busy_us += o.busy_us;
  }
};

// A spout's acked/failed count the trees rooted on its output streams; a
// bolt's, the tuples it received on its input streams.
StatsSummary Summarize(const v1::ExecutorStats& e) {
  StatsSummary s;
  for (const v1::StreamStats& o : e.outputs()) {
    if (IsSystemId(o.stream())) continue;
    s.emitted += o.emitted();
    s.transferred += o.transferred();
    if (e.spout()) {
      s.acked += o.acked();
      s.failed += o.failed();
      s.complete_us += o.complete_latency_us_sum();
      s.complete_n += o.complete_latency_samples();
    }
  }
  if (!e.spout()) {
    for (const v1::StreamStats& i : e.inputs()) {
      if (IsSystemId(i.stream())) continue;
      s.acked += i.acked();
      s.failed += i.failed();
      s.executed += i.executed();
      s.execute_us += i.execute_latency_us_sum();
      s.execute_n += i.execute_latency_samples();
      s.process_us += i.process_latency_us_sum();
      s.process_n += i.process_latency_samples();
      if (i.execute_latency_samples() > 0) {
        s.busy_us += static_cast<double>(i.executed()) * i.execute_latency_us_sum() /
                     i.execute_latency_samples();
      }
    }
  }
  return s;
}

// Storm's capacity: the share of the window the executor spent executing
// (the window is cut to the topology's uptime).
double Capacity(const StatsSummary& s, int64_t window_secs, int64_t uptime_secs) {
  int64_t span = window_secs > 0 ? std::min(window_secs, uptime_secs) : uptime_secs;
  if (span <= 0) return 0;
  return s.busy_us / (static_cast<double>(span) * 1e6);
}

std::string CapacityText(double capacity) { return absl::StrFormat("%.3f", capacity); }

// The statistics of `window` (empty when the view has none for it).
const std::vector<v1::ExecutorStats>& StatsOf(const TopologyView& view, int64_t window) {
  static const std::vector<v1::ExecutorStats> kNone;
  auto it = view.stats.find(window);
  return it == view.stats.end() ? kNone : it->second;
}

// A component's summary in one window, and the largest capacity among its
// executors (what Storm's UI shows for a bolt).
struct ComponentSummaryStats {
  StatsSummary sum;
  double capacity = 0;
};

ComponentSummaryStats ComponentStats(const TopologyView& view, std::string_view component,
                                     int64_t window, int64_t uptime_secs) {
  ComponentSummaryStats out;
  for (const v1::ExecutorStats& e : StatsOf(view, window)) {
    if (e.component() != component) continue;
    const StatsSummary s = Summarize(e);
    out.sum.Add(s);
    out.capacity = std::max(out.capacity, Capacity(s, window, uptime_secs));
  }
  return out;
}

int64_t UptimeOf(const TopologyView& view, int64_t now_secs) {
  return std::max<int64_t>(0, now_secs - view.topology.base.launch_time_secs());
}

// The common window fields of a page: window, windowHint.
void AddWindowFields(const TopologyView& view, json& body) {
  body["window"] = StatsWindowName(view.window_secs);
  body["windowHint"] = StatsWindowPretty(view.window_secs);
}

// topologyStats: every window's totals; emitted and transferred over every
// component, acked, failed and complete latency over the spouts.
json TopologyStatsJson(const TopologyView& view) {
  json windows = json::array();
  for (int64_t w : kStatsWindows) {
    StatsSummary all, spouts;
    for (const v1::ExecutorStats& e : StatsOf(view, w)) {
      if (IsSystemId(e.component())) continue;
      const StatsSummary s = Summarize(e);
      all.Add(s);
      if (e.spout()) spouts.Add(s);
    }
    windows.push_back(json{{"window", StatsWindowName(w)},
                           {"windowPretty", StatsWindowPretty(w)},
                           {"emitted", all.emitted},
                           {"transferred", all.transferred},
                           {"completeLatency", MeanMs(spouts.complete_us, spouts.complete_n)},
                           {"acked", spouts.acked},
                           {"failed", spouts.failed}});
  }
  return windows;
}

// A spout's or bolt's statistics fields in Storm's names.
void AddSummaryFields(const StatsSummary& s, bool spout, double capacity, json& entry) {
  entry["emitted"] = s.emitted;
  entry["transferred"] = s.transferred;
  entry["acked"] = s.acked;
  entry["failed"] = s.failed;
  if (spout) {
    entry["completeLatency"] = MeanMs(s.complete_us, s.complete_n);
  } else {
    entry["executed"] = s.executed;
    entry["executeLatency"] = MeanMs(s.execute_us, s.execute_n);
    entry["processLatency"] = MeanMs(s.process_us, s.process_n);
    entry["capacity"] = CapacityText(capacity);
  }
}

// Storm's URL-safe spelling of an id (encodedSpoutId, encodedId, ...).
std::string Encoded(std::string_view id) {
  std::string out;
  for (char c : id) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(c);
    } else {
      absl::StrAppend(&out, absl::StrFormat("%%%02X", u));
    }
  }
  return out;
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

// "spouts" and "bolts" of the topology page, with their statistics in the
// view's window (system components such as the acker left out, as Storm's
// UI does by default).
void AddComponents(const TopologyView& view, int64_t now_secs, json& body) {
  json spouts = json::array(), bolts = json::array();
  const int64_t uptime = UptimeOf(view, now_secs);
  for (const v1::ComponentSummary& c : view.topology.base.components()) {
    if (IsSystemId(c.id())) continue;
    json entry = {{"executors", c.executors()}, {"tasks", c.tasks()}};
    const ComponentSummaryStats stats = ComponentStats(view, c.id(), view.window_secs, uptime);
    AddSummaryFields(stats.sum, c.spout(), stats.capacity, entry);
    AddComponentResources(entry);
    AddLastError(view, c.id(), now_secs, entry);
    if (c.spout()) {
      entry["spoutId"] = c.id();
      entry["encodedSpoutId"] = Encoded(c.id());
      spouts.push_back(entry);
    } else {
      entry["boltId"] = c.id();
      entry["encodedBoltId"] = Encoded(c.id());
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
             // The worker's own pid, from its beat (for `tempest list --workers`).
             {"pid", b->beat.pid()},
             // The assignment version it runs: an operator sees which workers
             // have applied a change (0: a worker older than versions).
             {"assignmentVersion", b->beat.assignment_version()},
             {"emitted", b->beat.emitted()},
             {"acked", b->beat.acked()},
             {"failed", b->beat.failed()},
             {"restarts", b->beat.restarts()},
             {"completeLatency", LatencyMs(b->beat.complete_latency_p99_us())}});
    workers.push_back(std::move(row));
  }
  return workers;
}

// The supervisors' records of the assigned slots' failed workers.
json WorkerFailuresJson(const TopologyView& view, int64_t now_secs) {
  json out = json::array();
  for (const StoredWorkerFailure* f : CurrentFailures(view)) {
    const std::string host = view.assignment.has_value() ? HostOf(*view.assignment, f->node) : "";
    const int64_t next_secs = f->next_attempt_ms / 1000;
    out.push_back(json{{"supervisorId", f->node},
                       {"host", host.empty() ? f->host : host},
                       {"port", f->port},
                       {"pid", f->pid},
                       {"state", f->failing ? "failing" : "running"},
                       {"status", f->status},
                       {"reason", FailureReason(*f)},
                       {"lastOutput", f->output},
                       {"restarts", f->restarts},
                       {"consecutiveFailures", f->consecutive_failures},
                       {"exitTime", f->exit_time_ms},
                       {"exitLapsedSecs", std::max<int64_t>(0, now_secs - f->exit_time_ms / 1000)},
                       {"nextRestartTime", f->next_attempt_ms},
                       {"nextRestartInSeconds", std::max<int64_t>(0, next_secs - now_secs)}});
  }
  return out;
}

// configOverrides, componentExecutors and the fields of a pending kill or
// rebalance.
void AddStateFields(const v1::StormBase& base, int64_t now_secs, json& body) {
  json overrides = json::object();
  for (const auto& [k, v] : base.config_overrides()) {
    overrides[k] = core::IsSecretConfigKey(k) ? std::string("<redacted>") : v;
  }
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

// Storm's debug fields: Tempest has no event logger, so topology.debug is
// all there is and it samples everything or nothing.
void AddDebugFields(const json& configuration, json& body) {
  const bool debug = configuration.value("topology.debug", false);
  body["debug"] = debug;
  body["samplingPct"] = debug ? 100 : 0;
}

// kafkaSpouts: where each KafkaSpout reads and keeps its offsets.
json KafkaSpoutsJson(const TopologyView& view) {
  json out = json::array();
  for (const spout::SpoutLagTarget& t : view.kafka_spouts) {
    const spout::KafkaSpoutConfig& c = t.config;
    json s = {{"spoutId", t.component},        {"topics", c.topics},
              {"offsetsIn", c.offsets_in_kafka() ? "kafka" : "zookeeper"},
              {"zkConnect", t.zk_connect},     {"zkRoot", c.zk_root},
              {"id", c.id},                    {"groupId", c.group_id},
              {"bootstrapServers", c.bootstrap_servers}};
    if (!t.status.ok()) s["errorInfo"] = std::string(t.status.message());
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::string RenderTopologyDetail(const TopologyView& view, int64_t now_secs,
                                 const ClusterConfigRef& cluster) {
  const std::vector<const StoredBeat*> beats = CurrentBeats(view);
  json body = TopologyTotalsJson(view, now_secs);
  body["msgTimeout"] = view.topology.base.message_timeout_secs();
  AddWindowFields(view, body);
  if (!view.stats.empty()) body["topologyStats"] = TopologyStatsJson(view);
  AddComponents(view, now_secs, body);
  TopologyConfiguration configuration = EffectiveTopologyConfiguration(view.topology.base, cluster);
  AddDebugFields(configuration.values, body);
  body["configuration"] = std::move(configuration.values);
  body["configurationOrigins"] = std::move(configuration.origins);
  AddTopologyResources(view, view.nimbuses, body);
  body["executorStats"] = ExecutorStatsJson(view);
  body["workers"] = WorkersJson(view, beats, now_secs);
  body["workerFailures"] = WorkerFailuresJson(view, now_secs);
  body["kafkaSpouts"] = KafkaSpoutsJson(view);
  AddStateFields(view.topology.base, now_secs, body);
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

const v1::SpoutPartitionLag* BeatLagOf(const TopologyView& view, std::string_view component,
                                       std::string_view topic, int partition) {
  const v1::SpoutPartitionLag* best = nullptr;
  for (const StoredBeat* b : CurrentBeats(view)) {
    for (const v1::SpoutPartitionLag& p : b->beat.kafka_partitions()) {
      if (p.component() != component || p.topic() != topic || p.partition() != partition) {
        continue;
      }
      // A partition that moved between tasks: the newer owner got further.
      if (best == nullptr || p.committed_offset() > best->committed_offset()) best = &p;
    }
  }
  return best;
}

namespace {

// Why a partition has no lag, for `errorInfo` ("" when it has one).
std::string PartitionProblem(const spout::StoredPartitionOffset& p) {
  if (!p.kafka_error.empty()) return absl::StrCat("Kafka: ", p.kafka_error);
  if (!p.parse_error.empty()) return absl::StrCat("stored offset unreadable: ", p.parse_error);
  if (p.out_of_range) {
    return absl::StrCat("committed offset ", p.state->offset, " is outside the log [",
                        p.log_start_offset.value_or(-1), ", ", p.log_end_offset.value_or(-1),
                        "]; the spout handles it under its outOfRangePolicy");
  }
  return "";
}

json PartitionLagJson(const TopologyView& view, const spout::SpoutLag& s,
                      const spout::StoredPartitionOffset& p) {
  const v1::SpoutPartitionLag* beat = BeatLagOf(view, s.component, p.topic, p.partition);
  const bool known = p.lag.has_value() && !p.out_of_range;
  json row = {{"topic", p.topic},
              {"partition", p.partition},
              {"task", beat != nullptr ? beat->task() : -1},
              {"consumerCommittedOffset", p.state ? p.state->offset : -1},
              {"latestEmittedOffset", beat != nullptr ? beat->latest_emitted_offset() : -1},
              {"logStartOffset", p.log_start_offset.value_or(-1)},
              {"logHeadOffset", p.log_end_offset.value_or(-1)},
              {"lag", known ? *p.lag : -1},
              {"lagBasis", p.lag_basis},
              {"lagSeconds", beat != nullptr && beat->lag_ms() >= 0
                                 ? json(static_cast<double>(beat->lag_ms()) / 1000.0)
                                 : json(-1)}};
  if (std::string problem = PartitionProblem(p); !problem.empty()) row["errorInfo"] = problem;
  return row;
}

}  // namespace

// Storm UI's lag answer (TopologySpoutLag): an object whose keys are the
// spout ids, each with its Kafka partitions as nimbus measured them
// (view.kafka_lag: the log end from Kafka, the offsets where the spout
// stores them), lag in records (and in seconds from the spout's beat), and
// the total. A spout nimbus could not measure carries `errorInfo` and no
// total: an unreachable broker is not a lag of 0.
std::string RenderTopologyLag(const TopologyView& view) {
  json spouts = json::object();
  for (const spout::SpoutLag& s : view.kafka_lag) {
    json spout = {{"spoutId", s.component},
                  {"spoutType", "KAFKA"},
                  {"offsetsAt", s.offsets_location},
                  {"spoutLagResult", json::array()}};
    for (const spout::StoredPartitionOffset& p : s.partitions) {
      spout["spoutLagResult"].push_back(PartitionLagJson(view, s, p));
    }
    if (s.status.ok()) {
      spout["totalLag"] = s.totals.total;
      spout["partitionsWithUnknownLag"] = s.totals.unknown;
    } else {
      spout["totalLag"] = json();
      spout["partitionsWithUnknownLag"] = json();
      spout["errorInfo"] = std::string(s.status.message());
    }
    spouts[s.component] = std::move(spout);
  }
  return spouts.dump(-1, ' ', false, json::error_handler_t::replace);
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

namespace {

// outputStats: the component's output streams in the view's window.
json OutputStatsJson(const TopologyView& view, std::string_view component, bool spout) {
  std::map<std::string, v1::StreamStats> by_stream;
  for (const v1::ExecutorStats& e : StatsOf(view, view.window_secs)) {
    if (e.component() != component) continue;
    for (const v1::StreamStats& o : e.outputs()) {
      if (IsSystemId(o.stream())) continue;
      v1::StreamStats& sum = by_stream[o.stream()];
      sum.set_stream(o.stream());
      core::AddStreamCounts(o, sum);
    }
  }
  json out = json::array();
  for (const auto& [stream, o] : by_stream) {
    json row = {{"stream", stream},
                {"emitted", o.emitted()},
                {"transferred", o.transferred()},
                {"acked", o.acked()},
                {"failed", o.failed()}};
    if (spout) {
      row["completeLatency"] = MeanMs(o.complete_latency_us_sum(), o.complete_latency_samples());
    }
    out.push_back(row);
  }
  return out;
}

// inputStats: a bolt's input streams (source component, stream).
json InputStatsJson(const TopologyView& view, std::string_view component) {
  std::map<std::pair<std::string, std::string>, v1::StreamStats> by_input;
  for (const v1::ExecutorStats& e : StatsOf(view, view.window_secs)) {
    if (e.component() != component) continue;
    for (const v1::StreamStats& i : e.inputs()) {
      if (IsSystemId(i.stream())) continue;
      v1::StreamStats& sum = by_input[{i.component(), i.stream()}];
      core::AddStreamCounts(i, sum);
    }
  }
  json out = json::array();
  for (const auto& [input, i] : by_input) {
    out.push_back(
        json{{"component", input.first},
             {"encodedComponent", Encoded(input.first)},
             {"encodedComponentId", Encoded(input.first)},
             {"stream", input.second},
             {"executeLatency", MeanMs(i.execute_latency_us_sum(), i.execute_latency_samples())},
             {"processLatency", MeanMs(i.process_latency_us_sum(), i.process_latency_samples())},
             {"executed", i.executed()},
             {"acked", i.acked()},
             {"failed", i.failed()}});
  }
  return out;
}

// workersTotal (the slots running the component's executors), workerStats
// (those workers' slot totals, in topologyStats's shape) and workerRestarts
// (theirs, counted by their supervisors as well as by the workers).
void AddComponentWorkers(const TopologyView& view, std::string_view component, json& body) {
  std::set<SlotKey> slots;
  const auto placed = PlacedExecutors(view.assignment);
  for (const v1::ExecutorRange& e : view.topology.base.executors()) {
    if (e.component() != component) continue;
    auto it = placed.find({e.start_task(), e.end_task()});
    if (it != placed.end()) slots.insert({it->second->node(), it->second->port()});
  }
  Totals totals;
  for (const StoredBeat* b : CurrentBeats(view)) {
    if (slots.contains({b->slot.node, b->slot.port})) totals.Add(b->beat);
  }
  int64_t restarts = 0;
  const std::map<std::string, int64_t> by_slot = RestartsBySlot(view);
  for (const auto& [node, port] : slots) {
    auto it = by_slot.find(absl::StrCat(node, "-", port));
    if (it != by_slot.end()) restarts += it->second;
  }
  body["workersTotal"] = static_cast<int>(slots.size());
  body["workerRestarts"] = restarts;
  body["workerStats"] = json::array({json{{"window", ":all-time"},
                                          {"windowPretty", "All time"},
                                          {"emitted", totals.emitted},
                                          {"transferred", totals.transferred},
                                          {"acked", totals.acked},
                                          {"failed", totals.failed},
                                          {"completeLatency", LatencyMs(totals.p99_us)}}});
}

// spoutSummary / boltStats: the component's totals in every window.
json ComponentWindowsJson(const TopologyView& view, std::string_view component, bool spout,
                          int64_t uptime) {
  json out = json::array();
  for (int64_t w : kStatsWindows) {
    const ComponentSummaryStats stats = ComponentStats(view, component, w, uptime);
    json row = {{"window", StatsWindowName(w)}, {"windowPretty", StatsWindowPretty(w)}};
    AddSummaryFields(stats.sum, spout, stats.capacity, row);
    if (!spout) row.erase("capacity");  // Storm shows capacity per executor only
    out.push_back(row);
  }
  return out;
}

// The component page's executorStats: each executor of `component`, where
// it runs and its statistics in the view's window.
json ComponentExecutorsJson(const TopologyView& view, std::string_view component, bool spout,
                            int64_t uptime) {
  const StoredTopology& t = view.topology;
  const auto placed = PlacedExecutors(view.assignment);
  std::map<SlotKey, const StoredBeat*> beat_of;
  for (const StoredBeat* b : CurrentBeats(view)) beat_of[{b->slot.node, b->slot.port}] = b;
  std::map<std::pair<int, int>, const v1::ExecutorStats*> stats_of;
  for (const v1::ExecutorStats& e : StatsOf(view, view.window_secs)) {
    if (e.component() == component) stats_of[{e.start_task(), e.end_task()}] = &e;
  }
  json executors = json::array();
  for (const v1::ExecutorRange& e : t.base.executors()) {
    if (e.component() != component) continue;
    const std::string id = ExecutorName(e.start_task(), e.end_task());
    json entry = {{"id", id}, {"encodedId", Encoded(id)}};
    auto it = placed.find({e.start_task(), e.end_task()});
    if (it != placed.end()) {
      const v1::ExecutorAssignment& ea = *it->second;
      entry["supervisorId"] = ea.node();
      entry["host"] = HostOf(*view.assignment, ea.node());
      entry["port"] = ea.port();
      entry["workerLogLink"] = "";
      auto b = beat_of.find({ea.node(), ea.port()});
      if (b != beat_of.end()) {
        entry["uptime"] = PrettyUptime(b->second->beat.uptime_secs());
        entry["uptimeSeconds"] = b->second->beat.uptime_secs();
      }
    }
    StatsSummary s;
    if (auto st = stats_of.find({e.start_task(), e.end_task()}); st != stats_of.end()) {
      s = Summarize(*st->second);
    }
    AddSummaryFields(s, spout, Capacity(s, view.window_secs, uptime), entry);
    executors.push_back(entry);
  }
  return executors;
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
  const bool spout = summary->spout();
  const int64_t uptime = UptimeOf(view, now_secs);
  const json executors = ComponentExecutorsJson(view, component, spout, uptime);
  json body = {{"id", std::string(component)},
               {"encodedId", Encoded(component)},
               {"name", t.base.name()},
               {"topologyId", t.id},
               {"encodedTopologyId", Encoded(t.id)},
               {"componentType", spout ? "spout" : "bolt"},
               {"executors", summary->executors()},
               {"tasks", summary->tasks()},
               {"topologyStatus", std::string(TopologyStatusName(t.base.status()))},
               {"executorStats", executors},
               {"outputStats", OutputStatsJson(view, component, spout)},
               {"componentErrors", ComponentErrorsJson(view, component, now_secs)}};
  AddWindowFields(view, body);
  AddDebugFields(EffectiveTopologyConfiguration(t.base, {}).values, body);
  AddComponentResources(body);
  body["schedulerDisplayResource"] = false;
  body["user"] = t.base.owner();
  // No event logger and no profiler: workers are native processes.
  body["eventLogLink"] = "";
  body["profilingAndDebuggingCapable"] = false;
  body["profileActionEnabled"] = false;
  body["profilerActive"] = json::array();
  AddComponentWorkers(view, component, body);
  AddLastError(view, std::string(component), now_secs, body);
  if (spout) {
    body["spoutSummary"] = ComponentWindowsJson(view, component, true, uptime);
  } else {
    body["boltStats"] = ComponentWindowsJson(view, component, false, uptime);
    body["inputStats"] = InputStatsJson(view, component);
  }
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string RenderTopologyVisualization(const TopologyView& view, int64_t now_secs) {
  const int64_t uptime = UptimeOf(view, now_secs);
  const int64_t span =
      view.window_secs > 0 ? std::min(view.window_secs, std::max<int64_t>(uptime, 1)) : uptime;
  absl::StatusOr<core::TopologyDef> def = core::LoadStoredTopology(view.topology.base);
  json graph = json::object();
  for (const v1::ComponentSummary& c : view.topology.base.components()) {
    if (IsSystemId(c.id())) continue;
    const ComponentSummaryStats stats = ComponentStats(view, c.id(), view.window_secs, uptime);
    json inputs = json::array();
    if (def.ok()) {
      for (const core::StreamDef& st : def->streams) {
        if (st.to.value() != c.id()) continue;
        // Tuples this bolt executed from the input in the window, and their rate.
        int64_t executed = 0;
        for (const v1::ExecutorStats& e : StatsOf(view, view.window_secs)) {
          if (e.component() != c.id()) continue;
          for (const v1::StreamStats& i : e.inputs()) {
            if (i.component() == st.from.value() && i.stream() == st.stream.value()) {
              executed += i.executed();
            }
          }
        }
        inputs.push_back(json{{":component", st.from.value()},
                              {":stream", st.stream.value()},
                              {":sani-stream", Encoded(st.stream.value())},
                              {":grouping", std::string(core::GroupingTypeName(st.grouping.type))},
                              {"executed", executed},
                              {"tuplesPerSecond", span > 0 ? static_cast<double>(executed) / span
                                                           : 0.0}});
      }
    }
    const StatsSummary& sum = stats.sum;
    json node = {{":type", c.spout() ? "spout" : "bolt"},
                 {":capacity", c.spout() ? 0.0 : stats.capacity},
                 {":latency", c.spout() ? (sum.complete_n > 0 ? static_cast<double>(
                                                                    sum.complete_us) /
                                                                    sum.complete_n / 1000.0
                                                              : 0.0)
                                        : (sum.process_n > 0 ? static_cast<double>(sum.process_us) /
                                                                   sum.process_n / 1000.0
                                                             : 0.0)},
                 {":transferred", sum.transferred},
                 {":emitted", sum.emitted},
                 {":executors", c.executors()},
                 {":inputs", inputs}};
    json per_executor = json::array();
    for (const v1::ExecutorStats& e : StatsOf(view, view.window_secs)) {
      if (e.component() != c.id()) continue;
      per_executor.push_back(json{{":id", ExecutorName(e.start_task(), e.end_task())},
                                  {":transferred", Summarize(e).transferred},
                                  {":uptime_secs", e.uptime_secs()}});
    }
    node[":stats"] = per_executor;
    graph[c.id()] = node;
  }
  return graph.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace tempest::nimbus
