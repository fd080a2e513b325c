#ifndef TEMPEST_CLI_COMMANDS_H_
#define TEMPEST_CLI_COMMANDS_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/config.h"
#include "common/core/config/config_loader.h"

namespace tempest::cli {

// Options every subcommand accepts (see docs/user-guide.md).
struct GlobalOptions {
  std::string config_file;
  std::vector<std::string> overrides;  // "key=value"
  std::string nimbus;                  // HOST:PORT
  std::string token_file;              // the REST API token (client verbs)
  bool verbose = false;                // client verbs: keep libraries' own logging
  // main's, for `tempest worker`'s process title (worker::SetProcessTitle).
  int argc = 0;
  char** argv = nullptr;
};

// Subcommands register themselves on the app and leave a runner behind; after
// parsing, Run() calls the runner of the one that was chosen.
class CommandSet {
 public:
  void Add(CLI::App* sub, std::function<int()> run) { entries_.push_back({sub, std::move(run)}); }
  int Run() const;

 private:
  struct Entry {
    CLI::App* sub;
    std::function<int()> run;
  };
  std::vector<Entry> entries_;
};

CommandSet RegisterCommands(CLI::App& app, GlobalOptions& globals);

// Per-subcommand registration, one per *_command.cc.
void RegisterVersionCommand(CLI::App& app, CommandSet& set);
void RegisterDevZookeeperCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
void RegisterDevKafkaCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
void RegisterLocalCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
void RegisterVerifyCommand(CLI::App& app, CommandSet& set);
void RegisterOffsetsCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
// `offsets history` and `offsets explain` (offsets_journal_command.cc), under `offsets`.
void RegisterOffsetsJournalCommands(CLI::App& offsets, CommandSet& set, GlobalOptions& globals);
void RegisterMigrateCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
void RegisterDevCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
void RegisterWorkerCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
void RegisterNimbusCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
void RegisterSupervisorCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
void RegisterTopologyCommands(CLI::App& app, CommandSet& set, GlobalOptions& globals);
// `upgrade OLD NEW.yaml` (upgrade_command.cc).
void RegisterUpgradeCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
// Storm's `monitor` (monitor_command.cc).
void RegisterMonitorCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals);
void RegisterStudyCommand(CLI::App& app, CommandSet& set);
// localconfvalue, and one line of explanation for each Storm verb without a
// counterpart (jar, sql, drpc, ...): storm_verbs_command.cc.
void RegisterStormVerbs(CLI::App& app, CommandSet& set, GlobalOptions& globals);

// Declares the global --config and -c on a subcommand too, so its --help
// lists them; values given after the subcommand land here and Apply() adds
// them to the globals (after the ones given before it) when it runs.
class SubcommandConfigOptions {
 public:
  SubcommandConfigOptions(CLI::App* sub, GlobalOptions& globals);
  void Apply() const;

 private:
  struct Values {
    std::string config_file;
    std::vector<std::string> overrides;
  };
  GlobalOptions& globals_;
  std::shared_ptr<Values> values_ = std::make_shared<Values>();
};

// A daemon's effective config: Storm's defaults, then --config, then each
// -c override. Warnings (unknown keys) are printed on stderr.
absl::StatusOr<api::Config> LoadDaemonConfig(const GlobalOptions& globals);
// The same, with where each key's value came from (nimbus serves these).
absl::StatusOr<core::EffectiveConfig> LoadDaemonEffectiveConfig(const GlobalOptions& globals);

// Client verbs call this before they open a ZooKeeper session: unless
// --verbose, the ZooKeeper C client's own log lines (every failed connect
// attempt, at ERROR) are discarded, so an unreachable ensemble reads as the
// one error line the verb prints.
void QuietZkClientLogUnlessVerbose(const GlobalOptions& globals);

// Registers the built-in spouts and bolts into `registry` (names already
// taken are kept, so calling it again is harmless). Every command that loads
// or runs a topology calls it first and stops on an error: a registry without
// the built-ins would reject or fail topologies for a reason nobody could see.
absl::Status RegisterBuiltins(api::ComponentRegistry& registry);

// Prints "tempest: <message>" on stderr; returns `code` for `return Fail(...)`.
int Fail(const std::string& message, int code = 1);

// Blocks until SIGINT or SIGTERM arrives (signals are blocked in all threads
// first, so the waiting thread is the one that sees them). Call
// BlockStopSignals() before starting any thread.
void BlockStopSignals();
int WaitForStopSignal();
// Waits up to `timeout` for SIGINT/SIGTERM; returns the signal or 0.
int WaitStopSignalFor(std::chrono::milliseconds timeout);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_COMMANDS_H_
