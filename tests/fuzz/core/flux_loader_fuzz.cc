// Fuzzes the Flux loader with arbitrary YAML text, the way `tempest local`,
// `submit` and nimbus read a topology: the text itself, with the --env-filter
// substitution, and as a submitted source with config overrides. Every input
// must give a TopologyDef or an error status, never a crash. A loaded
// topology then goes through what `local` and `submit` do next: the
// validator (limits, streams, classes of the registry), and for a valid one
// the task layout.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/core/flux/flux_loader.h"
#include "common/core/flux/stored_topology.h"
#include "common/core/topology/task_layout.h"
#include "common/core/topology/topology_validator.h"
#include "tests/unit/core/test_components.h"

namespace {

using tempest::core::FluxLoader;
using tempest::core::FluxOptions;

// Includes name files relative to this file's folder; a folder that does not
// exist keeps the target from reading whatever the working directory holds.
constexpr char kFileName[] = "/nonexistent-fuzz-dir/topology.yaml";

// The validator's registry: the core unit tests' fake components
// (test.WordSpout, test.SplitBolt, test.CountBolt, ...), which the seeds use.
void ValidateAndLayOut(const tempest::core::TopologyDef& def) {
  static const tempest::api::ComponentRegistry* registry =
      tempest::core::testing::MakeTestRegistry().release();
  const tempest::core::TopologyValidator validator(*registry);
  if (!validator.Validate(def).ok()) return;
  absl::StatusOr<tempest::core::TaskLayout> layout =
      tempest::core::TaskLayout::Create(def, tempest::core::TaskLayout::AckerExecutors(def.config));
  (void)layout;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  const FluxLoader plain;
  absl::StatusOr<tempest::core::TopologyDef> def = plain.LoadString(text, kFileName);
  if (def.ok()) ValidateAndLayOut(*def);

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
