// `tempest nimbus`: runs the nimbus daemon (topology store, scheduler,
// leader election, REST API) until SIGINT/SIGTERM. Prints `nimbus=H:P` on
// stdout once the REST API serves; logs go to stderr.

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "cli/commands.h"
#include "common/api/component_registry.h"
#include "nimbus/nimbus.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace tempest::cli {
namespace {

int RunNimbus(const GlobalOptions& globals) {
  BlockStopSignals();  // before any thread starts
  spdlog::set_default_logger(spdlog::stderr_color_mt("nimbus"));

  absl::StatusOr<core::EffectiveConfig> config = LoadDaemonEffectiveConfig(globals);
  if (!config.ok()) return Fail(std::string(config.status().message()), 2);
  absl::StatusOr<nimbus::NimbusOptions> options =
      nimbus::NimbusOptions::FromConfig(config->config);
  if (!options.ok()) return Fail(std::string(options.status().message()), 2);
  options->config_origins = std::move(config->origins);

  // Submissions are validated against the same components a worker runs.
  api::ComponentRegistry& registry = api::ComponentRegistry::Global();
  if (absl::Status s = RegisterBuiltins(registry); !s.ok()) return Fail(std::string(s.message()));
  options->registry = &registry;

  absl::StatusOr<std::unique_ptr<nimbus::Nimbus>> n = nimbus::Nimbus::Create(*std::move(options));
  if (!n.ok()) return Fail(std::string(n.status().message()));
  std::printf("nimbus=%s\n", (*n)->id().c_str());
  std::fflush(stdout);
  WaitForStopSignal();
  n->reset();
  return 0;
}

}  // namespace

void RegisterNimbusCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  CLI::App* sub = app.add_subcommand(
      "nimbus", "Run the nimbus daemon: stores and schedules topologies, serves the REST API");
  SubcommandConfigOptions config(sub, globals);
  set.Add(sub, [config, &globals] {
    config.Apply();
    return RunNimbus(globals);
  });
}

}  // namespace tempest::cli
