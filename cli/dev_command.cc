// `tempest dev`: a whole local cluster in one command. ZooKeeper, a dev
// Kafka, a nimbus and N supervisors run as child processes of this one (each
// in its own process group, each dying with it), all on 127.0.0.1. Prints
// `zookeeper=`, `bootstrap.servers=`, `nimbus=`, one `supervisor=` per
// supervisor, the shell exports a user needs (`export TEMPEST_NIMBUS=`,
// `export BOOTSTRAP=`, `export TEMPEST_ZK=`) and then `ready`; SIGINT/SIGTERM
// stops them in reverse order (supervisors first, so they stop their workers cleanly).

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "devcluster/dev_cluster.h"

namespace tempest::cli {
namespace {

struct DevOptions {
  int supervisors = 2;
  int slots = 2;       // per supervisor
  std::string dir;     // empty: a fresh temp dir (kept, so logs can be read)
};

// A fresh temp dir (kept, so logs can be read) unless --dir names one.
absl::StatusOr<std::filesystem::path> DevDir(const DevOptions& opts) {
  if (!opts.dir.empty()) return std::filesystem::absolute(opts.dir);
  std::string pattern = (std::filesystem::temp_directory_path() / "tempest-dev-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) return absl::InternalError("cannot create a temp dir");
  return std::filesystem::path(pattern);
}

// What every daemon gets after its own arguments: the user's config, then
// the command line's overrides (the cluster adds ZooKeeper's address last).
std::vector<std::string> UserConfigArgs(const GlobalOptions& globals) {
  std::vector<std::string> args;
  if (!globals.config_file.empty()) {
    args = {"--config", std::filesystem::absolute(globals.config_file).string()};
  }
  for (const std::string& kv : globals.overrides) {
    args.push_back("-c");
    args.push_back(kv);
  }
  return args;
}

void PrintLine(const std::string& prefix, const std::string& value) {
  std::printf("%s%s\n", prefix.c_str(), value.c_str());
  std::fflush(stdout);
}

// Kafka, nimbus and the supervisors, each line printed once it is ready;
// then the exports and `ready`.
absl::Status StartDaemons(devcluster::DevCluster& cluster, const DevOptions& opts,
                          const std::filesystem::path& dir) {
  absl::StatusOr<std::string> bootstrap = cluster.StartKafkaProcess();
  if (!bootstrap.ok()) return bootstrap.status();
  PrintLine("bootstrap.servers=", *bootstrap);
  absl::StatusOr<std::string> nimbus = cluster.AddNimbus("nimbus");
  if (!nimbus.ok()) return nimbus.status();
  PrintLine("nimbus=", *nimbus);
  for (int i = 1; i <= opts.supervisors; ++i) {
    const std::string name = absl::StrCat("supervisor-", i);
    absl::StatusOr<std::string> supervisor =
        cluster.AddSupervisor(name, (dir / name).string(), opts.slots);
    if (!supervisor.ok()) return supervisor.status();
    PrintLine("supervisor=", *supervisor);
  }
  // The client verbs read TEMPEST_NIMBUS; examples and kcat read BOOTSTRAP.
  for (const std::string& line : DevExportLines(*nimbus, *bootstrap, cluster.zk_connect())) {
    std::printf("%s\n", line.c_str());
  }
  std::printf("ready\n");
  std::fflush(stdout);
  return absl::OkStatus();
}

// Reports a daemon that dies until a stop signal; the others keep running
// (a test may kill one on purpose).
void WatchUntilStopSignal(devcluster::DevCluster& cluster) {
  std::vector<devcluster::Daemon*> daemons = cluster.Daemons();
  std::vector<bool> reported(daemons.size(), false);
  while (WaitStopSignalFor(std::chrono::milliseconds(200)) == 0) {
    for (size_t i = 0; i < daemons.size(); ++i) {
      if (!reported[i] && !daemons[i]->process->Running()) {
        reported[i] = true;
        std::fprintf(stderr, "tempest: %s exited; see %s\n", daemons[i]->name.c_str(),
                     daemons[i]->log.c_str());
      }
    }
  }
}

int RunDev(const DevOptions& opts, const GlobalOptions& globals) {
  BlockStopSignals();
  absl::StatusOr<std::filesystem::path> dir = DevDir(opts);
  if (!dir.ok()) return Fail(std::string(dir.status().message()));
  const std::filesystem::path logs = *dir / "logs";
  std::error_code ec;
  std::filesystem::create_directories(logs, ec);
  if (ec) return Fail(absl::StrCat("cannot create ", logs.string(), ": ", ec.message()));

  // ZooKeeper is run in this process's name (a child JVM), the rest by
  // re-executing this binary, configured by the command line only (the
  // user's settings, not a test cluster's short timeouts).
  devcluster::DevCluster::Options options;
  options.log_dir = logs.string();
  options.fresh_logs = false;
  options.zk_dir = (*dir / "zookeeper").string();
  options.daemon_args = UserConfigArgs(globals);
  devcluster::DevCluster cluster(std::move(options));
  if (absl::Status s = cluster.StartZooKeeper(); !s.ok()) return Fail(std::string(s.message()));
  PrintLine("zookeeper=", cluster.zk_connect());

  if (absl::Status s = StartDaemons(cluster, opts, *dir); !s.ok()) {
    const int rc = Fail(std::string(s.message()));
    cluster.StopAll(std::chrono::seconds(10));
    return rc;
  }
  std::fprintf(stderr, "tempest: local cluster running; logs in %s; Ctrl-C stops it\n",
               logs.string().c_str());
  WatchUntilStopSignal(cluster);
  cluster.StopAll(std::chrono::seconds(10));
  return 0;
}

}  // namespace

void RegisterDevCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto opts = std::make_shared<DevOptions>();
  CLI::App* sub = app.add_subcommand(
      "dev", "Run a whole local cluster: ZooKeeper, dev Kafka, nimbus and supervisors");
  sub->add_option("--supervisors", opts->supervisors, "number of supervisors")
      ->check(Bounded(1, 16));
  sub->add_option("--slots", opts->slots, "worker slots per supervisor")->check(Bounded(1, 16));
  sub->add_option("--dir", opts->dir,
                  "where state and logs go (default: a new temp dir, kept after exit)");
  SubcommandConfigOptions config(sub, globals);
  set.Add(sub, [opts, config, &globals] {
    config.Apply();
    return RunDev(*opts, globals);
  });
}

}  // namespace tempest::cli
