// `tempest local TOPOLOGY.yaml`: runs a Flux topology in this process with a
// worker::LocalCluster, printing a progress line every few seconds, and stops
// cleanly (deactivate, drain, close) after --duration, on SIGINT/SIGTERM, or
// with --until-complete once every spout is exhausted and nothing is pending.

#include <signal.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/zk_client_auth.h"
#include "common/api/component_registry.h"
#include "common/coord/cluster_zk_config.h"
#include "common/core/config/config_loader.h"
#include "common/core/flux/flux_loader.h"
#include "common/core/log_text.h"
#include "common/core/status_macros.h"
#include "worker/local_cluster.h"

namespace tempest::cli {
namespace {

struct LocalOptions {
  std::string topology;
  double duration_secs = 0;  // 0: no limit
  bool until_complete = false;
  std::string resources;
  std::string filter;
  bool env_filter = false;
};

constexpr auto kProgressInterval = std::chrono::seconds(5);

std::string Rate(int64_t delta, double secs) {
  const double r = secs > 0 ? static_cast<double>(delta) / secs : 0;
  if (r >= 1e6) return absl::StrFormat("%.2fM/s", r / 1e6);
  if (r >= 1e3) return absl::StrFormat("%.1fk/s", r / 1e3);
  return absl::StrFormat("%.0f/s", r);
}

void PrintProgress(double elapsed, const worker::LocalClusterStats& now,
                   const worker::LocalClusterStats& before, double interval) {
  std::printf(
      "[%7.1fs] spout-emitted=%lld (%s) acked=%lld (%s) failed=%lld pending=%lld "
      "complete-p99=%lldus errors=%lld\n",
      elapsed, static_cast<long long>(now.spout_emitted),
      Rate(now.spout_emitted - before.spout_emitted, interval).c_str(),
      static_cast<long long>(now.acked), Rate(now.acked - before.acked, interval).c_str(),
      static_cast<long long>(now.failed), static_cast<long long>(now.pending),
      static_cast<long long>(now.complete_latency_p99_us), static_cast<long long>(now.errors));
  std::fflush(stdout);
}


void Warn(const std::string& warning) {
  std::fprintf(stderr, "tempest: warning: %s\n", warning.c_str());
}

// A KafkaSpout keeping offsets in a ZooKeeper with digest ACLs (a `tempest
// dev` cluster's) gets the credentials the offsets verbs would find for
// storm.zookeeper.servers, unless the config names its own.
absl::Status AddClientZkCredentials(api::Config& config) {
  absl::StatusOr<coord::ClusterZkConfig> zk = coord::ClusterZkConfig::FromConfig(config);
  // Unusable ZooKeeper settings are the spout's to report, if it uses them.
  if (!zk.ok() || zk->client.auth.enabled()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const coord::ZkAuthConfig auth, ResolveClientZkAuth(config, zk->connect));
  if (auth.enabled()) {
    config.Set(coord::kZkAuthSchemeKey, auth.scheme);
    config.Set(coord::kZkAuthPayloadKey, auth.payload);
  }
  return absl::OkStatus();
}

// The topology with its effective config: Storm defaults, --config file,
// the topology's own config, then -c overrides (the command line wins).
// Returns 0, or the exit status of the failure it reported.
int LoadTopology(const LocalOptions& opts, const GlobalOptions& globals, core::TopologyDef& def) {
  api::Config config = core::ConfigLoader::Defaults();
  if (!globals.config_file.empty()) {
    absl::StatusOr<core::LoadedConfig> loaded = core::ConfigLoader::LoadFile(globals.config_file);
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
    for (const std::string& w : loaded->warnings) Warn(w);
    config = std::move(loaded->config);
  }

  core::FluxOptions flux;
  flux.filter_file = opts.filter;
  flux.env_filter = opts.env_filter;
  flux.read_includes = true;  // the user's own files, read with the user's rights
  const std::filesystem::path topology_path = std::filesystem::absolute(opts.topology);
  const std::string resources = opts.resources.empty()
                                    ? topology_path.parent_path().string()
                                    : std::filesystem::absolute(opts.resources).string();
  flux.resource_dirs.push_back(resources);
  absl::StatusOr<core::TopologyDef> loaded_def =
      core::FluxLoader(flux).LoadFile(topology_path.string());
  if (!loaded_def.ok()) return Fail(std::string(loaded_def.status().message()));
  for (const std::string& w : loaded_def->warnings) Warn(w);

  config.Merge(loaded_def->config);
  for (const std::string& kv : globals.overrides) {
    absl::StatusOr<std::string> warning = core::ConfigLoader::ApplyOverride(config, kv);
    if (!warning.ok()) return Fail(std::string(warning.status().message()), 2);
    if (!warning->empty()) Warn(*warning);
  }
  config.Set(api::kTempestResourcesDir, resources);
  if (absl::Status s = AddClientZkCredentials(config); !s.ok()) {
    return Fail(std::string(s.message()), 2);
  }
  def = *std::move(loaded_def);
  def.config = config;
  return 0;
}

// Progress lines every kProgressInterval since the last one.
struct Progress {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last = start;
  worker::LocalClusterStats last_stats;

  void Print(const worker::LocalClusterStats& stats, std::chrono::steady_clock::time_point now) {
    PrintProgress(std::chrono::duration<double>(now - start).count(), stats, last_stats,
                  std::chrono::duration<double>(now - last).count());
    last_stats = stats;
    last = now;
  }
};

// Runs until a stop signal, --until-complete or --duration; returns why it stopped.
std::string RunUntilStop(worker::LocalCluster& c, const LocalOptions& opts, Progress& progress) {
  for (;;) {
    if (int sig = WaitStopSignalFor(std::chrono::milliseconds(100)); sig != 0) {
      return sig == SIGINT ? "interrupted" : "terminated";
    }
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - progress.start).count();
    if (opts.until_complete && c.Finished()) return "complete";
    if (opts.duration_secs > 0 && elapsed >= opts.duration_secs) return "duration reached";
    if (now - progress.last >= kProgressInterval) progress.Print(c.Stats(), now);
  }
}

// How long closing may take after the wait for in-flight trees.
constexpr auto kDrainBound = std::chrono::seconds(10);

// The clean kill, on a thread of its own so that this one can bound it: a
// stop signal while stopping, or a drain that outlasts `wait` + kDrainBound
// (a bolt in a cycle keeps feeding itself), ends the process at once with
// one error line. Sinks may then not have written their reports.
absl::Status BoundedKill(worker::LocalCluster& c, std::chrono::milliseconds wait) {
  std::atomic<bool> done{false};
  absl::Status status;
  std::thread killer([&] {
    status = c.Kill(wait);
    done.store(true, std::memory_order_release);
  });
  const auto deadline = std::chrono::steady_clock::now() + wait + kDrainBound;
  while (!done.load(std::memory_order_acquire)) {
    const int sig = WaitStopSignalFor(std::chrono::milliseconds(100));
    const bool late = std::chrono::steady_clock::now() >= deadline;
    if (sig == 0 && !late) continue;
    std::fflush(stdout);
    std::fprintf(stderr, "tempest: error: %s\n",
                 sig != 0 ? "stopped at once by a second signal while draining; components were "
                            "not closed"
                          : absl::StrCat("the topology did not drain within ",
                                         std::chrono::duration_cast<std::chrono::seconds>(
                                             wait + kDrainBound).count(),
                                         " s (a bolt in a cycle keeps tuples moving); stopped "
                                         "without closing its components").c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
  killer.join();
  return status;
}

int RunLocal(const LocalOptions& opts, const GlobalOptions& globals) {
  BlockStopSignals();  // before any thread starts
  core::TopologyDef def;
  if (int rc = LoadTopology(opts, globals, def); rc != 0) return rc;
  const int64_t timeout_secs = def.config.GetInt(api::kTopologyMessageTimeoutSecs, 30);

  api::ComponentRegistry& registry = api::ComponentRegistry::Global();
  if (absl::Status s = RegisterBuiltins(registry); !s.ok()) return Fail(std::string(s.message()));

  worker::LocalClusterOptions options;
  options.registry = &registry;
  absl::StatusOr<std::unique_ptr<worker::LocalCluster>> cluster =
      worker::LocalCluster::Create(std::move(def), options);
  if (!cluster.ok()) return Fail(std::string(cluster.status().message()));
  worker::LocalCluster& c = **cluster;
  if (absl::Status s = c.Start(); !s.ok()) return Fail(std::string(s.message()));
  std::fprintf(stderr, "tempest: running %s locally (%s)%s; Ctrl-C stops it\n",
               c.topology_id().c_str(), core::Counted(c.layout().num_tasks(), "task").c_str(),
               opts.until_complete ? " until complete" : "");

  Progress progress;
  progress.last_stats = c.Stats();
  const std::string reason = RunUntilStop(c, opts, progress);
  // Clean kill: wait for in-flight trees for up to the message timeout
  // (Storm's default kill wait), then drain and close every component.
  std::fprintf(stderr, "tempest: stopping (%s): deactivating, draining, closing\n",
               reason.c_str());
  if (absl::Status s = BoundedKill(c, std::chrono::seconds(std::min<int64_t>(timeout_secs, 30)));
      !s.ok()) {
    return Fail(std::string(s.message()));
  }
  const auto end = std::chrono::steady_clock::now();
  const worker::LocalClusterStats stats = c.Stats();
  progress.Print(stats, end);
  const double elapsed = std::chrono::duration<double>(end - progress.start).count();
  std::printf("done: %s after %.1fs; spout-emitted=%lld acked=%lld failed=%lld pending=%lld "
              "errors=%lld\n",
              reason.c_str(), elapsed, static_cast<long long>(stats.spout_emitted),
              static_cast<long long>(stats.acked), static_cast<long long>(stats.failed),
              static_cast<long long>(stats.pending), static_cast<long long>(stats.errors));
  std::fflush(stdout);
  return 0;
}

}  // namespace

void RegisterLocalCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto opts = std::make_shared<LocalOptions>();
  auto* sub = app.add_subcommand("local", "Run a Flux topology in this process (LocalCluster)");
  sub->add_option("topology", opts->topology, "Flux YAML file")->required()->check(
      CLI::ExistingFile);
  sub->add_option("--duration", opts->duration_secs, "stop after this many seconds (0: no limit)")
      ->check(Bounded(0, kMaxSeconds));
  sub->add_flag("--until-complete", opts->until_complete,
                "stop once every spout is exhausted and nothing is pending");
  sub->add_option("--resources", opts->resources,
                  "directory for multilang children and relative files (default: the Flux "
                  "file's folder)")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--filter", opts->filter, "properties file for ${key} substitution")
      ->check(CLI::ExistingFile);
  sub->add_flag("--env-filter", opts->env_filter, "substitute ${ENV-NAME} from the environment");
  SubcommandConfigOptions config(sub, globals);
  set.Add(sub, [opts, config, &globals] {
    config.Apply();
    return RunLocal(*opts, globals);
  });
}

}  // namespace tempest::cli
