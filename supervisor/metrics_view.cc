#include "supervisor/metrics_view.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/core/kafka_spout_metric_names.h"

namespace tempest::supervisor {
namespace {

using Label = core::PrometheusTextWriter::Label;
namespace kafka_spout_metrics = core::kafka_spout_metrics;

// Help of the families Tempest itself writes; any other registry series
// gets a generic line (promtool wants one for every family).
constexpr std::pair<std::string_view, std::string_view> kHelp[] = {
    {"tempest_acked_total", "Tuples acked: a spout's trees by root stream, a bolt's inputs."},
    {"tempest_acker_completed_total", "Tuple trees the acker saw complete."},
    {"tempest_acker_expired_total", "Tuple trees the acker timed out."},
    {"tempest_acker_failed_total", "Tuple trees the acker saw failed."},
    {"tempest_acker_pending_trees", "Tuple trees the acker tracks now."},
    {"tempest_complete_latency_seconds", "A spout's complete latency per stream (sampled)."},
    {"tempest_emitted_total", "Tuples emitted per component, task and stream."},
    {"tempest_execute_latency_seconds", "A bolt's execute latency per input stream (sampled)."},
    {"tempest_executed_total", "Tuples a bolt executed per input stream."},
    {"tempest_failed_total", "Tuples failed: a spout's trees by root stream, a bolt's inputs."},
    {kafka_spout_metrics::kCommitBlockedSeconds,
     "How long the partition's commit has waited on its oldest pending offset."},
    {kafka_spout_metrics::kCommittedOffset, "The next offset of the partition to process."},
    {kafka_spout_metrics::kLag, "Records between the committed offset and the log end."},
    {kafka_spout_metrics::kLatestEmittedOffset, "The newest offset the spout emitted."},
    {kafka_spout_metrics::kPending, "Records emitted and not yet acked or failed."},
    {"tempest_process_latency_seconds", "A bolt's process latency per input stream (sampled)."},
    {"tempest_receive_queue_depth", "Tuples waiting in an executor's receive queue."},
    {"tempest_supervisor_info", "1, labelled with the supervisor's id, host and version."},
    {"tempest_supervisor_slots_offered", "Worker slots this supervisor offers."},
    {"tempest_supervisor_slots_used", "Worker slots of this supervisor with a worker."},
    {"tempest_supervisor_uptime_seconds", "Seconds since the supervisor started."},
    {"tempest_supervisor_worker_heartbeat_age_seconds",
     "Seconds since the worker's latest local heartbeat."},
    {"tempest_supervisor_worker_launches_total", "Worker processes the supervisor launched."},
    {"tempest_supervisor_worker_restarts_total",
     "Workers that died or were stopped for a heartbeat or start timeout while assigned."},
    {"tempest_supervisor_worker_stops_total", "Workers the supervisor stopped, by reason."},
    {"tempest_supervisor_workers_running", "Worker processes the supervisor runs or adopted."},
    {"tempest_transferred_total", "Tuples transferred per component, task and stream."},
    {"tempest_zk_op_latency_seconds", "Latency of ZooKeeper calls by operation."},
    {"tempest_zk_ops_total", "ZooKeeper calls by operation."},
    {"tempest_zk_session_state",
     "ZooKeeper session state: 0 connecting, 1 connected, 2 read-only, 3 suspended, 4 lost "
     "(expired), 5 auth failed, 6 closed."},
    {"tempest_zk_session_transitions_total",
     "ZooKeeper session state changes (to=\"lost\": expirations; from=\"suspended\" "
     "to=\"connected\": reconnects)."},
    {"tempest_zk_sessions_created_total",
     "ZooKeeper sessions opened (the first and after expiry)."},
};

std::string_view HelpOf(std::string_view family) {
  for (const auto& [name, help] : kHelp) {
    if (name == family) return help;
  }
  return {};
}

bool ValidName(std::string_view s, bool colon_ok) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                    (colon_ok && c == ':') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A registry series as the exposition names it.
struct Shape {
  std::string family;
  std::string type;       // counter, gauge, summary
  double per_second = 0;  // 0: values as they are; else units in a second
};

std::optional<Shape> ShapeOf(std::string_view name, core::MetricSample::Kind kind) {
  if (!ValidName(name, /*colon_ok=*/true)) return std::nullopt;
  std::string base(name);
  if (EndsWith(base, "_total")) base.resize(base.size() - 6);
  Shape shape;
  // Prometheus's base unit of time is the second.
  for (const auto& [unit, per_second] :
       {std::pair<std::string_view, double>{"_us", 1e6}, {"_ms", 1e3}, {"_ns", 1e9}}) {
    if (EndsWith(base, unit)) {
      base.resize(base.size() - unit.size());
      base += "_seconds";
      shape.per_second = per_second;
      break;
    }
  }
  switch (kind) {
    case core::MetricSample::Kind::kCounter:
      shape.type = "counter";
      base += "_total";
      break;
    case core::MetricSample::Kind::kGauge:
      shape.type = "gauge";
      break;
    case core::MetricSample::Kind::kHistogram:
      shape.type = "summary";
      break;
  }
  shape.family = std::move(base);
  return shape;
}

// Families collected in any order and written sorted, each in one block.
class Exposition {
 public:
  struct Family {
    std::string type;
    std::string help;
    core::PrometheusTextWriter samples;
    std::set<std::string> series;  // written series, to leave out repeats
  };

  // The family `name` of `type`; null when it exists with another type.
  Family* Get(const std::string& name, std::string_view type, std::string_view help = {}) {
    auto [it, inserted] = families_.try_emplace(name);
    Family& f = it->second;
    if (inserted) {
      f.type = std::string(type);
      f.help = !help.empty() ? std::string(help) : std::string(HelpOf(name));
      if (f.help.empty()) {
        f.help = "Tempest series " + name + " (docs/user-guide.md, Prometheus).";
      }
    }
    return f.type == type ? &f : nullptr;
  }

  // False when `labels` already named a series of `name` in `family`.
  static bool Claim(Family& family, std::string_view name, const std::vector<Label>& labels) {
    std::string key(name);
    for (const Label& l : labels) {
      key.append("\x1f").append(l.first).append("\x1e").append(l.second);
    }
    return family.series.insert(std::move(key)).second;
  }

  std::string Render() {
    std::string out;
    for (auto& [name, f] : families_) {
      core::PrometheusTextWriter head;
      head.Family(name, f.type, f.help);
      out += head.Take();
      out += f.samples.Take();
    }
    return out;
  }

 private:
  std::map<std::string, Family> families_;
};

void AddValue(Exposition::Family& f, std::string_view name, const std::vector<Label>& labels,
              int64_t value, double per_second) {
  if (!Exposition::Claim(f, name, labels)) return;
  if (per_second == 0) {
    f.samples.Sample(name, labels, value);
  } else {
    f.samples.SampleFraction(name, labels, static_cast<double>(value) / per_second);
  }
}

// One registry series, with `extra` labels first (the worker's slot); the
// series' own labels that say the same as one of `redundant` are dropped.
// Series that cannot be written validly are left out.
void AddRegistrySample(Exposition& out, const core::MetricSample& s,
                       const std::vector<Label>& extra, const std::vector<Label>& redundant = {}) {
  std::optional<Shape> shape = ShapeOf(s.name, s.kind);
  if (!shape) return;
  const bool summary = shape->type == "summary";
  std::vector<Label> labels = extra;
  std::vector<std::string> renamed;  // storage for exported_* names
  renamed.reserve(s.labels.size());
  for (const auto& [key, value] : s.labels) {
    if (!ValidName(key, /*colon_ok=*/false) || key.starts_with("__")) return;
    if (std::find(redundant.begin(), redundant.end(), Label(key, value)) != redundant.end()) {
      continue;
    }
    bool clash = summary && key == "quantile";
    bool same = false;
    for (const Label& e : extra) {
      if (e.first != key) continue;
      (e.second == value ? same : clash) = true;
    }
    if (same) continue;  // the worker's own label says what the slot says
    // Prometheus's convention for a label the scraper's own labels shadow.
    if (clash) {
      renamed.push_back("exported_" + key);
      labels.emplace_back(renamed.back(), value);
    } else {
      labels.emplace_back(key, value);
    }
  }
  Exposition::Family* f = out.Get(shape->family, shape->type);
  if (f == nullptr) return;
  if (!summary) {
    AddValue(*f, shape->family, labels, s.value, shape->per_second);
    return;
  }
  const double unit = shape->per_second == 0 ? 1 : shape->per_second;
  if (!Exposition::Claim(*f, shape->family, labels)) return;
  std::vector<Label> q = labels;
  q.emplace_back("quantile", "0.5");
  f->samples.SampleFraction(shape->family, q, static_cast<double>(s.p50) / unit);
  q.back().second = "0.99";
  f->samples.SampleFraction(shape->family, q, static_cast<double>(s.p99) / unit);
  f->samples.SampleFraction(shape->family + "_sum", labels, static_cast<double>(s.sum) / unit);
  f->samples.Sample(shape->family + "_count", labels, s.value);
}

core::MetricSample SampleOf(const v1::MetricPoint& p) {
  core::MetricSample s;
  s.name = p.name();
  for (const auto& [k, v] : p.labels()) s.labels.emplace(k, v);
  switch (p.kind()) {
    case v1::MetricPoint::GAUGE:
      s.kind = core::MetricSample::Kind::kGauge;
      break;
    case v1::MetricPoint::HISTOGRAM:
      s.kind = core::MetricSample::Kind::kHistogram;
      break;
    default:
      s.kind = core::MetricSample::Kind::kCounter;
      break;
  }
  s.value = p.value();
  s.sum = p.sum();
  s.p50 = p.p50();
  s.p99 = p.p99();
  s.max = p.max();
  return s;
}

void AddGauge(Exposition& out, const std::string& name, const std::vector<Label>& labels,
              int64_t value) {
  if (Exposition::Family* f = out.Get(name, "gauge")) AddValue(*f, name, labels, value, 0);
}

}  // namespace

std::string TopologyNameOf(std::string_view topology_id) {
  // Nimbus makes ids as {name}-{counter}-{secs}.
  std::string_view rest = topology_id;
  for (int part = 0; part < 2; ++part) {
    const size_t dash = rest.rfind('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == rest.size()) {
      return std::string(topology_id);
    }
    for (char c : rest.substr(dash + 1)) {
      if (c < '0' || c > '9') return std::string(topology_id);
    }
    rest = rest.substr(0, dash);
  }
  return std::string(rest);
}

std::string RenderSupervisorMetrics(const SupervisorMetricsView& view) {
  Exposition out;
  const std::vector<Label> who = {{"supervisor_id", view.supervisor_id}, {"host", view.host}};
  std::vector<Label> info = who;
  info.emplace_back("version", view.version);
  AddGauge(out, "tempest_supervisor_info", info, 1);
  AddGauge(out, "tempest_supervisor_uptime_seconds", {}, view.uptime_secs);
  AddGauge(out, "tempest_supervisor_slots_offered", who, view.slots_offered);
  AddGauge(out, "tempest_supervisor_slots_used", who, view.slots_used);
  AddGauge(out, "tempest_supervisor_workers_running", {},
           static_cast<int64_t>(view.workers.size()));
  for (const core::MetricSample& s : view.own) AddRegistrySample(out, s, {});
  for (const WorkerMetricsSource& w : view.workers) {
    if (w.beat == nullptr) continue;
    const std::string port = absl::StrCat(w.port);
    // As nimbus labels a topology: its id and its name.
    const std::string name = TopologyNameOf(w.topology_id);
    const std::vector<Label> slot = {
        {"topology_id", w.topology_id}, {"topology", name}, {"port", port}};
    // Workers label their topology-wide series with topology=<id>.
    const std::vector<Label> redundant = {{"topology", w.topology_id}};
    AddGauge(out, "tempest_supervisor_worker_heartbeat_age_seconds", slot,
             std::max<int64_t>(0, view.now_secs - w.beat->time_secs()));
    for (const v1::MetricPoint& p : w.beat->local_metrics()) {
      AddRegistrySample(out, SampleOf(p), slot, redundant);
    }
  }
  return out.Render();
}

}  // namespace tempest::supervisor
