// `tempest worker`: one worker process, started by a supervisor (not by
// hand). Runs the executors its slot is assigned, heartbeats, and exits 0
// when the assignment changes or on SIGTERM, non-zero when it cannot start.

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "common/api/component_registry.h"
#include "common/api/config.h"
#include "common/coord/topology_identity.h"
#include "common/core/status_macros.h"
#include "common/os/privileges.h"
#include "spdlog/spdlog.h"
#include "supervisor/supervisor_options.h"
#include "worker/worker_process.h"

namespace tempest::cli {
namespace {

struct WorkerArgs {
  std::string topology_id;
  std::string supervisor_id;
  int port = 0;
  std::string worker_dir;
  bool identity_on_stdin = false;
};

// A worker runs submitted code (multilang commands, plugins), so under a
// root supervisor it becomes its slot's account before starting any of it:
// supervisor.worker.user, or with slot uids (the default) a uid of the
// slot's own in that account's group (supervisor::SlotAccount, computed from
// the same config as the supervisor's). Its config has been read by then (it
// may be readable by root only). It works in its scratch directory, entered
// first (while still root when the directory's ancestors are closed to the
// account) and used by a relative path afterwards; the supervisor made the
// directory fresh and gave it to the account.
absl::Status LeaveRoot(const api::Config& config, worker::WorkerProcessOptions& options) {
  if (!options.worker_dir.empty()) {
    if (::chdir(options.worker_dir.c_str()) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot enter ", options.worker_dir, ": ", std::strerror(errno)));
    }
    options.worker_dir = ".";
  }
  if (!os::RunningAsRoot()) return absl::OkStatus();
  absl::StatusOr<os::UnixUser> account = os::LookUpUnprivilegedUser(config.GetString(
      supervisor::kSupervisorWorkerUser, std::string(supervisor::kDefaultWorkerUser)));
  if (!account.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("supervisor.worker.user: ", account.status().message()));
  }
  ASSIGN_OR_RETURN(const std::optional<int64_t> slot_uid_base, supervisor::SlotUidBaseFrom(config));
  const os::UnixUser slot = supervisor::SlotAccount(*account, slot_uid_base, options.port);
  RETURN_IF_ERROR(os::DropPrivilegesTo(slot));
  // Files the topology creates are its group's too (the group of
  // supervisor.worker.user, shared by every slot uid), never everyone's: a
  // topology moved to another slot keeps appending to its own output files
  // in a directory the operator shared, and its scratch directory (0700)
  // stays closed to other slots whatever the files' modes.
  ::umask(0007);
  spdlog::info("worker runs as {} (uid {}, gid {})", slot.name, slot.uid, slot.gid);
  return absl::OkStatus();
}

// The topology's ZooKeeper identity, from the pipe its supervisor made our
// stdin (SpawnWorker, --zk-identity-stdin). Read to its end: the supervisor
// closes its side right after writing.
absl::StatusOr<coord::WorkerHandoff> ReadHandoff() {
  struct stat st {};
  if (::fstat(STDIN_FILENO, &st) != 0 || !S_ISFIFO(st.st_mode)) {
    return absl::InvalidArgumentError("--zk-identity-stdin: stdin is not a pipe");
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::FailedPreconditionError(absl::StrCat("stdin: ", std::strerror(errno)));
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > 65536) {
      return absl::InvalidArgumentError("the identity handoff on stdin is too long");
    }
  }
  ASSIGN_OR_RETURN(std::optional<coord::WorkerHandoff> handoff, coord::DecodeWorkerHandoff(text));
  if (!handoff.has_value()) {
    return absl::InvalidArgumentError("--zk-identity-stdin: nothing came on stdin");
  }
  return *std::move(handoff);
}

// A worker connects as its topology, never as the cluster: the cluster's
// credentials (read with the rest of the config file) are dropped here and
// the session's identity becomes the handed-off one. Nodes it creates give
// the cluster identity ALL (coord::ZkAclPolicy::trusted_digest_ids).
void UseTopologyIdentity(const coord::WorkerHandoff& handoff, api::Config& config,
                         worker::WorkerProcessOptions& options) {
  config.Erase(coord::kZkAuthSchemeKey);
  config.Erase(coord::kZkAuthPayloadKey);
  config.Erase(coord::kZkAuthFileKey);
  coord::ZkAuthConfig& auth = options.zk.client.auth;
  auth.scheme = handoff.topology.scheme;
  auth.payload = handoff.topology.payload;
  auth.trusted_digest_ids.clear();
  if (!handoff.cluster_digest_id.empty()) {
    auth.trusted_digest_ids.push_back(handoff.cluster_digest_id);
  }
}

int RunWorker(const WorkerArgs& args, const GlobalOptions& globals) {
  // Before any thread starts: threads inherit the name, and nothing reads
  // argv after parsing.
  worker::SetProcessTitle(
      globals.argc, globals.argv,
      worker::WorkerProcessTitle(args.topology_id, args.supervisor_id, args.port));
  BlockStopSignals();  // before any thread starts
  absl::StatusOr<api::Config> config = LoadDaemonConfig(globals);
  if (!config.ok()) return Fail(std::string(config.status().message()), 2);
  absl::StatusOr<worker::WorkerProcessOptions> options =
      worker::WorkerProcessOptions::FromConfig(*config);
  if (!options.ok()) return Fail(std::string(options.status().message()), 2);
  if (args.identity_on_stdin) {
    absl::StatusOr<coord::WorkerHandoff> handoff = ReadHandoff();
    if (!handoff.ok()) return Fail(std::string(handoff.status().message()), 2);
    UseTopologyIdentity(*handoff, *config, *options);
  } else if (options->zk.client.auth.enabled()) {
    spdlog::warn(
        "worker: no topology identity on stdin; connecting with the configured "
        "storm.zookeeper.auth.* (only a worker started by hand does this)");
  }
  options->topology_id = args.topology_id;
  options->supervisor_id = args.supervisor_id;
  options->port = args.port;
  options->worker_dir = args.worker_dir;
  if (absl::Status s = LeaveRoot(*config, *options); !s.ok()) {
    return Fail(std::string(s.message()), 2);
  }

  api::ComponentRegistry& registry = api::ComponentRegistry::Global();
  if (absl::Status s = RegisterBuiltins(registry); !s.ok()) return Fail(std::string(s.message()));
  options->registry = &registry;

  absl::StatusOr<std::unique_ptr<worker::WorkerProcess>> process =
      worker::WorkerProcess::Start(*std::move(options));
  if (!process.ok()) return Fail(std::string(process.status().message()));
  const worker::WorkerExit exit =
      (*process)->Run([] { return WaitStopSignalFor(std::chrono::milliseconds(0)) != 0; });
  process->reset();
  spdlog::info("worker exited: {}", worker::WorkerExitName(exit));
  return 0;
}

}  // namespace

void RegisterWorkerCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto args = std::make_shared<WorkerArgs>();
  CLI::App* sub =
      app.add_subcommand("worker", "Run one worker process (started by a supervisor, not by hand)");
  sub->add_option("--topology-id", args->topology_id, "The topology to run")->required();
  sub->add_option("--supervisor-id", args->supervisor_id, "The supervisor owning the slot")
      ->required();
  sub->add_option("--port", args->port, "The slot port (also the transport port)")
      ->required()
      ->check(Bounded(1, 65535));
  sub->add_option("--worker-dir", args->worker_dir,
                  "The worker's scratch and working directory, where its heartbeat goes "
                  "({storm.local.dir}/workers/{port})");
  sub->add_flag("--zk-identity-stdin", args->identity_on_stdin,
                "Read the topology's ZooKeeper identity from stdin (the supervisor's pipe)");
  SubcommandConfigOptions config(sub, globals);
  set.Add(sub, [args, config, &globals] {
    config.Apply();
    return RunWorker(*args, globals);
  });
}

}  // namespace tempest::cli
