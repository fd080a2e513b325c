// Fuzzes the configuration loader: arbitrary bytes as a tempest.yaml /
// storm.yaml file, and as a `-c key=value` override applied over it. Then
// reads every key of the result through the typed getters the daemons use.
// Bad input must be an error status (or a warning), never a crash.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/core/config/config_loader.h"
#include "common/core/topology/task_layout.h"

namespace {

void ReadBack(const tempest::api::Config& config) {
  for (const auto& [key, value] : config.entries()) {
    (void)tempest::core::ConfigLoader::IsKnownKey(key);
    (void)config.GetInt(key, 0);
    (void)config.GetDouble(key, 0);
    (void)config.GetBool(key, false);
    (void)config.GetString(key, "");
    (void)config.GetOptionalInt(key);
  }
  (void)tempest::core::TaskLayout::AckerExecutors(config);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using tempest::core::ConfigLoader;

  absl::StatusOr<tempest::core::LoadedConfig> loaded = ConfigLoader::Parse(text, "tempest.yaml");
  tempest::api::Config config = loaded.ok() ? loaded->config : ConfigLoader::Defaults();
  if (loaded.ok()) ReadBack(config);

  // The same bytes as one override: "key=value", the value parsed as YAML.
  absl::StatusOr<std::string> warning = ConfigLoader::ApplyOverride(config, text);
  if (warning.ok()) ReadBack(config);
  return 0;
}
