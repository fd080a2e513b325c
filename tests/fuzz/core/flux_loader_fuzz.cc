// Fuzzes the Flux loader with arbitrary YAML text, the way `tempest local`,
// `submit` and nimbus read a topology: the text itself, with the --env-filter
// substitution, and as a submitted source with config overrides. Every input
// must give a TopologyDef or an error status, never a crash, and an accepted
// topology must lay out its tasks.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/core/flux_loader.h"
#include "common/core/stored_topology.h"
#include "common/core/task_layout.h"

namespace {

using tempest::core::FluxLoader;
using tempest::core::FluxOptions;

// Includes name files relative to this file's folder; a folder that does not
// exist keeps the target from reading whatever the working directory holds.
constexpr char kFileName[] = "/nonexistent-fuzz-dir/topology.yaml";

void LayOut(const tempest::core::TopologyDef& def) {
  absl::StatusOr<tempest::core::TaskLayout> layout =
      tempest::core::TaskLayout::Create(def, tempest::core::TaskLayout::AckerExecutors(def.config));
  (void)layout;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const FluxLoader plain;
  absl::StatusOr<tempest::core::TopologyDef> def = plain.LoadString(text, kFileName);
  if (def.ok()) LayOut(*def);

  static const std::map<std::string, std::string> kEnv = {{"TOPIC", "events"}, {"N", "2"}};
  const FluxLoader filtered(FluxOptions{.env_filter = true, .env = &kEnv});
  absl::StatusOr<std::string> substituted = filtered.ApplyFilters(text, kFileName);
  if (substituted.ok()) (void)filtered.LoadString(*substituted, kFileName);

  (void)FluxLoader::ParseProperties(text);

  static const std::map<std::string, std::string> kOverrides = {{"topology.workers", "2"},
                                                                {"topology.debug", "true"}};
  tempest::core::TopologySource source{.flux_text = text,
                                       .file_name = kFileName,
                                       .name_override = "fuzzed",
                                       .config_overrides = &kOverrides};
  (void)tempest::core::LoadTopologySource(source);
  return 0;
}
