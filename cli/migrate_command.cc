// `tempest migrate check STORM_FLUX.yaml [--storm-yaml FILE] [--resources DIR]
// [--filter PROPS] [--env-filter] [--plugin LIB.so]... [--json]`: what of a
// legacy Storm pipeline runs unchanged, what needs a plugin, and which config
// keys are ignored. Exit 0 when it runs unchanged, 1 when not (or the file
// does not parse), 2 for usage errors.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bolts/builtin_bolts.h"
#include "cli/commands.h"
#include "common/core/migration_check.h"
#include "common/core/plugin_loader.h"
#include "nlohmann/json.hpp"
#include "spout/builtin_spouts.h"
#include "spout/kafka_spout_config.h"

namespace tempest::cli {
namespace {

struct MigrateCheckArgs {
  std::string topology;
  std::string storm_yaml;
  std::string resources;
  std::string filter;
  bool env_filter = false;
  std::vector<std::string> plugins;
  bool json = false;
};

// Spout and bolt classes that run a multilang child process.
const std::vector<std::string> kMultilangClasses = {
    "org.apache.storm.flux.wrappers.bolts.FluxShellBolt",
    "org.apache.storm.flux.wrappers.spouts.FluxShellSpout",
    "tempest.ShellBolt",
    "tempest.ShellSpout",
};

const char* VerdictName(core::ClassFinding::Verdict v) {
  switch (v) {
    case core::ClassFinding::Verdict::kNative:
      return "native";
    case core::ClassFinding::Verdict::kMultilang:
      return "multilang";
    case core::ClassFinding::Verdict::kNeedsPlugin:
      return "needs-plugin";
  }
  return "?";
}

const char* EffectName(core::ConfigFinding::Effect e) {
  switch (e) {
    case core::ConfigFinding::Effect::kApplied:
      return "applied";
    case core::ConfigFinding::Effect::kNoEffect:
      return "ignored-storm-only";
    case core::ConfigFinding::Effect::kUnknown:
      return "ignored-unknown";
  }
  return "?";
}

nlohmann::json ToJson(const core::MigrationReport& report) {
  nlohmann::json classes = nlohmann::json::array();
  for (const core::ClassFinding& f : report.classes) {
    classes.push_back({{"section", f.section},
                       {"id", f.id},
                       {"className", f.class_name},
                       {"file", f.location.file},
                       {"line", f.location.line},
                       {"verdict", VerdictName(f.verdict)},
                       {"note", f.note}});
  }
  nlohmann::json config = nlohmann::json::array();
  for (const core::ConfigFinding& f : report.config) {
    config.push_back({{"key", f.key},
                      {"file", f.location.file},
                      {"line", f.location.line},
                      {"effect", EffectName(f.effect)}});
  }
  return {{"topology", report.topology_name},
          {"runs_unchanged", report.RunsUnchanged()},
          {"needs_plugins", report.NeedsPlugins()},
          {"classes", classes},
          {"config", config},
          {"problems", report.problems},
          {"warnings", report.warnings}};
}

int RunMigrateCheck(const MigrateCheckArgs& args) {
  api::ComponentRegistry registry;
  (void)spout::RegisterBuiltinSpouts(registry);
  (void)bolts::RegisterBuiltinBolts(registry);
  core::PluginLoader plugins(registry);
  for (const std::string& lib : args.plugins) {
    absl::StatusOr<std::vector<std::string>> loaded = plugins.Load(lib);
    if (!loaded.ok()) return Fail(std::string(loaded.status().message()));
  }

  core::MigrationCheckOptions options;
  options.flux_path = args.topology;
  options.flux.filter_file = args.filter;
  options.flux.env_filter = args.env_filter;
  const std::filesystem::path topology = std::filesystem::absolute(args.topology);
  options.flux.resource_dirs.push_back(args.resources.empty()
                                           ? topology.parent_path().string()
                                           : std::filesystem::absolute(args.resources).string());
  options.storm_yaml = args.storm_yaml;
  options.registry = &registry;
  options.known_bean_classes = spout::KafkaSpoutBeanClasses();
  options.multilang_classes = kMultilangClasses;

  absl::StatusOr<core::MigrationReport> report = core::CheckMigration(options);
  if (!report.ok()) return Fail(std::string(report.status().message()));
  if (args.json) {
    std::printf("%s\n", ToJson(*report).dump().c_str());
  } else {
    std::fputs(core::FormatMigrationReport(*report).c_str(), stdout);
  }
  std::fflush(stdout);
  return report->RunsUnchanged() ? 0 : 1;
}

}  // namespace

void RegisterMigrateCommand(CLI::App& app, CommandSet& set) {
  auto args = std::make_shared<MigrateCheckArgs>();
  auto* migrate = app.add_subcommand("migrate", "Check a legacy Storm pipeline before moving it");
  migrate->require_subcommand(1);
  auto* check = migrate->add_subcommand(
      "check",
      "Report what of a Storm Flux file runs unchanged, what needs a plugin and which config "
      "keys are ignored; exit 0 only when it runs unchanged");
  check->add_option("topology", args->topology, "the Storm Flux YAML file")
      ->required()
      ->check(CLI::ExistingFile);
  check->add_option("--storm-yaml", args->storm_yaml, "the pipeline's storm.yaml")
      ->check(CLI::ExistingFile);
  check->add_option("--resources", args->resources,
                    "where multilang scripts live (default: the Flux file's folder)");
  check->add_option("--filter", args->filter, "properties file for ${key} substitution");
  check->add_flag("--env-filter", args->env_filter, "substitute ${ENV-NAME} from the environment");
  check->add_option("--plugin", args->plugins, "C++ plugin library whose classes count as present");
  check->add_flag("--json", args->json, "print one JSON document");
  set.Add(check, [args] { return RunMigrateCheck(*args); });
}

}  // namespace tempest::cli
