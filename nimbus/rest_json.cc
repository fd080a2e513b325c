#include "nimbus/rest_json.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nimbus/topology_state.h"

namespace tempest::nimbus {

using json = nlohmann::json;

bool IsSystemId(std::string_view id) { return id.starts_with("__"); }

std::string LatencyMs(int64_t us) {
  return absl::StrFormat("%.3f", static_cast<double>(us) / 1000.0);
}

std::string MeanMs(int64_t sum_us, int64_t samples) {
  return absl::StrFormat("%.3f",
                         samples > 0 ? static_cast<double>(sum_us) / samples / 1000.0 : 0.0);
}

namespace {
int FailingWorkers(const TopologyView& view) {
  int n = 0;
  for (const StoredWorkerFailure* f : CurrentFailures(view)) n += f->failing ? 1 : 0;
  return n;
}

// Assigned slots whose worker does not report running the newest
// assignment yet: no beat (starting or restarting) or an older version.
int WorkersApplying(const TopologyView& view) {
  if (!view.assignment.has_value()) return 0;
  std::set<std::pair<std::string, int>> behind;  // supervisor id, port
  for (const auto& e : view.assignment->executors()) behind.insert({e.node(), e.port()});
  for (const StoredBeat* b : CurrentBeats(view)) {
    if (b->beat.assignment_version() >= view.assignment->version()) {
      behind.erase({b->slot.node, b->slot.port});
    }
  }
  return static_cast<int>(behind.size());
}

// assignmentVersion (0 before the first assignment), workersApplying, and
// lastAssignmentChange: what its last write changed (null without one).
void AddAssignmentFields(const TopologyView& view, json& body) {
  body["assignmentVersion"] = view.assignment.has_value() ? view.assignment->version() : 0;
  body["workersApplying"] = WorkersApplying(view);
  if (!view.assignment.has_value() || !view.assignment->has_last_change()) {
    body["lastAssignmentChange"] = nullptr;
    return;
  }
  const v1::AssignmentChange& c = view.assignment->last_change();
  body["lastAssignmentChange"] = json{{"time", c.time_secs() * 1000},
                                      {"reason", c.reason()},
                                      {"kept", c.kept()},
                                      {"moved", c.moved()},
                                      {"started", c.started()},
                                      {"stopped", c.stopped()}};
}
}  // namespace

json TopologyTotalsJson(const TopologyView& view, int64_t now_secs) {
  const StoredTopology& t = view.topology;
  const std::optional<v1::Assignment>& assignment = view.assignment;
  const int64_t uptime = std::max<int64_t>(0, now_secs - t.base.launch_time_secs());
  const Totals totals = TotalsOf(CurrentBeats(view));
  const json all_time = {{"window", ":all-time"},
                         {"windowPretty", "All time"},
                         {"emitted", totals.emitted},
                         {"transferred", totals.transferred},
                         {"acked", totals.acked},
                         {"failed", totals.failed},
                         {"completeLatency", LatencyMs(totals.p99_us)},
                         {"completeLatencyP99Us", totals.p99_us}};
  json row{{"id", t.id},
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
              // Counted by the supervisors too: a worker that dies before
              // its first beat counts.
              {"workerRestarts", TopologyRestarts(view)},
              {"failingWorkers", FailingWorkers(view)},
              {"topologyStats", json::array({all_time})}};
  AddAssignmentFields(view, row);
  return row;
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

}  // namespace tempest::nimbus
