// `tempest supervisor`: runs the supervisor daemon (slot registration,
// assignment sync, worker launcher and monitor) until SIGINT/SIGTERM. Prints
// `supervisor=<id>` on stdout once registered; logs go to stderr.

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/core/config/config_loader.h"
#include "common/core/config/secret_config.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"
#include "supervisor/supervisor.h"

namespace tempest::cli {
namespace {

int RunSupervisor(const GlobalOptions& globals) {
  BlockStopSignals();  // before any thread starts; workers get them unblocked
  spdlog::set_default_logger(spdlog::stderr_color_mt("supervisor"));

  api::Config config = core::ConfigLoader::Defaults();
  if (!globals.config_file.empty()) {
    absl::StatusOr<core::LoadedConfig> loaded = core::ConfigLoader::LoadFile(globals.config_file);
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
    for (const std::string& w : loaded->warnings) {
      std::fprintf(stderr, "tempest: warning: %s\n", w.c_str());
    }
    config = std::move(loaded->config);
  }
  for (const std::string& kv : globals.overrides) {
    absl::StatusOr<std::string> warning = core::ConfigLoader::ApplyOverride(config, kv);
    if (!warning.ok()) return Fail(std::string(warning.status().message()), 2);
    if (!warning->empty()) std::fprintf(stderr, "tempest: warning: %s\n", warning->c_str());
  }
  absl::StatusOr<supervisor::SupervisorOptions> options =
      supervisor::SupervisorOptions::FromConfig(config);
  if (!options.ok()) return Fail(std::string(options.status().message()), 2);
  // Workers read the same configuration: the same global arguments, verbatim.
  if (!globals.config_file.empty()) {
    options->worker_config_args.push_back("--config");
    options->worker_config_args.push_back(globals.config_file);
  }
  // Credentials excepted: a worker's command line is readable by every local
  // account, and a worker gets its topology's identity on stdin instead.
  for (const std::string& kv : globals.overrides) {
    if (core::IsSecretConfigKey(std::string_view(kv).substr(0, kv.find('=')))) continue;
    options->worker_config_args.push_back("-c");
    options->worker_config_args.push_back(kv);
  }

  absl::StatusOr<std::unique_ptr<supervisor::Supervisor>> s =
      supervisor::Supervisor::Create(*std::move(options));
  if (!s.ok()) return Fail(std::string(s.status().message()));
  std::printf("supervisor=%s\n", (*s)->id().c_str());
  std::fflush(stdout);
  WaitForStopSignal();
  s->reset();
  return 0;
}

}  // namespace

void RegisterSupervisorCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  CLI::App* sub = app.add_subcommand(
      "supervisor", "Run the supervisor daemon: registers worker slots, runs assigned workers");
  SubcommandConfigOptions config(sub, globals);
  set.Add(sub, [config, &globals] {
    config.Apply();
    return RunSupervisor(globals);
  });
}

}  // namespace tempest::cli
