// Client verbs that talk to nimbus over its REST API: `submit`, `list`,
// `kill`, `activate`, `deactivate`, `rebalance`.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bolts/builtin_bolts.h"
#include "cli/commands.h"
#include "cli/nimbus_client.h"
#include "common/api/component_registry.h"
#include "common/core/flux_loader.h"
#include "common/core/topology_resources.h"
#include "nimbus/topology_store.h"
#include "spout/builtin_spouts.h"

namespace tempest::cli {
namespace {

using json = nlohmann::json;

struct SubmitOptions {
  std::string topology;
  std::string name;
  bool inactive = false;
  bool until_running = false;
  std::string resources;  // directory shipped to the workers
  std::string filter;     // --filter PROPS
  bool env_filter = false;
};

// What one poll of a long wait saw: whether the wait is over, and a progress
// text for the terminal.
struct WaitPoll {
  bool done = false;
  std::string progress;
};

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

// Running: every executor is in a worker whose heartbeat reached nimbus in
// the last few seconds.
absl::StatusOr<WaitPoll> PollRunning(const NimbusClient& client, const std::string& id) {
  absl::StatusOr<json> t = client.Get(absl::StrCat("/api/v1/topology/", id));
  if (!t.ok()) return t.status();
  const int total = t->value("executorsTotal", 0);
  int running = 0;
  int workers = 0;
  for (const json& w : t->value("workers", json::array())) {
    if (w.value("lastBeatSecsAgo", int64_t{1000}) > 5) continue;
    ++workers;
    running += static_cast<int>(w.value("executors", json::array()).size());
  }
  WaitPoll p;
  p.done = total > 0 && running >= total;
  p.progress = absl::StrCat(id, ": ", running, "/", total, " executors running in ", workers,
                            " workers");
  return p;
}

int RunSubmit(const SubmitOptions& opts, const GlobalOptions& globals) {
  std::ifstream in(opts.topology, std::ios::binary);
  if (!in) return Fail(absl::StrCat("cannot read ", opts.topology));
  std::stringstream text;
  text << in.rdbuf();

  nimbus::SubmitRequest request;
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
  // Validate here first, with the same code nimbus runs, so mistakes are
  // reported with file:line before anything is sent.
  api::ComponentRegistry& registry = api::ComponentRegistry::Global();
  (void)spout::RegisterBuiltinSpouts(registry);
  (void)bolts::RegisterBuiltinBolts(registry);
  absl::StatusOr<v1::StormBase> prepared = nimbus::TopologyStore::Prepare(request, registry, 0);
  if (!prepared.ok()) return Fail(std::string(prepared.status().message()));

  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  json body = {{"flux", request.flux_text},
               {"fileName", std::filesystem::path(opts.topology).filename().string()},
               {"inactive", opts.inactive}};
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
  absl::StatusOr<json> reply = client->Post("/api/v1/topology", body);
  if (!reply.ok()) return Fail(std::string(reply.status().message()));
  const std::string id = reply->value("topologyId", "");
  std::printf("%s\n", id.c_str());
  std::fflush(stdout);
  if (opts.until_running) {
    absl::Status s = WaitWithProgress(std::chrono::seconds(180),
                                      [&] { return PollRunning(*client, id); });
    if (!s.ok()) return Fail(std::string(s.message()));
  }
  return 0;
}

int RunList(bool as_json, const GlobalOptions& globals) {
  absl::StatusOr<NimbusClient> client = NimbusClient::FromGlobals(globals);
  if (!client.ok()) return Fail(std::string(client.status().message()), 2);
  absl::StatusOr<json> reply = client->Get("/api/v1/topology/summary");
  if (!reply.ok()) return Fail(std::string(reply.status().message()));
  const json topologies = reply->value("topologies", json::array());
  if (as_json) {
    std::printf("%s\n", json{{"topologies", topologies}}.dump().c_str());
    return 0;
  }
  if (topologies.empty()) {
    std::printf("No topologies running.\n");
    return 0;
  }
  const char* kFormat = "%-24s %-12s %-10s %-12s %-12s %s\n";
  std::printf(kFormat, "Topology_name", "Status", "Num_tasks", "Num_workers", "Uptime_secs",
              "Topology_Id");
  std::printf("%s\n", std::string(100, '-').c_str());
  for (const json& t : topologies) {
    std::printf(kFormat, t.value("name", "").c_str(), t.value("status", "").c_str(),
                absl::StrCat(t.value("tasksTotal", 0)).c_str(),
                absl::StrCat(t.value("workersTotal", 0)).c_str(),
                absl::StrCat(t.value("uptimeSeconds", int64_t{0})).c_str(),
                t.value("id", "").c_str());
  }
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
      if (!t.ok()) return t.status();
      p.progress = absl::StrCat(name, ": KILLED, removed in ", t->value("removeInSeconds", 0),
                                " s; ", t->value("workers", json::array()).size(),
                                " workers still beating");
      return p;
    });
    if (!s.ok()) return Fail(std::string(s.message()));
  }
  return 0;
}

struct RebalanceArgs {
  std::string name;
  int wait_secs = -1;
  int num_workers = -1;
  std::vector<std::string> executors;  // COMPONENT=PARALLELISM
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
    executors[kv.substr(0, eq)] = n;
  }
  if (!executors.empty()) options["executors"] = executors;
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

}  // namespace

void RegisterTopologyCommands(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
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
                   "wait until every executor runs in a worker (progress on a terminal)");
  set.Add(submit, [submit_opts, &globals] { return RunSubmit(*submit_opts, globals); });

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = app.add_subcommand("list", "List the topologies nimbus knows");
  list->add_flag("--json", *list_json, "one JSON document on stdout");
  set.Add(list, [list_json, &globals] { return RunList(*list_json, globals); });

  auto kill_name = std::make_shared<std::string>();
  auto kill_wait = std::make_shared<int>(-1);
  CLI::App* kill = app.add_subcommand(
      "kill", "Kill a topology: KILLED now, removed after the wait (default: its message timeout)");
  kill->add_option("name", *kill_name, "topology name")->required();
  kill->add_option("-w,--wait", *kill_wait, "seconds before nimbus removes it")
      ->check(CLI::NonNegativeNumber);
  auto kill_until_removed = std::make_shared<bool>(false);
  kill->add_flag("--until-removed", *kill_until_removed,
                 "wait until nimbus has removed it and its workers stopped (progress on a terminal)");
  set.Add(kill, [kill_name, kill_wait, kill_until_removed, &globals] {
    return RunTransition("kill", *kill_name, *kill_wait, *kill_until_removed, globals);
  });

  auto rebalance_args = std::make_shared<RebalanceArgs>();
  CLI::App* rebalance = app.add_subcommand(
      "rebalance",
      "Rebalance a topology: REBALANCING now; after the wait (default: its message timeout) "
      "nimbus applies the new counts and reschedules it");
  rebalance->add_option("name", rebalance_args->name, "topology name")->required();
  rebalance->add_option("-w,--wait", rebalance_args->wait_secs, "seconds before rescheduling")
      ->check(CLI::NonNegativeNumber);
  rebalance->add_option("-n,--num-workers", rebalance_args->num_workers, "new number of workers")
      ->check(CLI::PositiveNumber);
  rebalance->add_option("-e,--executor", rebalance_args->executors,
                        "COMPONENT=PARALLELISM: new executor count (repeatable)");
  set.Add(rebalance, [rebalance_args, &globals] { return RunRebalance(*rebalance_args, globals); });

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
