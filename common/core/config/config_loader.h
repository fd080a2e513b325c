#ifndef TEMPEST_COMMON_CORE_CONFIG_LOADER_H_
#define TEMPEST_COMMON_CORE_CONFIG_LOADER_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/config.h"

namespace tempest::core {

// A parsed configuration plus what was odd about it.
struct LoadedConfig {
  api::Config config;
  std::vector<std::string> warnings;  // e.g. "storm.yaml:3: unknown config key 'foo.bar'"
};

// Where each key of an effective configuration got its value: "default"
// (Storm's defaults), "file:/abs/path/tempest.yaml" or "command line" (a
// `-c key=value`). The operator reads these in the REST API and the UI.
using ConfigOrigins = std::map<std::string, std::string, std::less<>>;
inline constexpr std::string_view kOriginDefault = "default";
inline constexpr std::string_view kOriginCommandLine = "command line";
// "file:" and the file's absolute path.
std::string FileOrigin(std::string_view path);

// A daemon's configuration as it runs, with the origin of every key.
struct EffectiveConfig {
  api::Config config;
  ConfigOrigins origins;              // one entry per key of `config`
  std::vector<std::string> warnings;  // the file's and the overrides' unknown keys
};

// Builds the effective configuration: Storm-compatible defaults, then a
// tempest.yaml / storm.yaml file, then `-c key=value` overrides (the value
// parsed as YAML, as `storm -c` does). Unknown keys are warnings, never
// errors, so a Storm user's storm.yaml loads unchanged; keys under
// "tempest." are Tempest's own and always accepted. Stateless; any thread.
//
//   LoadedConfig c = *ConfigLoader::LoadFile("/etc/tempest/tempest.yaml");
//   ConfigLoader::ApplyOverride(c.config, "topology.workers=4");
class ConfigLoader {
 public:
  // Storm's defaults for the keys Tempest uses now (topology.workers 1,
  // topology.acker.executors null, topology.message.timeout.secs 30,
  // topology.max.spout.pending null, topology.enable.message.timeouts true,
  // topology.tick.tuple.freq.secs null, topology.debug false,
  // storm.zookeeper.* as in Storm's defaults.yaml, root "/tempest").
  static api::Config Defaults();
  // Whether `key` is a configuration key Tempest knows (Storm or tempest.*).
  static bool IsKnownKey(std::string_view key);

  // Parses YAML text (a top-level map) over the defaults. `file_name` is used
  // in messages only. A syntax error is InvalidArgument "file:line: ...".
  static absl::StatusOr<LoadedConfig> Parse(std::string_view yaml_text, std::string_view file_name);
  // Reads and parses a file (NotFound if it cannot be read).
  static absl::StatusOr<LoadedConfig> LoadFile(const std::string& path);
  // Applies "key=value"; InvalidArgument for a missing '=' or bad YAML.
  // Returns a warning text for unknown keys, empty otherwise.
  static absl::StatusOr<std::string> ApplyOverride(api::Config& config,
                                                   std::string_view key_equals_value);

  // The one way a daemon loads its config: the defaults, then `config_file`
  // (none when empty), then each override in order, each key's origin
  // being the last of these that set it. Errors as LoadFile/ApplyOverride.
  static absl::StatusOr<EffectiveConfig> LoadEffective(const std::string& config_file,
                                                       const std::vector<std::string>& overrides);
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_CONFIG_LOADER_H_
