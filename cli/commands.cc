#include "cli/commands.h"

#include <signal.h>

#include <cstdio>

#include "bolts/builtin_bolts.h"
#include "common/coord/zk_session.h"
#include "common/core/config/config_loader.h"
#include "common/core/status_macros.h"
#include "spout/builtin_spouts.h"

namespace tempest::cli {

int CommandSet::Run() const {
  for (const auto& e : entries_) {
    if (e.sub->parsed()) return e.run();
  }
  return Fail("no subcommand given", 2);
}

CommandSet RegisterCommands(CLI::App& app, GlobalOptions& globals) {
  CommandSet set;
  RegisterVersionCommand(app, set);
  RegisterDevZookeeperCommand(app, set, globals);
  RegisterDevKafkaCommand(app, set, globals);
  RegisterLocalCommand(app, set, globals);
  RegisterVerifyCommand(app, set);
  RegisterOffsetsCommand(app, set, globals);
  RegisterMigrateCommand(app, set, globals);
  RegisterDevCommand(app, set, globals);
  RegisterNimbusCommand(app, set, globals);
  RegisterWorkerCommand(app, set, globals);
  RegisterSupervisorCommand(app, set, globals);
  RegisterTopologyCommands(app, set, globals);
  RegisterUpgradeCommand(app, set, globals);
  RegisterMonitorCommand(app, set, globals);
  RegisterStudyCommand(app, set);
  RegisterStormVerbs(app, set, globals);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->footer(
        "Global options (before or after the subcommand): --config FILE, -c key=value, "
        "--nimbus HOST:PORT, --token-file FILE, --verbose; see tempest --help.");
  }
  return set;
}

SubcommandConfigOptions::SubcommandConfigOptions(CLI::App* sub, GlobalOptions& globals)
    : globals_(globals) {
  sub->add_option("--config", values_->config_file, "tempest.yaml or storm.yaml to read")
      ->check(CLI::ExistingFile);
  sub->add_option("-c", values_->overrides,
                  "key=value config override (value parsed as YAML; repeatable)")
      ->allow_extra_args(false)
      ->default_str("");
}

void SubcommandConfigOptions::Apply() const {
  if (!values_->config_file.empty()) globals_.config_file = values_->config_file;
  globals_.overrides.insert(globals_.overrides.end(), values_->overrides.begin(),
                            values_->overrides.end());
}

absl::StatusOr<core::EffectiveConfig> LoadDaemonEffectiveConfig(const GlobalOptions& globals) {
  ASSIGN_OR_RETURN(core::EffectiveConfig loaded,
                   core::ConfigLoader::LoadEffective(globals.config_file, globals.overrides));
  for (const std::string& w : loaded.warnings) {
    std::fprintf(stderr, "tempest: warning: %s\n", w.c_str());
  }
  return loaded;
}

absl::StatusOr<api::Config> LoadDaemonConfig(const GlobalOptions& globals) {
  ASSIGN_OR_RETURN(core::EffectiveConfig loaded, LoadDaemonEffectiveConfig(globals));
  return std::move(loaded.config);
}

absl::Status RegisterBuiltins(api::ComponentRegistry& registry) {
  RETURN_IF_ERROR(spout::RegisterBuiltinSpouts(registry));
  return bolts::RegisterBuiltinBolts(registry);
}

void QuietZkClientLogUnlessVerbose(const GlobalOptions& globals) {
  if (globals.verbose) return;
  // Opened once and never closed: the C client may log from its own
  // threads until the process exits.
  static std::FILE* const devnull = std::fopen("/dev/null", "w");
  if (devnull != nullptr) coord::SetZkClientLogStream(devnull);
}

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "tempest: %s\n", message.c_str());
  return code;
}

void BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForStopSignal() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

int WaitStopSignalFor(std::chrono::milliseconds timeout) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  timespec ts;
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  ts.tv_nsec = static_cast<long>((timeout.count() % 1000) * 1000000);
  const int sig = sigtimedwait(&set, nullptr, &ts);
  return sig > 0 ? sig : 0;
}

}  // namespace tempest::cli
