#ifndef TEMPEST_COMMON_CORE_STORED_TOPOLOGY_H_
#define TEMPEST_COMMON_CORE_STORED_TOPOLOGY_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/core/config/config_loader.h"
#include "common/core/flux/flux_loader.h"
#include "common/core/topology/topology_def.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::core {

// What a submitter hands to nimbus, before anything is stored.
struct TopologySource {
  std::string_view flux_text;
  std::string_view file_name;      // names the text in error messages
  std::string_view name_override;  // replaces the Flux `name` when non-empty
  // key -> value as YAML/JSON text (like `-c key=value`), applied over the
  // Flux file's own config.
  const std::map<std::string, std::string>* config_overrides = nullptr;
  // component -> executor count (rebalance -e); the task count stays as
  // submitted, as in Storm.
  const std::map<std::string, int>* component_executors = nullptr;
  // How the text is loaded; nullptr: FluxOptions{}, which reads no file
  // (a text with `includes` is refused). Only the submitting client, loading
  // its own files before it sends them, passes options that read includes.
  const FluxOptions* flux = nullptr;
  // When set, filled with where each key of the effective config came from:
  // kOriginDefault, kTopologyOrigin (the Flux file's `config:` and the
  // topology's name) or kOverrideOrigin (`config_overrides`).
  ConfigOrigins* config_origins = nullptr;
};

inline constexpr std::string_view kTopologyOrigin = "topology";
inline constexpr std::string_view kOverrideOrigin = "override";

// Loads a submitted topology the one way nimbus and every worker agree on:
// the Flux text, its effective config (Storm's defaults, the file's
// `config:`, then the overrides, plus topology.name) and any executor
// counts changed by rebalance. Not validated against a registry (callers
// do that); InvalidArgument for bad YAML, a bad override or an executor
// count for an unknown component or below 1.
absl::StatusOr<TopologyDef> LoadTopologySource(const TopologySource& source);

// The definition stored in {root}/storms/{id}, as LoadTopologySource reads
// it (the stored name, overrides and component_executors); `config_origins`
// as in TopologySource.
absl::StatusOr<TopologyDef> LoadStoredTopology(const v1::StormBase& base,
                                               ConfigOrigins* config_origins = nullptr);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_STORED_TOPOLOGY_H_
