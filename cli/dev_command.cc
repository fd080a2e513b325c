// `tempest dev`: a whole local cluster in one command. ZooKeeper, a dev
// Kafka, a nimbus and N supervisors run as child processes of this one (each
// in its own process group, each dying with it), all on 127.0.0.1. Unless the
// user's config sets tempest.api.token.file or nimbus.authorizer, nimbus gets
// a new random API token in DIR/api-token (mode 0600). Unless it sets
// ZooKeeper credentials or --insecure-zookeeper is given, every daemon gets a
// new digest identity in DIR/zk-auth (mode 0600, tempest.zookeeper.auth.file),
// so every znode is creator-only. Prints `zookeeper=`, `zk-auth-file=` (when
// there is one), `output=` (a folder every worker may write, see
// cli/dev_worker_access.h), `bootstrap.servers=`, `nimbus=`, `token-file=`
// (when nimbus has a token file), `ui=` (the web UI, carrying the token), one `supervisor=` per
// supervisor, each followed by `supervisor-metrics=HOST:PORT` (its
// Prometheus endpoint, a free port), the shell exports a user needs (`export TEMPEST_NIMBUS=`,
// `export BOOTSTRAP=`, `export TEMPEST_ZK=`, `export TEMPEST_TOKEN_FILE=`,
// `export TEMPEST_ZK_AUTH_FILE=`) and then `ready`. The token file's path is
// recorded for client verbs in $HOME/.tempest/dev/HOST:PORT.token-file, the
// ZooKeeper auth file's in $HOME/.tempest/dev/HOST:ZKPORT.zk-auth-file
// (cli/dev_token.h), while it runs.
// SIGINT/SIGTERM stops the daemons in reverse order (supervisors first, so
// they stop their workers cleanly) and removes that record, with a line on
// stderr when it starts stopping and one when it is done. A daemon that
// exits before it is ready ends the command with the end of its log (the
// port it could not bind, say).

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/dev_token.h"
#include "cli/dev_worker_access.h"
#include "cli/zk_client_auth.h"
#include "common/api/string_view_compat.h"
#include "common/coord/zk_auth.h"
#include "common/core/config/config_loader.h"
#include "common/core/status_macros.h"
#include "common/net/http_auth.h"
#include "common/os/secret_file.h"
#include "devcluster/dev_cluster.h"
#include "supervisor/supervisor_options.h"

namespace tempest::cli {
namespace {

struct DevOptions {
  int supervisors = 2;
  int slots = 2;       // per supervisor
  std::string dir;     // empty: a fresh temp dir (kept, so logs can be read)
  bool insecure_zookeeper = false;  // no generated ZooKeeper identity: every znode open
};

// A fresh temp dir (kept, so logs can be read) unless --dir names one.
absl::StatusOr<std::filesystem::path> DevDir(const DevOptions& opts) {
  if (!opts.dir.empty()) return std::filesystem::absolute(opts.dir);
  std::string pattern = (std::filesystem::temp_directory_path() / "tempest-dev-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) return absl::InternalError("cannot create a temp dir");
  // Searchable, not listable: workers under root (other accounts) pass
  // through to output/; the secrets in it are 0600 files.
  std::error_code ec;
  std::filesystem::permissions(pattern, std::filesystem::perms::owner_all |
                                            std::filesystem::perms::group_exec |
                                            std::filesystem::perms::others_exec, ec);
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

// The user's config as the daemons will read it (defaults, --config, -c),
// without printing its warnings: each daemon prints them in its log.
absl::StatusOr<api::Config> QuietUserConfig(const GlobalOptions& globals) {
  ASSIGN_OR_RETURN(core::EffectiveConfig loaded,
                   core::ConfigLoader::LoadEffective(globals.config_file, globals.overrides));
  return std::move(loaded.config);
}

// How nimbus's REST API is protected.
struct DevAuth {
  std::string token_file;                // absolute; empty: nimbus has none
  std::string token;                     // its token, for the UI link; empty: unknown
  std::vector<std::string> nimbus_args;  // what nimbus gets to use a generated one
};

// The user's own settings when the config names tempest.api.token.file or
// nimbus.authorizer; otherwise a new random token in DIR/api-token.
absl::StatusOr<DevAuth> PrepareAuth(const GlobalOptions& globals,
                                    const std::filesystem::path& dir) {
  ASSIGN_OR_RETURN(const api::Config config, QuietUserConfig(globals));
  DevAuth auth;
  if (config.Has(net::kApiTokenFileKey) || config.Has(net::kNimbusAuthorizerKey)) {
    const std::string file = config.GetString(net::kApiTokenFileKey, "");
    if (!file.empty()) {
      auth.token_file = std::filesystem::absolute(file).string();
      absl::StatusOr<net::LoadedToken> token = net::LoadTokenFile(file, net::kApiTokenFileKey);
      if (token.ok()) auth.token = token->token;
    }
    return auth;
  }
  auth.token_file = (dir / "api-token").string();
  auth.token = net::NewRandomToken();
  RETURN_IF_ERROR(net::WriteTokenFile(auth.token_file, auth.token));
  auth.nimbus_args = {
      "-c", absl::StrCat(net::kApiTokenFileKey, "=", devcluster::YamlQuoted(auth.token_file))};
  return auth;
}

// Who the daemons are to ZooKeeper.
struct DevZkAuth {
  std::string file;                      // absolute; empty: none (open, or an inline payload)
  std::vector<std::string> daemon_args;  // what every daemon gets to use a generated one
};

constexpr char kInsecureZooKeeperWarning[] =
    "tempest: warning: --insecure-zookeeper: every znode of this cluster, each topology's "
    "transport secret and the spouts' offsets included, can be read and written by any "
    "process that reaches 127.0.0.1\n";

// The user's own credentials when the config sets any ZooKeeper auth key;
// none with --insecure-zookeeper (and a warning); otherwise the digest
// identity in DIR/zk-auth, made ("tempest-dev:<64 hex digits>") unless an
// earlier run in DIR left one.
absl::StatusOr<DevZkAuth> PrepareZkAuth(const GlobalOptions& globals, const DevOptions& opts,
                                        const std::filesystem::path& dir) {
  ASSIGN_OR_RETURN(const api::Config config, QuietUserConfig(globals));
  DevZkAuth auth;
  const bool configured = config.Has(coord::kZkAuthSchemeKey) ||
                          config.Has(coord::kZkAuthPayloadKey) || config.Has(coord::kZkAuthFileKey);
  if (configured) {
    if (opts.insecure_zookeeper) {
      return absl::InvalidArgumentError(
          "--insecure-zookeeper contradicts the ZooKeeper credentials in the config");
    }
    const std::string file = config.GetString(coord::kZkAuthFileKey, "");
    if (!file.empty()) auth.file = std::filesystem::absolute(file).string();
    return auth;
  }
  auth.file = (dir / "zk-auth").string();
  std::error_code ec;
  if (opts.insecure_zookeeper) {
    if (std::filesystem::exists(auth.file, ec)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--insecure-zookeeper: the ZooKeeper data in ", dir.string(),
          " belongs to the identity in ", auth.file, "; use another --dir"));
    }
    std::fputs(kInsecureZooKeeperWarning, stderr);
    auth.file.clear();
    return auth;
  }
  if (std::filesystem::exists(auth.file, ec)) {
    // A --dir used before: its ZooKeeper data belongs to that identity.
    RETURN_IF_ERROR(coord::ZkAuthConfig::FromFile(auth.file, "tempest dev's ZooKeeper auth file"));
  } else {
    RETURN_IF_ERROR(os::WriteSecretFile(
        auth.file, absl::StrCat("tempest-dev:", net::NewRandomToken()), "ZooKeeper auth file"));
  }
  auth.daemon_args = {"-c", absl::StrCat(api::Sv(coord::kZkAuthFileKey), "=",
                                         devcluster::YamlQuoted(auth.file))};
  return auth;
}

// Where client verbs will find the token file: the discovery file, or ""
// (with a note on stderr) when it cannot be written.
// (The same for ZooKeeper HOST:PORT's auth file with kDevZkAuthSuffix.)
std::string RecordTokenFile(const std::string& address, const std::string& token_file,
                            std::string_view suffix = kDevTokenSuffix) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port)) {
    return "";
  }
  const char* home = std::getenv("HOME");
  const std::string dir = DevTokenDir(home != nullptr ? home : "");
  std::string written;
  absl::Status s = dir.empty() ? absl::FailedPreconditionError("HOME is not set")
                               : WriteDevTokenDiscovery(dir, address.substr(0, colon), port,
                                                        token_file, &written, suffix);
  if (!s.ok()) {
    const bool token = suffix == kDevTokenSuffix;
    std::fprintf(stderr,
                 "tempest: warning: client verbs will not find the %s by themselves (%s); "
                 "export %s=%s\n",
                 token ? "API token" : "ZooKeeper credentials", std::string(s.message()).c_str(),
                 token ? "TEMPEST_TOKEN_FILE" : kZkAuthFileEnv, ShellWord(token_file).c_str());
    return "";
  }
  return written;
}

// Kafka, nimbus and the supervisors, each line printed once it is ready;
// then the exports and `ready`. `discovery` gets the discovery file written.
absl::Status StartDaemons(devcluster::DevCluster& cluster, const DevOptions& opts,
                          const std::filesystem::path& dir, const DevAuth& auth,
                          const DevZkAuth& zk_auth, std::string& discovery) {
  ASSIGN_OR_RETURN(const std::string bootstrap, cluster.StartKafkaProcess());
  PrintLine("bootstrap.servers=", bootstrap);
  ASSIGN_OR_RETURN(const std::string nimbus, cluster.AddNimbus("nimbus", auth.nimbus_args));
  PrintLine("nimbus=", nimbus);
  if (!auth.token_file.empty()) {
    PrintLine("token-file=", auth.token_file);
    discovery = RecordTokenFile(nimbus, auth.token_file);
  }
  // nimbus's REST port serves the web UI; the link hands it the token.
  PrintLine("ui=", DevUiUrl(nimbus, auth.token));
  for (int i = 1; i <= opts.supervisors; ++i) {
    const std::string name = absl::StrCat("supervisor-", i);
    ASSIGN_OR_RETURN(const std::string supervisor,
                     cluster.AddSupervisor(name, (dir / name).string(), opts.slots));
    PrintLine("supervisor=", supervisor);
    // Prometheus scrapes the supervisor (its workers' series included) here.
    PrintLine("supervisor-metrics=",
              absl::StrCat("127.0.0.1:", cluster.metrics_port(cluster.supervisor_count() - 1)));
  }
  // The client verbs read TEMPEST_NIMBUS and TEMPEST_TOKEN_FILE; examples
  // and kcat read BOOTSTRAP.
  for (const std::string& line :
       DevExportLines(nimbus, bootstrap, cluster.zk_connect(), auth.token_file, zk_auth.file)) {
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

// The cluster's logs and ZooKeeper data under DIR; every daemon gets the
// user's config and the ZooKeeper identity.
devcluster::DevCluster::Options ClusterOptions(const GlobalOptions& globals,
                                               const std::filesystem::path& dir,
                                               const std::filesystem::path& logs,
                                               const DevZkAuth& zk_auth) {
  devcluster::DevCluster::Options options;
  options.log_dir = logs.string();
  options.fresh_logs = false;
  options.zk_dir = (dir / "zookeeper").string();
  options.daemon_args = UserConfigArgs(globals);
  options.daemon_args.insert(options.daemon_args.end(), zk_auth.daemon_args.begin(),
                             zk_auth.daemon_args.end());
  options.supervisor_metrics = true;
  return options;
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
  absl::StatusOr<DevAuth> auth = PrepareAuth(globals, *dir);
  if (!auth.ok()) return Fail(std::string(auth.status().message()));
  absl::StatusOr<DevZkAuth> zk_auth = PrepareZkAuth(globals, opts, *dir);
  if (!zk_auth.ok()) return Fail(std::string(zk_auth.status().message()), 2);
  // Where topologies may write (docs/adr/0026).
  absl::StatusOr<api::Config> config = QuietUserConfig(globals);
  if (!config.ok()) return Fail(std::string(config.status().message()), 2);
  absl::StatusOr<std::string> output = PrepareWorkerOutput(
      dir->string(),
      config->GetString(supervisor::kSupervisorWorkerUser, supervisor::kDefaultWorkerUser));
  if (!output.ok()) return Fail(std::string(output.status().message()));

  devcluster::DevCluster cluster(ClusterOptions(globals, *dir, logs, *zk_auth));
  if (absl::Status s = cluster.StartZooKeeper(); !s.ok()) return Fail(std::string(s.message()));
  PrintLine("zookeeper=", cluster.zk_connect());
  std::string zk_discovery;
  if (!zk_auth->file.empty()) {
    PrintLine("zk-auth-file=", zk_auth->file);
    zk_discovery = RecordTokenFile(cluster.zk_connect(), zk_auth->file, kDevZkAuthSuffix);
  }
  PrintLine("output=", *output);
  auto forget = [&](const std::string& discovery) {
    RemoveDevTokenDiscovery(discovery, auth->token_file);
    RemoveDevTokenDiscovery(zk_discovery, zk_auth->file);
    // An output folder made outside DIR goes when nothing was written there.
    if (*output != (*dir / "output").string()) ::rmdir(output->c_str());
  };

  std::string discovery;
  if (absl::Status s = StartDaemons(cluster, opts, *dir, *auth, *zk_auth, discovery); !s.ok()) {
    const int rc = Fail(std::string(s.message()));
    cluster.StopAll(std::chrono::seconds(10));
    forget(discovery);
    return rc;
  }
  std::fprintf(stderr, "tempest: local cluster running; logs in %s; Ctrl-C stops it\n",
               logs.string().c_str());
  WatchUntilStopSignal(cluster);
  // Stopping takes seconds (workers drain, sinks write their reports): say
  // so, and say when it is over.
  std::fputs("tempest: stopping the local cluster (supervisors and their workers, then nimbus, "
             "Kafka and ZooKeeper)\n",
             stderr);
  cluster.StopAll(std::chrono::seconds(10));
  forget(discovery);
  std::fprintf(stderr, "tempest: stopped; logs kept in %s\n", logs.string().c_str());
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
  sub->add_flag("--insecure-zookeeper", opts->insecure_zookeeper,
                "no generated ZooKeeper identity: every znode (transport secrets, offsets) open "
                "to any local process");
  SubcommandConfigOptions config(sub, globals);
  set.Add(sub, [opts, config, &globals] {
    config.Apply();
    return RunDev(*opts, globals);
  });
}

}  // namespace tempest::cli
