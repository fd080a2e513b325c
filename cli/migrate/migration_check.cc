#include "cli/migrate/migration_check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/api/config.h"
#include "common/core/config/config_loader.h"
#include "common/core/topology/topology_limits.h"
#include "common/core/topology/topology_validator.h"
#include "common/core/config/config_keys.h"
#include "common/core/config/storm_default_keys.h"
#include "common/core/yaml_checks.h"
#include "common/core/yaml_value.h"
#include "common/core/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace tempest::cli {

// The topology model and config tables this check reads (common/core).
using core::CheckTopologyLimits;
using core::ComponentDef;
using core::ConfigLoader;
using core::FluxLoader;
using core::IsStormCoreClass;
using core::LoadCheckedYaml;
using core::SourceLocation;
using core::TempestReadsKey;
using core::TopologyDef;
using core::TopologyValidator;
using core::ValidationReport;
using core::YamlLine;

namespace {


absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

absl::StatusOr<YAML::Node> ParseYaml(const std::string& text, const std::string& file) {
  return LoadCheckedYaml(text, file);
}

std::string ScalarOr(const YAML::Node& node, const char* key, std::string fallback) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.Scalar() : fallback;
}

// A map value (`hbase.conf: {...}`) is a connector's settings, read by the
// component that names the key, not a misspelt Storm key.
ConfigFinding::Effect EffectOf(const std::string& key, const YAML::Node& value) {
  if (ConfigKeyTakesEffect(key)) return ConfigFinding::Effect::kApplied;
  if (ConfigLoader::IsKnownKey(key) || value.IsMap()) return ConfigFinding::Effect::kNoEffect;
  return ConfigFinding::Effect::kUnknown;
}

void ScanConfigMap(const YAML::Node& map, const std::string& file, const std::string& prefix,
                   std::vector<ConfigFinding>& out) {
  if (!map || !map.IsMap()) return;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = kv.first.Scalar();
    out.push_back(
        {prefix + key, SourceLocation{file, YamlLine(kv.first)}, EffectOf(key, kv.second)});
  }
}

// The multilang command: the first constructor argument, a list of strings.
std::vector<std::string> MultilangCommand(const YAML::Node& component) {
  std::vector<std::string> command;
  const YAML::Node args = component["constructorArgs"];
  if (!args || !args.IsSequence() || args.size() == 0 || !args[0].IsSequence()) return command;
  for (const auto& part : args[0]) {
    if (part.IsScalar()) command.push_back(part.Scalar());
  }
  return command;
}

bool LooksLikeScript(std::string_view arg) {
  for (std::string_view ext : {".py", ".rb", ".js", ".sh", ".pl", ".php"}) {
    if (arg.ends_with(ext)) return true;
  }
  return false;
}

class Scanner {
 public:
  Scanner(const MigrationCheckOptions& options, MigrationReport& report)
      : options_(options), report_(report) {
    beans_.insert(options.known_bean_classes.begin(), options.known_bean_classes.end());
    multilang_.insert(options.multilang_classes.begin(), options.multilang_classes.end());
  }

  void ScanFlux(const YAML::Node& root, const std::string& file) {
    if (const YAML::Node name = root["name"]; name && name.IsScalar()) {
      report_.topology_name = name.Scalar();
    }
    ScanConfigMap(root["config"], file, "", report_.config);
    ScanSection(root["components"], file, "components");
    ScanSection(root["spouts"], file, "spouts");
    ScanSection(root["bolts"], file, "bolts");
    const YAML::Node streams = root["streams"];
    if (streams && streams.IsSequence()) {
      for (const auto& s : streams) {
        if (!s.IsMap()) continue;
        const YAML::Node grouping = s["grouping"];
        if (!grouping || !grouping.IsMap()) continue;
        const YAML::Node custom = grouping["customClass"];
        if (!custom || !custom.IsMap()) continue;
        ClassFinding f;
        f.section = "streams";
        f.id = absl::StrCat(ScalarOr(s, "from", "?"), " -> ", ScalarOr(s, "to", "?"));
        f.class_name = ScalarOr(custom, "className", "");
        f.location = SourceLocation{file, YamlLine(custom)};
        const bool partial_key = f.class_name == "org.apache.storm.grouping.PartialKeyGrouping";
        f.verdict = partial_key || options_.registry->HasGrouping(f.class_name)
                        ? ClassFinding::Verdict::kNative
                        : ClassFinding::Verdict::kNeedsPlugin;
        report_.classes.push_back(std::move(f));
      }
    }
  }

  // Spouts and bolts that came from included files (not in the main file).
  void AddIncluded(const TopologyDef& def) {
    absl::flat_hash_set<std::string> seen;
    for (const ClassFinding& f : report_.classes) seen.insert(f.section + "/" + f.id);
    auto add = [&](const std::vector<ComponentDef>& list, const char* section) {
      for (const ComponentDef& c : list) {
        if (seen.contains(absl::StrCat(section, "/", c.id.value()))) continue;
        ClassFinding f;
        f.section = section;
        f.id = c.id.value();
        f.class_name = c.args.class_name;
        f.location = c.location;
        f.verdict = VerdictFor(section, f.class_name);
        report_.classes.push_back(std::move(f));
      }
    };
    add(def.spouts, "spouts");
    add(def.bolts, "bolts");
  }

 private:
  ClassFinding::Verdict VerdictFor(std::string_view section, const std::string& cls) const {
    const api::ComponentRegistry& registry = *options_.registry;
    bool native = false;
    if (section == "spouts") native = registry.HasSpout(cls);
    if (section == "bolts") native = registry.HasBolt(cls);
    if (section == "components") native = beans_.contains(cls) || IsStormCoreClass(cls);
    if (native && multilang_.contains(cls)) return ClassFinding::Verdict::kMultilang;
    return native ? ClassFinding::Verdict::kNative : ClassFinding::Verdict::kNeedsPlugin;
  }

  void ScanSection(const YAML::Node& list, const std::string& file, const char* section) {
    if (!list || !list.IsSequence()) return;
    for (const auto& c : list) {
      if (!c.IsMap()) continue;
      ClassFinding f;
      f.section = section;
      f.id = ScalarOr(c, "id", "?");
      f.class_name = ScalarOr(c, "className", "");
      const YAML::Node cls = c["className"];
      f.location = SourceLocation{file, YamlLine(cls ? cls : c)};
      f.verdict = VerdictFor(section, f.class_name);
      if (f.verdict == ClassFinding::Verdict::kMultilang) DescribeMultilang(c, f);
      ScanConfigMap(c["config"], file, absl::StrCat(f.id, ": "), report_.config);
      report_.classes.push_back(std::move(f));
    }
  }

  // Names the command and where it runs; a script that is not there is a
  // problem (the child would exit at once and be restarted forever).
  void DescribeMultilang(const YAML::Node& component, ClassFinding& f) {
    const std::vector<std::string> command = MultilangCommand(component);
    const std::string dir =
        options_.flux.resource_dirs.empty() ? std::string(".") : options_.flux.resource_dirs[0];
    if (command.empty()) {
      report_.problems.push_back(absl::StrCat(
          f.location.Prefix(), f.id, ": the first constructor argument must be the command, "
          "a list such as [\"python3\", \"splitsentence.py\"]"));
      return;
    }
    f.note = absl::StrCat("runs `", absl::StrJoin(command, " "), "` in ", dir);
    for (size_t i = 1; i < command.size(); ++i) {
      if (!LooksLikeScript(command[i])) continue;
      const std::filesystem::path script = std::filesystem::path(dir) / command[i];
      if (!std::filesystem::exists(script)) {
        report_.problems.push_back(absl::StrCat(f.location.Prefix(), f.id, ": multilang script '",
                                                command[i], "' not found in ", dir,
                                                " (set --resources)"));
      }
    }
  }

  const MigrationCheckOptions& options_;
  MigrationReport& report_;
  absl::flat_hash_set<std::string> beans_;
  absl::flat_hash_set<std::string> multilang_;
};

void AppendLines(const std::string& text, std::vector<std::string>& out) {
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    out.emplace_back(line);
  }
}

// Validation errors that only repeat a class already reported as needing a
// plugin are dropped; the rest are real problems.
bool RepeatsPluginFinding(const std::string& error) {
  return error.find("unknown spout class") != std::string::npos ||
         error.find("unknown bolt class") != std::string::npos ||
         error.find("unknown grouping class") != std::string::npos;
}

// Appends "\n<title> (N)\n" and "  <line(item)>\n" for each of the N items
// that `keep` selects: one section of FormatMigrationReport.
template <typename T, typename Keep, typename Line>
void AppendSection(std::string& out, const char* title, const std::vector<T>& items, Keep keep,
                   Line line) {
  std::vector<const T*> hits;
  for (const T& item : items) {
    if (keep(item)) hits.push_back(&item);
  }
  absl::StrAppend(&out, "\n", title, " (", hits.size(), ")\n");
  for (const T* item : hits) absl::StrAppend(&out, "  ", line(*item), "\n");
}

}  // namespace

bool ConfigKeyTakesEffect(std::string_view key) { return TempestReadsKey(key); }

bool MigrationReport::NeedsPlugins() const {
  return std::any_of(classes.begin(), classes.end(), [](const ClassFinding& f) {
    return f.verdict == ClassFinding::Verdict::kNeedsPlugin;
  });
}

absl::StatusOr<MigrationReport> CheckMigration(const MigrationCheckOptions& options) {
  if (options.registry == nullptr) return absl::InvalidArgumentError("no component registry");
  MigrationReport report;
  TEMPEST_ASSIGN_OR_RETURN(const std::string text, ReadText(options.flux_path));
  TEMPEST_ASSIGN_OR_RETURN(const YAML::Node root, ParseYaml(text, options.flux_path));
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(options.flux_path, ":1: a Flux file is a YAML map (name, spouts, bolts, ...)"));
  }
  Scanner scanner(options, report);
  try {
    scanner.ScanFlux(root, options.flux_path);
  } catch (const YAML::Exception&) {
    // The class survey reads the raw YAML as best it can; the Flux loader
    // below reports what is malformed, with its line.
  }

  if (!options.storm_yaml.empty()) {
    TEMPEST_ASSIGN_OR_RETURN(const std::string storm_text, ReadText(options.storm_yaml));
    TEMPEST_ASSIGN_OR_RETURN(const YAML::Node storm_root,
                             ParseYaml(storm_text, options.storm_yaml));
    if (storm_root.IsMap()) {
      ScanConfigMap(storm_root, options.storm_yaml, "", report.config);
    } else if (!storm_root.IsNull()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.storm_yaml, ":1: storm.yaml must be a YAML map of config keys"));
    }
  }

  absl::StatusOr<TopologyDef> def = FluxLoader(options.flux).LoadFile(options.flux_path);
  if (!def.ok()) {
    AppendLines(std::string(def.status().message()), report.problems);
    return report;
  }
  report.warnings.insert(report.warnings.end(), def->warnings.begin(), def->warnings.end());
  scanner.AddIncluded(*def);
  // Sizes and names are checked whatever the classes; full validation
  // constructs every component: only meaningful once every class exists, or
  // it repeats each missing class as a cascade of errors.
  std::vector<std::string> limits = CheckTopologyLimits(*def);
  report.problems.insert(report.problems.end(), limits.begin(), limits.end());
  if (limits.empty() && !report.NeedsPlugins()) {
    ValidationReport validation = TopologyValidator(*options.registry).Check(*def);
    const bool substituted = options.flux.env_filter || !options.flux.filter_file.empty();
    for (const std::string& e : validation.errors) {
      if (RepeatsPluginFinding(e)) continue;
      // Checked only once the user's --filter/--env-filter gives it a value.
      const bool placeholder = !substituted && std::find(validation.unsubstituted.begin(),
                                                         validation.unsubstituted.end(),
                                                         e) != validation.unsubstituted.end();
      (placeholder ? report.warnings : report.problems).push_back(e);
    }
    report.warnings.insert(report.warnings.end(), validation.warnings.begin(),
                           validation.warnings.end());
  }
  return report;
}

std::string FormatMigrationReport(const MigrationReport& report) {
  std::string out = absl::StrCat("Topology '", report.topology_name, "'\n");
  auto section = [&](const char* title, ClassFinding::Verdict verdict) {
    AppendSection(
        out, title, report.classes, [&](const ClassFinding& f) { return f.verdict == verdict; },
        [](const ClassFinding& f) {
          return absl::StrCat(f.location.Prefix(), f.section, " '", f.id, "': ", f.class_name,
                              f.note.empty() ? "" : absl::StrCat(" (", f.note, ")"));
        });
  };
  section("Runs unchanged, implemented natively", ClassFinding::Verdict::kNative);
  section("Runs unchanged through multilang", ClassFinding::Verdict::kMultilang);
  section("Needs a plugin (a Java class Tempest does not implement)",
          ClassFinding::Verdict::kNeedsPlugin);

  auto keys = [&](const char* title, ConfigFinding::Effect effect) {
    AppendSection(
        out, title, report.config, [&](const ConfigFinding& f) { return f.effect == effect; },
        [](const ConfigFinding& f) { return absl::StrCat(f.location.Prefix(), f.key); });
  };
  keys("Config keys that take effect", ConfigFinding::Effect::kApplied);
  // Accepted-but-unused keys are many in a Storm config: one summary line.
  std::vector<std::string> unused;
  for (const ConfigFinding& f : report.config) {
    if (f.effect == ConfigFinding::Effect::kNoEffect) unused.push_back(f.key);
  }
  absl::StrAppend(&out, "\nConfig keys ignored: Storm settings Tempest accepts but does not use (",
                  unused.size(), ")", unused.empty() ? "" : ": ", absl::StrJoin(unused, ", "),
                  "\n");
  keys("Config keys ignored: unknown (check the spelling)", ConfigFinding::Effect::kUnknown);

  absl::StrAppend(&out, "\nProblems (", report.problems.size(), ")\n");
  for (const std::string& p : report.problems) absl::StrAppend(&out, "  ", p, "\n");
  if (!report.warnings.empty()) {
    absl::StrAppend(&out, "\nWarnings (", report.warnings.size(), ")\n");
    for (const std::string& w : report.warnings) absl::StrAppend(&out, "  ", w, "\n");
  }
  absl::StrAppend(&out, "\nVerdict: ",
                  report.RunsUnchanged()
                      ? "runs unchanged on Tempest"
                      : (report.NeedsPlugins() ? "needs plugins before it can run"
                                               : "fix the problems above before it can run"),
                  "\n");
  return out;
}

}  // namespace tempest::cli
