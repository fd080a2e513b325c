#ifndef TEMPEST_CLI_MIGRATE_MIGRATION_CHECK_H_
#define TEMPEST_CLI_MIGRATE_MIGRATION_CHECK_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/core/flux/flux_loader.h"
#include "common/core/topology/topology_def.h"

namespace tempest::cli {

// What `tempest migrate check` found about one class a Storm Flux file uses.
struct ClassFinding {
  enum class Verdict {
    kNative,       // implemented by Tempest (or a loaded plugin): runs unchanged
    kMultilang,    // runs unchanged through the multilang protocol (a child process)
    kNeedsPlugin,  // a Java class Tempest does not implement
  };
  std::string section;     // "spouts", "bolts", "components" or "streams"
  std::string id;          // the component id (the stream's "from -> to" for groupings)
  std::string class_name;
  core::SourceLocation location;
  Verdict verdict = Verdict::kNeedsPlugin;
  std::string note;        // e.g. the multilang command and where it runs
};

// What happens to one configuration key.
struct ConfigFinding {
  enum class Effect {
    kApplied,   // Tempest reads it
    kNoEffect,  // a Storm key Tempest accepts but has no use for (JVM, Thrift, UI, ...)
    kUnknown,   // not a Storm or Tempest key: probably a typo
  };
  std::string key;
  core::SourceLocation location;
  Effect effect = Effect::kUnknown;
};

struct MigrationReport {
  std::string topology_name;
  std::vector<ClassFinding> classes;
  std::vector<ConfigFinding> config;
  // Load and validation errors ("file:line: message"); empty when the
  // topology would start.
  std::vector<std::string> problems;
  std::vector<std::string> warnings;

  bool NeedsPlugins() const;
  // Everything runs without changes: no class needs a plugin, no problem.
  bool RunsUnchanged() const { return !NeedsPlugins() && problems.empty(); }
};

struct MigrationCheckOptions {
  std::string flux_path;
  core::FluxOptions flux;        // filters; resource_dirs[0] is where multilang children run
  std::string storm_yaml;  // optional
  // Classes that count as implemented: the built-ins plus loaded plugins.
  const api::ComponentRegistry* registry = nullptr;
  // Flux `components` (beans) that native components understand, e.g.
  // storm-kafka's ZkHosts and SpoutConfig.
  std::vector<std::string> known_bean_classes;
  // Registered spout/bolt classes that run a multilang child; their first
  // constructor argument is the command.
  std::vector<std::string> multilang_classes;
};

// Reads a Storm Flux file (and optionally a storm.yaml) and reports, without
// running anything, which of its classes Tempest runs natively, which run
// through multilang, which need a plugin (each with file:line), and what
// happens to every configuration key. A file that does not parse is an
// InvalidArgument status naming file:line; everything else is a finding.
// Reads files only; any thread.
absl::StatusOr<MigrationReport> CheckMigration(const MigrationCheckOptions& options);

// The report as text for a terminal, one finding per line, grouped.
std::string FormatMigrationReport(const MigrationReport& report);

// Whether Tempest reads `key` (as opposed to accepting and ignoring it).
bool ConfigKeyTakesEffect(std::string_view key);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_MIGRATE_MIGRATION_CHECK_H_
