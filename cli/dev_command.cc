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
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "common/coord/zk_server.h"
#include "common/os/child_process.h"
#include "common/os/loopback.h"

namespace tempest::cli {
namespace {

struct DevOptions {
  int supervisors = 2;
  int slots = 2;       // per supervisor
  std::string dir;     // empty: a fresh temp dir (kept, so logs can be read)
};

struct Daemon {
  std::string name;
  std::string log;
  std::unique_ptr<os::ChildProcess> process;
};

// Waits for a line starting with `prefix` in the daemon's log; returns the
// rest of the line. Fails early if the daemon exits.
absl::StatusOr<std::string> AwaitLine(Daemon& d, const std::string& prefix,
                                      std::chrono::seconds timeout) {
  absl::StatusOr<std::string> line = os::AwaitLogLine(d.log, prefix, *d.process, timeout);
  if (!line.ok()) return absl::Status(line.status().code(), absl::StrCat(d.name, ": ", line.status().message()));
  return line;
}

absl::StatusOr<Daemon> StartDaemon(const std::string& name, std::vector<std::string> argv,
                                   const std::filesystem::path& logs) {
  Daemon d;
  d.name = name;
  d.log = (logs / (name + ".log")).string();
  os::ChildProcess::Options o;
  o.argv = std::move(argv);
  o.stdout_path = d.log;
  o.stderr_path = "=stdout";
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> child = os::ChildProcess::Start(o);
  if (!child.ok()) return child.status();
  d.process = *std::move(child);
  return d;
}

int RunDev(const DevOptions& opts, const GlobalOptions& globals) {
  BlockStopSignals();
  std::filesystem::path dir;
  if (opts.dir.empty()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "tempest-dev-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) return Fail("cannot create a temp dir");
    dir = pattern;
  } else {
    dir = std::filesystem::absolute(opts.dir);
  }
  const std::filesystem::path logs = dir / "logs";
  std::error_code ec;
  std::filesystem::create_directories(logs, ec);
  if (ec) return Fail(absl::StrCat("cannot create ", logs.string(), ": ", ec.message()));

  // ZooKeeper is run in this process's name (a child JVM), the rest by
  // re-executing this binary.
  coord::ZkServerConfig zk_config;
  zk_config.data_dir = (dir / "zookeeper").string();
  absl::StatusOr<int> zk_port = os::FindFreeLoopbackPort();
  if (!zk_port.ok()) return Fail(std::string(zk_port.status().message()));
  zk_config.client_port = *zk_port;
  absl::StatusOr<std::unique_ptr<coord::ZkServer>> zk = coord::ZkServer::Start(zk_config);
  if (!zk.ok()) return Fail(std::string(zk.status().message()));
  if (absl::Status s = (*zk)->WaitServing(std::chrono::seconds(60)); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  const std::string zk_connect = (*zk)->connect_string();
  std::printf("zookeeper=%s\n", zk_connect.c_str());
  std::fflush(stdout);

  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return Fail(absl::StrCat("cannot find this binary: ", ec.message()));
  // What every daemon gets: the user's config, then the cluster's address.
  std::vector<std::string> common_args;
  if (!globals.config_file.empty()) {
    common_args = {"--config", std::filesystem::absolute(globals.config_file).string()};
  }
  for (const std::string& kv : globals.overrides) {
    common_args.push_back("-c");
    common_args.push_back(kv);
  }
  common_args.push_back("-c");
  common_args.push_back(absl::StrCat("storm.zookeeper.servers=[\"", zk_connect, "\"]"));

  std::vector<Daemon> daemons;  // started order; stopped in reverse
  auto stop_all = [&daemons] {
    for (auto it = daemons.rbegin(); it != daemons.rend(); ++it) {
      (void)it->process->Stop(std::chrono::seconds(10));
    }
    daemons.clear();
  };
  auto start = [&](const std::string& name, std::vector<std::string> args,
                   const std::string& ready_prefix) -> absl::StatusOr<std::string> {
    std::vector<std::string> argv = {self};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), common_args.begin(), common_args.end());
    absl::StatusOr<Daemon> d = StartDaemon(name, std::move(argv), logs);
    if (!d.ok()) return d.status();
    daemons.push_back(*std::move(d));
    absl::StatusOr<std::string> value = AwaitLine(daemons.back(), ready_prefix, std::chrono::seconds(90));
    if (value.ok()) {
      std::printf("%s%s\n", ready_prefix.c_str(), value->c_str());
      std::fflush(stdout);
    }
    return value;
  };

  int rc = 0;
  auto fail = [&](const absl::Status& s) {
    rc = Fail(std::string(s.message()));
    stop_all();
    (*zk)->Stop();
    return rc;
  };

  absl::StatusOr<std::string> bootstrap =
      start("kafka", {"dev-kafka", "--zk", zk_connect}, "bootstrap.servers=");
  if (!bootstrap.ok()) return fail(bootstrap.status());
  absl::StatusOr<std::string> nimbus = start("nimbus", {"nimbus"}, "nimbus=");
  if (!nimbus.ok()) return fail(nimbus.status());
  for (int i = 1; i <= opts.supervisors; ++i) {
    std::vector<std::string> ports;
    for (int s = 0; s < opts.slots; ++s) {
      absl::StatusOr<int> port = os::FindFreeLoopbackPort();
      if (!port.ok()) return fail(port.status());
      ports.push_back(absl::StrCat(*port));
    }
    std::vector<std::string> args = {
        "supervisor",
        "-c", absl::StrCat("storm.local.dir=", (dir / absl::StrCat("supervisor-", i)).string()),
        "-c", absl::StrCat("supervisor.slots.ports=[", absl::StrJoin(ports, ","), "]"),
        "-c", "storm.local.hostname=127.0.0.1"};
    if (auto s = start(absl::StrCat("supervisor-", i), args, "supervisor="); !s.ok()) {
      return fail(s.status());
    }
  }
  // The client verbs read TEMPEST_NIMBUS; examples and kcat read BOOTSTRAP.
  for (const std::string& line : DevExportLines(*nimbus, *bootstrap, zk_connect)) {
    std::printf("%s\n", line.c_str());
  }
  std::printf("ready\n");
  std::fflush(stdout);
  std::fprintf(stderr, "tempest: local cluster running; logs in %s; Ctrl-C stops it\n",
               logs.string().c_str());

  // Report a daemon that dies; the others keep running (a test may kill one
  // on purpose).
  std::vector<bool> reported(daemons.size(), false);
  while (WaitStopSignalFor(std::chrono::milliseconds(200)) == 0) {
    for (size_t i = 0; i < daemons.size(); ++i) {
      if (!reported[i] && !daemons[i].process->Running()) {
        reported[i] = true;
        std::fprintf(stderr, "tempest: %s exited; see %s\n", daemons[i].name.c_str(),
                     daemons[i].log.c_str());
      }
    }
  }
  stop_all();
  (*zk)->Stop();
  return rc;
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
