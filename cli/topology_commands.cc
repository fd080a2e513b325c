// Client verbs that talk to nimbus over its REST API: `submit`, `list`,
// `kill`, `activate`, `deactivate`, `rebalance`.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/nimbus_client.h"
#include "cli/topology_submit.h"
#include "common/api/component_registry.h"
#include "common/core/flux/flux_loader.h"
#include "common/core/log_text.h"
#include "common/core/status_macros.h"
#include "common/core/topology/topology_resources.h"
#include "common/os/privileges.h"
#include "nimbus/topology_store.h"

namespace tempest::cli {
namespace {

using json = nlohmann::json;

// Upper bounds of the counts a user gives (workers, executors per component).
constexpr int kMaxParallelism = 100000;

}  // namespace

// Polls every 500 ms until `poll` says done, fails, or `timeout` passes. On
// a terminal the progress text is shown on one stderr line that rewrites
// itself; otherwise the wait is silent (scripts read the exit code).
absl::Status WaitWithProgress(std::chrono::seconds timeout,
                              const std::function<absl::StatusOr<WaitPoll>()>& poll) {
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  const auto start = std::chrono::steady_clock::now();
  std::string last;
  for (;;) {
    absl::StatusOr<WaitPoll> p = poll();
    if (!p.ok()) {
      if (tty && !last.empty()) std::fprintf(stderr, "\n");
      return p.status();
    }
    const int64_t elapsed = std::chrono::duration_cast<std::chrono::seconds>(
                                std::chrono::steady_clock::now() - start)
                                .count();
    if (tty) {
      const std::string line = absl::StrCat(p->progress, " (", elapsed, " s)");
      std::fprintf(stderr, "\r%-78s", line.c_str());
      std::fflush(stderr);
      last = line;
    }
    if (p->done) {
      if (tty) std::fprintf(stderr, "\n");
      return absl::OkStatus();
    }
    if (std::chrono::steady_clock::now() - start >= timeout) {
      if (tty) std::fprintf(stderr, "\n");
      return absl::DeadlineExceededError(
          absl::StrCat("gave up after ", timeout.count(), " s: ", p->progress));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

namespace {

// A worker that failed this many times in a row is not going to start by
// itself: `submit --until-running` stops waiting for it.
constexpr int64_t kRepeatedFailures = 3;

// Why the topology cannot run, from the supervisors' records of its failed
// workers (the topology page's workerFailures); "" while none keeps failing.
std::string RepeatedFailure(const json& page) {
  for (const json& f : page.value("workerFailures", json::array())) {
    if (f.value("state", "") != "failing" ||
        f.value("consecutiveFailures", int64_t{0}) < kRepeatedFailures) {
      continue;
    }
    const json output = f.value("lastOutput", json::array());
    std::string reason = absl::StrCat(
        "its worker on ", f.value("host", ""), " (supervisor ", f.value("supervisorId", ""),
        ", port ", f.value("port", 0), ") failed ", f.value("consecutiveFailures", int64_t{0}),
        " times in a row: ", f.value("status", ""));
    if (!output.empty() && output.back().is_string()) {
      absl::StrAppend(&reason, "; last output: ", output.back().get<std::string>());
    }
    return reason;
  }
  return "";
}

// Running: every executor is in a worker whose heartbeat reached nimbus in
// the last few seconds. While it is not, the cluster summary says whether
// there is a free slot at all.
absl::StatusOr<WaitPoll> PollRunning(const NimbusClient& client, const std::string& id) {
  ASSIGN_OR_RETURN(const json t, client.Get(absl::StrCat("/api/v1/topology/", id)));
  RunningProgress progress;
  progress.executors_total = t.value("executorsTotal", 0);
  const json workers = t.value("workers", json::array());
  progress.workers_assigned = workers.is_array() ? static_cast<int>(workers.size()) : 0;
  for (const json& w : workers) {
    if (w.value("lastBeatSecsAgo", int64_t{1000}) > 5) continue;
    ++progress.workers_beating;
    progress.executors_running += static_cast<int>(w.value("executors", json::array()).size());
  }
  WaitPoll p;
  p.done = progress.executors_total > 0 &&
           progress.executors_running >= progress.executors_total;
  if (p.done) return p;
  if (std::string failure = RepeatedFailure(t); !failure.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(id, " is not running: ", failure));
  }
  if (progress.workers_assigned == 0) {
    // Unassigned: say whether the cluster has room. A failed read only
    // loses the detail.
    absl::StatusOr<json> cluster = client.Get("/api/v1/cluster/summary");
    if (cluster.ok()) {
      progress.supervisors = cluster->value("supervisors", -1);
      progress.slots_total = cluster->value("slotsTotal", -1);
      progress.slots_free = cluster->value("slotsFree", -1);
    }
  }
  p.progress = RunningWaitReason(progress);
  return p;
}

}  // namespace

// `submit --until-running`: polls every 500 ms for at most `timeout`,
// printing why it waits each time the reason changes (one line each, on
// any stderr, so logs of scripts say it too).
absl::Status WaitUntilRunning(const NimbusClient& client, const std::string& id,
                              std::chrono::seconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  std::string last;
  for (;;) {
    ASSIGN_OR_RETURN(const WaitPoll p, PollRunning(client, id));
    if (p.done) return absl::OkStatus();
    if (p.progress != last) {
      std::fprintf(stderr, "tempest: %s: %s\n", id.c_str(), p.progress.c_str());
      std::fflush(stderr);
      last = p.progress;
    }
    if (std::chrono::steady_clock::now() - start >= timeout) {
      return absl::DeadlineExceededError(absl::StrCat(
          id, " is not running after ", timeout.count(),
          " s (--until-running-timeout): ", absl::StripSuffix(p.progress, "; waiting")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// POSTs the submission, waiting up to `wait` for a nimbus that is still
// starting (not listening yet, or not the leader yet); says so once.
absl::StatusOr<json> PostWhenNimbusReady(const NimbusClient& client, const std::string& path,
                                         const json& body, std::chrono::seconds wait) {
  const auto start = std::chrono::steady_clock::now();
  bool said = false;
  for (;;) {
    absl::StatusOr<json> reply = client.Post(path, body);
    if (reply.ok() || !NimbusClient::NotReady(reply.status())) return reply;
    if (std::chrono::steady_clock::now() - start >= wait) {
      if (!said) return reply;  // --wait-for-nimbus 0: the first answer is final
      return absl::UnavailableError(absl::StrCat("nimbus at ", client.address(),
                                                 " is not ready after ", wait.count(),
                                                 " s (--wait-for-nimbus): ",
                                                 reply.status().message()));
    }
    if (!said) {
      std::fprintf(stderr, "tempest: waiting up to %lld s for nimbus at %s (%s)\n",
                   static_cast<long long>(wait.count()), client.address().c_str(),
                   std::string(reply.status().message()).c_str());
      std::fflush(stderr);
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// Checks the submission here first, with the same code nimbus runs, so
// mistakes are reported with file:line of the real files before anything is
// sent; then merges the Flux `includes` into the text. Nimbus reads no file
// for a submission, so what it gets must stand alone.
absl::Status MakeSelfContained(const SubmitOptions& opts, nimbus::SubmitRequest& request) {
  api::ComponentRegistry& registry = api::ComponentRegistry::Global();
  RETURN_IF_ERROR(RegisterBuiltins(registry));
  core::FluxOptions flux;
  flux.filter_file = opts.filter;
  flux.env_filter = opts.env_filter;
  flux.read_includes = true;
  // As `tempest local`: resource includes from --resources, else the file's folder.
  const std::filesystem::path topology = std::filesystem::absolute(opts.topology);
  flux.resource_dirs.push_back(opts.resources.empty()
                                   ? topology.parent_path().string()
                                   : std::filesystem::absolute(opts.resources).string());
  RETURN_IF_ERROR(nimbus::TopologyStore::Prepare(request, registry, 0, &flux));
  ASSIGN_OR_RETURN(std::string merged,
                   core::FluxLoader(flux).InlineIncludes(request.flux_text, opts.topology));
  if (merged == request.flux_text) return absl::OkStatus();
  request.flux_text = std::move(merged);
  // What nimbus will load: the merged text, reading nothing.
  absl::StatusOr<v1::StormBase> prepared = nimbus::TopologyStore::Prepare(request, registry, 0);
  if (!prepared.ok()) {
    return absl::InternalError(absl::StrCat("the topology with its includes merged in does not "
                                            "load as the original does: ",
                                            prepared.status().message()));
  }
  return absl::OkStatus();
}

// The submission as read here: the file's text (its placeholders resolved
// when --filter or --env-filter asks), the --resources files and the -c
// overrides. Returns 0, or the exit code after saying what is wrong.
int ReadSubmitRequest(const SubmitOptions& opts, const GlobalOptions& globals,
                      nimbus::SubmitRequest& request) {
  std::ifstream in(opts.topology, std::ios::binary);
  if (!in) return Fail(absl::StrCat("cannot read ", opts.topology));
  std::stringstream text;
  text << in.rdbuf();
  request.flux_text = text.str();
  if (!opts.filter.empty() || opts.env_filter) {
    // Nimbus and the workers load the text as stored, so the placeholders
    // are resolved here, on the submitting machine, as Flux does.
    core::FluxOptions flux;
    flux.filter_file = opts.filter;
    flux.env_filter = opts.env_filter;
    absl::StatusOr<std::string> filtered =
        core::FluxLoader(flux).ApplyFilters(request.flux_text, opts.topology);
    if (!filtered.ok()) return Fail(std::string(filtered.status().message()));
    request.flux_text = *std::move(filtered);
  }
  request.file_name = opts.topology;
  request.name = opts.name;
  request.inactive = opts.inactive;
  if (!opts.resources.empty()) {
    absl::StatusOr<v1::TopologyResources> files = core::CollectResources(opts.resources);
    if (!files.ok()) return Fail(std::string(files.status().message()));
    request.resources = *std::move(files);
  }
  for (const std::string& kv : globals.overrides) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(absl::StrCat("-c expects key=value, not '", kv, "'"), 2);
    }
    request.config_overrides[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return 0;
}

// The body of POST /api/v1/topology for `request`.
json SubmitBody(const SubmitOptions& opts, const nimbus::SubmitRequest& request) {
  json body = {{"flux", request.flux_text},
               {"fileName", std::filesystem::path(opts.topology).filename().string()},
               {"inactive", opts.inactive},
               {"owner", os::CurrentUserName()}};
  if (!opts.name.empty()) body["name"] = opts.name;
  json config = json::object();
  for (const auto& [key, value] : request.config_overrides) {
    // The server parses each value as YAML, like -c does; send it as a
    // JSON string holding the text unless it is valid JSON already.
    json parsed = json::parse(value, nullptr, /*allow_exceptions=*/false);
    config[key] = parsed.is_discarded() ? json(value) : parsed;
  }
  body["config"] = config;
  if (request.resources.files_size() > 0) {
    json files = json::array();
    for (const v1::ResourceFile& f : request.resources.files()) {
      files.push_back(json{{"path", f.path()},
                           {"data", absl::Base64Escape(f.data())},
                           {"executable", f.executable()}});
    }
    body["resources"] = std::move(files);
  }
  return body;
}

namespace {

int RunSubmit(const SubmitOptions& opts, const GlobalOptions& globals) {
  nimbus::SubmitRequest request;
  if (int rc = ReadSubmitRequest(opts, globals, request); rc != 0) return rc;
  if (absl::Status s = MakeSelfContained(opts, request); !s.ok()) {
    return Fail(std::string(s.message()));
  }

  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  absl::StatusOr<json> reply =
      PostWhenNimbusReady(*client, "/api/v1/topology", SubmitBody(opts, request),
                          std::chrono::seconds(opts.wait_for_nimbus_secs));
  if (!reply.ok()) return Fail(std::string(reply.status().message()));
  const std::string id = reply->value("topologyId", "");
  std::printf("%s\n", id.c_str());
  std::fflush(stdout);
  if (opts.until_running) {
    absl::Status s =
        WaitUntilRunning(*client, id, std::chrono::seconds(opts.until_running_timeout_secs));
    if (!s.ok()) return Fail(std::string(s.message()));
  }
  return 0;
}

int RunListWorkers(bool as_json, const NimbusClient& client, const json& topologies);

// "~ NAME: rebalancing to assignment v3: 1 of 2 workers run it (kept 4,
// moved 0, started 2, stopped 1 executors)" while some assigned worker does
// not run the topology's newest assignment yet; empty otherwise.
std::string ChangeInProgressLine(const json& t) {
  const int applying = t.value("workersApplying", 0);
  const int total = t.value("workersTotal", 0);
  if (applying <= 0 || total <= 0) return "";
  const json& change = t.contains("lastAssignmentChange") && t["lastAssignmentChange"].is_object()
                           ? t["lastAssignmentChange"]
                           : json::object();
  const std::string reason = change.value("reason", "");
  const char* doing = reason == "first"       ? "starting on"
                      : reason == "rebalance" ? "rebalancing to"
                                              : "moving executors to";
  std::string line = absl::StrCat("~ ", t.value("name", ""), ": ", doing, " assignment v",
                                  t.value("assignmentVersion", int64_t{0}), ": ",
                                  total - applying, " of ", total, " workers run it");
  if (!change.empty()) {
    absl::StrAppend(&line, " (kept ", change.value("kept", 0), ", moved ", change.value("moved", 0),
                    ", started ", change.value("started", 0), ", stopped ",
                    change.value("stopped", 0), " executors)");
  }
  return line;
}

int RunList(bool as_json, bool workers, const GlobalOptions& globals) {
  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  absl::StatusOr<json> reply = client->Get("/api/v1/topology/summary");
  if (!reply.ok()) return Fail(std::string(reply.status().message()));
  const json topologies = reply->value("topologies", json::array());
  if (workers) return RunListWorkers(as_json, *client, topologies);
  if (as_json) {
    std::printf("%s\n", json{{"topologies", topologies}}.dump().c_str());
    return 0;
  }
  if (topologies.empty()) {
    std::printf("No topologies running.\n");
    return 0;
  }
  // Columns sized to their content, so long names keep the table aligned.
  std::vector<std::vector<std::string>> rows;
  for (const json& t : topologies) {
    rows.push_back({t.value("name", ""), t.value("status", ""),
                    absl::StrCat(t.value("tasksTotal", 0)), absl::StrCat(t.value("workersTotal", 0)),
                    absl::StrCat(t.value("uptimeSeconds", int64_t{0})), t.value("id", ""),
                    t.value("owner", "")});
  }
  std::fputs(FormatTable({"Topology_name", "Status", "Num_tasks", "Num_workers", "Uptime_secs",
                          "Topology_Id", "Owner"},
                         rows)
                 .c_str(),
             stdout);
  // A crash loop is what an operator must not miss: one line per topology
  // whose supervisors say a worker keeps failing.
  for (const json& t : topologies) {
    const int failing = t.value("failingWorkers", 0);
    if (failing <= 0) continue;
    std::printf("! %s: %d %s failing, %lld restarts (tempest list --workers, tempest get-errors)\n",
                t.value("name", "").c_str(), failing, failing == 1 ? "worker" : "workers",
                static_cast<long long>(t.value("workerRestarts", int64_t{0})));
  }
  // A rebalance or a move in progress, until every worker runs it.
  for (const json& t : topologies) {
    const std::string line = ChangeInProgressLine(t);
    if (!line.empty()) std::printf("%s\n", line.c_str());
  }
  return 0;
}

// One worker slot of a topology as `list --workers` shows it.
struct WorkerRow {
  std::string host, supervisor, uptime = "-", state = "starting";
  int64_t pid = 0;  // 0: no worker beats on the slot
  int64_t restarts = 0;
  int64_t assignment_version = 0;  // what the worker runs; 0: unknown
};

// "v3", or "v2 (applying v3)" while the worker has not taken the
// topology's newest assignment yet (ADR 0031); "-" when unknown.
std::string VersionCell(int64_t worker, int64_t topology) {
  if (worker <= 0) return "-";
  if (topology > worker) return absl::StrCat("v", worker, " (applying v", topology, ")");
  return absl::StrCat("v", worker);
}

// The topology page's slots: every assigned one (executorStats), the beating
// workers' pids and uptimes (workers) and the supervisors' records of the
// slots' failed workers (workerFailures).
std::map<std::pair<std::string, int>, WorkerRow> WorkerRowsOf(const json& page) {
  std::map<std::pair<std::string, int>, WorkerRow> rows;
  for (const json& e : page.value("executorStats", json::array())) {
    if (!e.contains("port")) continue;  // not placed yet
    WorkerRow& row = rows[{e.value("supervisorId", ""), e.value("port", 0)}];
    row.supervisor = e.value("supervisorId", "");
    row.host = e.value("host", "");
  }
  for (const json& w : page.value("workers", json::array())) {
    auto it = rows.find({w.value("supervisorId", ""), w.value("port", 0)});
    if (it == rows.end()) continue;  // a stale beat of a slot it no longer has
    it->second.pid = w.value("pid", int64_t{0});
    it->second.uptime = w.value("uptime", "-");
    it->second.restarts = w.value("restarts", int64_t{0});
    it->second.assignment_version = w.value("assignmentVersion", int64_t{0});
    it->second.state = "running";
  }
  for (const json& f : page.value("workerFailures", json::array())) {
    auto it = rows.find({f.value("supervisorId", ""), f.value("port", 0)});
    if (it == rows.end()) continue;
    it->second.restarts = std::max(it->second.restarts, f.value("restarts", int64_t{0}));
    if (f.value("state", "") == "failing") {
      it->second.state = absl::StrCat("failing: ", f.value("reason", ""));
      it->second.pid = 0;
      it->second.uptime = "-";
    }
  }
  return rows;
}

// `list --workers`: one row per worker slot of every topology.
int RunListWorkers(bool as_json, const NimbusClient& client, const json& topologies) {
  json out = json::array();
  std::vector<std::vector<std::string>> rows;
  for (const json& t : topologies) {
    const std::string id = t.value("id", "");
    absl::StatusOr<json> page = client.Get(absl::StrCat("/api/v1/topology/", id));
    if (absl::IsNotFound(page.status())) continue;  // removed since the summary
    if (!page.ok()) return Fail(std::string(page.status().message()));
    const int64_t version = page->value("assignmentVersion", int64_t{0});
    for (const auto& [slot, w] : WorkerRowsOf(*page)) {
      out.push_back(json{{"topology", t.value("name", "")}, {"topologyId", id},
                         {"host", w.host}, {"supervisorId", w.supervisor},
                         {"port", slot.second}, {"pid", w.pid > 0 ? json(w.pid) : json(nullptr)},
                         {"uptime", w.uptime}, {"restarts", w.restarts}, {"state", w.state},
                         {"assignmentVersion", w.assignment_version > 0
                                                   ? json(w.assignment_version)
                                                   : json(nullptr)}});
      // The table keeps a line per worker; --json has the whole state.
      constexpr size_t kStateChars = 100;
      std::string state = w.state.size() > kStateChars
                              ? absl::StrCat(w.state.substr(0, kStateChars - 3), "...")
                              : w.state;
      rows.push_back({t.value("name", ""), w.host, w.supervisor.substr(0, 8),
                      absl::StrCat(slot.second), w.pid > 0 ? absl::StrCat(w.pid) : "-", w.uptime,
                      absl::StrCat(w.restarts), VersionCell(w.assignment_version, version),
                      std::move(state)});
    }
  }
  if (as_json) {
    std::printf("%s\n", json{{"workers", out}}.dump(-1, ' ', false,
                                                    json::error_handler_t::replace).c_str());
    return 0;
  }
  if (rows.empty()) {
    std::printf("No workers assigned.\n");
    return 0;
  }
  std::fputs(FormatTable({"Topology_name", "Host", "Supervisor", "Port", "Pid", "Uptime",
                          "Restarts", "Assignment", "State"},
                         rows)
                 .c_str(),
             stdout);
  return 0;
}

// kill / activate / deactivate NAME.
int RunTransition(const std::string& verb, const std::string& name, int wait_secs,
                  bool until_removed, const GlobalOptions& globals) {
  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  absl::StatusOr<std::string> id = client->IdOf(name);
  if (!id.ok()) return Fail(std::string(id.status().message()));
  std::string path = absl::StrCat("/api/v1/topology/", *id, "/", verb);
  if (verb == "kill" && wait_secs >= 0) absl::StrAppend(&path, "/", wait_secs);
  absl::StatusOr<json> reply = client->Post(path, json::object());
  if (!reply.ok()) return Fail(std::string(reply.status().message()));
  const char* done = verb == "kill" ? "Killed" : verb == "activate" ? "Activated" : "Deactivated";
  std::printf("%s topology: %s\n", done, name.c_str());
  std::fflush(stdout);
  if (until_removed) {
    // The wait, plus time for nimbus's monitor round and the workers' clean
    // shutdown.
    const auto timeout = std::chrono::seconds(std::max(wait_secs, 0) + 120);
    absl::Status s = WaitWithProgress(timeout, [&]() -> absl::StatusOr<WaitPoll> {
      absl::StatusOr<json> t = client->Get(absl::StrCat("/api/v1/topology/", *id));
      WaitPoll p;
      if (absl::IsNotFound(t.status())) {
        p.done = true;
        p.progress = absl::StrCat(name, ": removed");
        return p;
      }
      RETURN_IF_ERROR(t.status());
      p.progress = absl::StrCat(
          name, ": KILLED, removed in ", t->value("removeInSeconds", 0), " s; ",
          core::Counted(static_cast<int64_t>(t->value("workers", json::array()).size()), "worker"),
          " still beating");
      return p;
    });
    if (!s.ok()) return Fail(std::string(s.message()));
  }
  return 0;
}

// Storm's `get-errors NAME`: each component's latest error, as one JSON
// document {"Topology Name": NAME, "Comp-Errors": {component: message}};
// components without errors are left out.
int RunGetErrors(const std::string& name, const GlobalOptions& globals) {
  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  absl::StatusOr<std::string> id = client->IdOf(name);
  if (!id.ok()) return Fail(std::string(id.status().message()));
  absl::StatusOr<json> t = client->Get(absl::StrCat("/api/v1/topology/", *id));
  if (!t.ok()) return Fail(std::string(t.status().message()));
  json errors = json::object();
  for (const char* kind : {"spouts", "bolts"}) {
    for (const json& c : t->value(kind, json::array())) {
      const std::string error = c.value("lastError", "");
      const std::string component = c.value(std::string(kind) == "spouts" ? "spoutId" : "boltId", "");
      if (!error.empty() && !component.empty()) errors[component] = error;
    }
  }
  const json out = {{"Topology Name", name}, {"Comp-Errors", errors}};
  std::printf("%s\n", out.dump(2, ' ', false, json::error_handler_t::replace).c_str());
  return 0;
}

struct RebalanceArgs {
  std::string name;
  int wait_secs = -1;
  int num_workers = -1;
  std::vector<std::string> executors;  // COMPONENT=PARALLELISM
  std::string resources;               // Storm 2's -r JSON (not applied here)
  std::string topology_conf;           // Storm 2's -t JSON (not applied here)
};

// rebalance NAME [-w SECS] [-n WORKERS] [-e COMPONENT=PARALLELISM]...
int RunRebalance(const RebalanceArgs& args, const GlobalOptions& globals) {
  json options = json::object();
  if (args.num_workers >= 0) options["numWorkers"] = args.num_workers;
  json executors = json::object();
  for (const std::string& kv : args.executors) {
    const size_t eq = kv.find('=');
    int n = 0;
    if (eq == std::string::npos || eq == 0 || !absl::SimpleAtoi(kv.substr(eq + 1), &n)) {
      return Fail(absl::StrCat("-e expects COMPONENT=PARALLELISM, not '", kv, "'"), 2);
    }
    if (n < 1 || n > kMaxParallelism) {
      return Fail(absl::StrCat("-e ", kv.substr(0, eq), ": ",
                               RangeMessage(1, kMaxParallelism, kv.substr(eq + 1))),
                  2);
    }
    executors[kv.substr(0, eq)] = n;
  }
  if (!executors.empty()) options["executors"] = executors;
  absl::StatusOr<std::vector<std::string>> notes =
      StormRebalanceOverrideNotes(args.resources, args.topology_conf);
  if (!notes.ok()) return Fail(std::string(notes.status().message()), 2);
  for (const std::string& note : *notes) {
    std::fprintf(stderr, "tempest: note: %s\n", note.c_str());
  }
  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  absl::StatusOr<std::string> id = client->IdOf(args.name);
  if (!id.ok()) return Fail(std::string(id.status().message()));
  std::string path = absl::StrCat("/api/v1/topology/", *id, "/rebalance");
  if (args.wait_secs >= 0) absl::StrAppend(&path, "/", args.wait_secs);
  absl::StatusOr<json> reply = client->Post(path, json{{"rebalanceOptions", options}});
  if (!reply.ok()) return Fail(std::string(reply.status().message()));
  std::printf("Rebalancing topology: %s\n", args.name.c_str());
  return 0;
}

// rebalance NAME [-w SECS] [-n WORKERS] [-e COMPONENT=PARALLELISM]... [-r JSON] [-t JSON]
void RegisterRebalance(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto rebalance_args = std::make_shared<RebalanceArgs>();
  CLI::App* rebalance = app.add_subcommand(
      "rebalance",
      "Rebalance a topology: REBALANCING now; after the wait (default: its message timeout) "
      "nimbus applies the new counts and reschedules it");
  rebalance->add_option("name", rebalance_args->name, "topology name")->required();
  rebalance->add_option("-w,--wait,--wait-time-secs", rebalance_args->wait_secs,
                        "seconds before rescheduling (default: its topology.message.timeout.secs)")
      ->check(Bounded(0, kMaxSeconds))
      ->default_str("");
  rebalance->add_option("-n,--num-workers", rebalance_args->num_workers,
                        "new number of workers (default: unchanged)")
      ->check(Bounded(1, kMaxParallelism))
      ->default_str("");
  rebalance->add_option("-e,--executor", rebalance_args->executors,
                        "COMPONENT=PARALLELISM: new executor count (repeatable)");
  rebalance->add_option("-r,--resources", rebalance_args->resources,
                        "Storm 2's component resources JSON; accepted, not applied (Tempest "
                        "schedules by worker slots)");
  rebalance->add_option("-t,--topology-conf", rebalance_args->topology_conf,
                        "Storm 2's topology config overrides JSON; accepted, not applied (resubmit "
                        "with -c key=value instead)");
  set.Add(rebalance, [rebalance_args, &globals] { return RunRebalance(*rebalance_args, globals); });
}

// submit FLUX.yaml [--name N] [--inactive] [--filter PROPS] [--env-filter]
// [--resources DIR] [--until-running] [--until-running-timeout S] [--wait-for-nimbus S]
void RegisterSubmit(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto submit_opts = std::make_shared<SubmitOptions>();
  CLI::App* submit = app.add_subcommand(
      "submit", "Validate a Flux topology locally, then submit it to nimbus; prints its id");
  submit->add_option("topology", submit_opts->topology, "Flux YAML file")
      ->required()
      ->check(CLI::ExistingFile);
  submit->add_option("--name", submit_opts->name, "topology name (default: the Flux name)");
  submit->add_flag("--inactive", submit_opts->inactive, "submit as INACTIVE");
  submit->add_option("--filter", submit_opts->filter,
                     "Java .properties file whose entries replace ${key} in the Flux file")
      ->check(CLI::ExistingFile);
  submit->add_flag("--env-filter", submit_opts->env_filter,
                   "replace ${ENV-NAME} with environment variable NAME");
  submit->add_option("--resources", submit_opts->resources,
                     "directory shipped to every worker (multilang scripts run there)")
      ->check(CLI::ExistingDirectory);
  submit->add_flag("--until-running", submit_opts->until_running,
                   "wait until every executor runs in a worker, saying why while it waits");
  submit->add_option("--until-running-timeout", submit_opts->until_running_timeout_secs,
                     "seconds --until-running waits before it fails")
      ->check(Bounded(1, kMaxSeconds));
  submit->add_option("--wait-for-nimbus", submit_opts->wait_for_nimbus_secs,
                     "seconds to wait for a nimbus that is starting (not listening or not yet "
                     "the leader); 0: fail at once")
      ->check(Bounded(0, kMaxSeconds));
  set.Add(submit, [submit_opts, &globals] { return RunSubmit(*submit_opts, globals); });
}

// list [--json] [--workers]
void RegisterList(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = app.add_subcommand("list", "List the topologies nimbus knows");
  list->add_flag("--json", *list_json, "one JSON document on stdout");
  auto list_workers = std::make_shared<bool>(false);
  list->add_flag("--workers", *list_workers,
                 "one row per worker: host, slot port, pid, uptime, restarts and state");
  set.Add(list, [list_json, list_workers, &globals] {
    return RunList(*list_json, *list_workers, globals);
  });
}

// kill NAME [-w SECS] [--until-removed]
void RegisterKill(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto kill_name = std::make_shared<std::string>();
  auto kill_wait = std::make_shared<int>(-1);
  CLI::App* kill = app.add_subcommand(
      "kill", "Kill a topology: KILLED now, removed after the wait (default: its message timeout)");
  kill->add_option("name", *kill_name, "topology name")->required();
  kill->add_option("-w,--wait,--wait-time-secs", *kill_wait,
                   "seconds before nimbus removes it (default: its topology.message.timeout.secs)")
      ->check(Bounded(0, kMaxSeconds))
      ->default_str("");
  auto kill_until_removed = std::make_shared<bool>(false);
  kill->add_flag("--until-removed", *kill_until_removed,
                 "wait until nimbus has removed it and its workers stopped (progress on a terminal)");
  set.Add(kill, [kill_name, kill_wait, kill_until_removed, &globals] {
    return RunTransition("kill", *kill_name, *kill_wait, *kill_until_removed, globals);
  });
}

}  // namespace

// In this order, which is the order `tempest --help` lists them in.
void RegisterTopologyCommands(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  RegisterSubmit(app, set, globals);
  RegisterList(app, set, globals);
  RegisterKill(app, set, globals);
  RegisterRebalance(app, set, globals);

  auto errors_name = std::make_shared<std::string>();
  CLI::App* get_errors = app.add_subcommand(
      "get-errors", "Print each component's latest error (Storm's get-errors; JSON)");
  get_errors->add_option("name", *errors_name, "topology name")->required();
  set.Add(get_errors, [errors_name, &globals] { return RunGetErrors(*errors_name, globals); });

  for (const char* verb : {"activate", "deactivate"}) {
    auto name = std::make_shared<std::string>();
    CLI::App* sub = app.add_subcommand(
        verb, std::string(verb) == "activate" ? "Activate a topology (status ACTIVE)"
                                              : "Deactivate a topology (status INACTIVE)");
    sub->add_option("name", *name, "topology name")->required();
    const std::string v = verb;
    set.Add(sub, [v, name, &globals] { return RunTransition(v, *name, -1, false, globals); });
  }
}

}  // namespace tempest::cli
