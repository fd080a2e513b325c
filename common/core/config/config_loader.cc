#include "common/core/config/config_loader.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/api/string_view_compat.h"
#include "common/core/config/config_keys.h"
#include "common/core/status_macros.h"
#include "common/core/yaml_checks.h"
#include "common/core/yaml_value.h"

namespace tempest::core {
namespace {

using api::Sv;

absl::Status ParseError(std::string_view file, int line, std::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(Sv(file), ":", line, ": ", Sv(msg)));
}

// Only the keys the YAML text sets (no defaults), and its warnings.
absl::StatusOr<LoadedConfig> ParseOwnKeys(std::string_view yaml_text, std::string_view file_name) {
  LoadedConfig out;
  ASSIGN_OR_RETURN(const YAML::Node root, LoadCheckedYaml(yaml_text, file_name));
  if (root.IsNull()) return out;  // empty file
  if (!root.IsMap()) return ParseError(file_name, YamlLine(root), "expected a map of config keys");
  for (const auto& kv : root) {
    const int line = YamlLine(kv.first);
    if (!kv.first.IsScalar()) return ParseError(file_name, line, "config keys must be strings");
    const std::string& key = kv.first.Scalar();
    absl::StatusOr<api::Value> v = YamlToValue(kv.second);
    if (!v.ok()) return ParseError(file_name, line, api::StdSv(v.status().message()));
    if (absl::Status s = CheckConfigValue(key, *v); !s.ok()) {
      return ParseError(file_name, YamlLine(kv.second), api::StdSv(s.message()));
    }
    if (!TempestAcceptsKey(key)) {
      out.warnings.push_back(
          absl::StrCat(Sv(file_name), ":", line, ": unknown config key '", key, "'"));
    }
    out.config.Set(key, std::move(*v));
  }
  return out;
}

absl::StatusOr<std::string> ReadConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read config file ", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// "key=value" as the key and its parsed, checked value.
absl::StatusOr<std::pair<std::string, api::Value>> ParseOverride(
    std::string_view key_equals_value) {
  size_t eq = key_equals_value.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("config override '", Sv(key_equals_value), "' is not key=value"));
  }
  std::string key(absl::StripAsciiWhitespace(Sv(key_equals_value.substr(0, eq))));
  absl::StatusOr<api::Value> v = ParseYamlValue(key_equals_value.substr(eq + 1));
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config override '", key, "': ", v.status().message()));
  }
  if (absl::Status s = CheckConfigValue(key, *v); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("config override '", key, "': ", s.message()));
  }
  return std::make_pair(std::move(key), *std::move(v));
}

}  // namespace

std::string FileOrigin(std::string_view path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(std::string(path), ec);
  return absl::StrCat("file:", ec ? std::string(path) : absolute.lexically_normal().string());
}

api::Config ConfigLoader::Defaults() {
  api::Config c;
  c.Set(api::kTopologyWorkers, 1);
  c.Set(api::kTopologyAckerExecutors, nullptr);
  c.Set(api::kTopologyMessageTimeoutSecs, 30);
  c.Set(api::kTopologyMaxSpoutPending, nullptr);
  c.Set(api::kTopologyEnableMessageTimeouts, true);
  c.Set(api::kTopologyTickTupleFreqSecs, nullptr);
  c.Set(api::kTopologyDebug, false);
  c.Set(api::kTopologyMaxTaskParallelism, nullptr);
  c.Set(api::kStormZookeeperServers, api::ValueList{"localhost"});
  c.Set(api::kStormZookeeperPort, 2181);
  c.Set(api::kStormZookeeperRoot, "/tempest");
  c.Set(api::kStormZookeeperSessionTimeout, 20000);
  c.Set(api::kStormZookeeperConnectionTimeout, 15000);
  c.Set(api::kStormZookeeperRetryTimes, 5);
  c.Set(api::kStormZookeeperRetryInterval, 1000);
  c.Set(api::kStormZookeeperRetryIntervalCeilingMillis, 30000);
  c.Set(api::kNimbusSeeds, api::ValueList{"localhost"});
  c.Set(api::kNimbusMonitorFreqSecs, 10);
  c.Set(api::kNimbusTaskTimeoutSecs, 30);
  c.Set(api::kNimbusTaskLaunchSecs, 120);
  c.Set(api::kNimbusSupervisorTimeoutSecs, 60);
  c.Set(api::kSupervisorSlotsPorts, api::ValueList{6700, 6701, 6702, 6703});
  // storm.local.dir has no default here: Storm's is "storm-local" under the
  // installation; a supervisor without one uses ./tempest-local.
  c.Set(api::kSupervisorHeartbeatFrequencySecs, 5);
  c.Set(api::kSupervisorMonitorFrequencySecs, 3);
  c.Set(api::kSupervisorWorkerTimeoutSecs, 30);
  c.Set(api::kSupervisorWorkerStartTimeoutSecs, 120);
  c.Set(api::kSupervisorWorkerShutdownSleepSecs, 3);
  c.Set(api::kWorkerHeartbeatFrequencySecs, 1);
  return c;
}

bool ConfigLoader::IsKnownKey(std::string_view key) { return TempestAcceptsKey(key); }

absl::StatusOr<LoadedConfig> ConfigLoader::Parse(std::string_view yaml_text,
                                                 std::string_view file_name) {
  ASSIGN_OR_RETURN(LoadedConfig own, ParseOwnKeys(yaml_text, file_name));
  LoadedConfig out;
  out.config = Defaults();
  out.config.Merge(own.config);
  out.warnings = std::move(own.warnings);
  return out;
}

absl::StatusOr<LoadedConfig> ConfigLoader::LoadFile(const std::string& path) {
  ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(path));
  return Parse(text, path);
}

absl::StatusOr<std::string> ConfigLoader::ApplyOverride(api::Config& config,
                                                        std::string_view key_equals_value) {
  ASSIGN_OR_RETURN(auto kv, ParseOverride(key_equals_value));
  auto& [key, value] = kv;
  config.Set(key, std::move(value));
  if (!IsKnownKey(key)) return absl::StrCat("unknown config key '", key, "'");
  return std::string();
}

absl::StatusOr<EffectiveConfig> ConfigLoader::LoadEffective(
    const std::string& config_file, const std::vector<std::string>& overrides) {
  EffectiveConfig out;
  out.config = Defaults();
  for (const auto& [key, value] : out.config.entries()) {
    out.origins[key] = std::string(kOriginDefault);
  }
  if (!config_file.empty()) {
    ASSIGN_OR_RETURN(const std::string text, ReadConfigFile(config_file));
    ASSIGN_OR_RETURN(LoadedConfig own, ParseOwnKeys(text, config_file));
    const std::string origin = FileOrigin(config_file);
    for (const auto& [key, value] : own.config.entries()) out.origins[key] = origin;
    out.config.Merge(own.config);
    out.warnings = std::move(own.warnings);
  }
  for (const std::string& kv : overrides) {
    ASSIGN_OR_RETURN(auto parsed, ParseOverride(kv));
    auto& [key, value] = parsed;
    if (!IsKnownKey(key)) out.warnings.push_back(absl::StrCat("unknown config key '", key, "'"));
    out.origins[key] = std::string(kOriginCommandLine);
    out.config.Set(key, std::move(value));
  }
  return out;
}

}  // namespace tempest::core
