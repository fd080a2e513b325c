#include "common/core/flux/stored_topology.h"

#include "absl/strings/str_cat.h"
#include "common/api/config.h"
#include "common/api/string_view_compat.h"
#include "common/core/config/config_loader.h"
#include "common/core/flux/flux_loader.h"
#include "common/core/status_macros.h"

namespace tempest::core {

using api::Sv;

absl::StatusOr<TopologyDef> LoadTopologySource(const TopologySource& source) {
  if (source.flux_text.empty()) return absl::InvalidArgumentError("the Flux topology text is empty");
  const std::string file_name =
      source.file_name.empty() ? std::string("topology.yaml") : std::string(source.file_name);
  ASSIGN_OR_RETURN(TopologyDef def,
                   FluxLoader(source.flux != nullptr ? *source.flux : FluxOptions{})
                       .LoadString(std::string(source.flux_text), file_name));
  if (!source.name_override.empty()) def.name = std::string(source.name_override);

  api::Config config = ConfigLoader::Defaults();
  config.Merge(def.config);
  if (source.config_overrides != nullptr) {
    for (const auto& [key, value] : *source.config_overrides) {
      TEMPEST_RETURN_IF_ERROR(ConfigLoader::ApplyOverride(config, absl::StrCat(key, "=", value)));
    }
  }
  config.Set(api::kTopologyName, def.name);
  if (source.config_origins != nullptr) {
    ConfigOrigins& origins = *source.config_origins;
    origins.clear();
    for (const auto& [key, value] : config.entries()) origins[key] = std::string(kOriginDefault);
    for (const auto& [key, value] : def.config.entries()) {
      origins[key] = std::string(kTopologyOrigin);
    }
    origins[std::string(api::kTopologyName)] = std::string(kTopologyOrigin);
    if (source.config_overrides != nullptr) {
      for (const auto& [key, value] : *source.config_overrides) {
        origins[key] = std::string(kOverrideOrigin);
      }
    }
  }
  def.config = config;

  if (source.component_executors != nullptr) {
    for (const auto& [component, executors] : *source.component_executors) {
      ComponentDef* c = def.FindMutableComponent(api::ComponentId(component));
      if (c == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("the topology has no component '", component, "'"));
      }
      if (executors < 1) {
        return absl::InvalidArgumentError(absl::StrCat(
            "component '", component, "' needs at least 1 executor, not ", executors));
      }
      c->num_tasks = c->NumTasks();  // tasks are fixed at submission
      c->parallelism = executors;
    }
  }
  return def;
}

absl::StatusOr<TopologyDef> LoadStoredTopology(const v1::StormBase& base,
                                               ConfigOrigins* config_origins) {
  std::map<std::string, std::string> overrides(base.config_overrides().begin(),
                                               base.config_overrides().end());
  std::map<std::string, int> executors(base.component_executors().begin(),
                                       base.component_executors().end());
  TopologySource source;
  source.flux_text = base.flux_text();
  source.file_name = base.flux_file_name();
  source.name_override = base.name();
  source.config_overrides = &overrides;
  source.component_executors = &executors;
  source.config_origins = config_origins;
  return LoadTopologySource(source);
}

}  // namespace tempest::core
