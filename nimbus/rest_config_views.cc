#include "nimbus/rest_config_views.h"

#include <utility>

#include "absl/strings/match.h"
#include "common/core/config/secret_config.h"
#include "common/core/flux/stored_topology.h"

namespace tempest::nimbus {
namespace {

using json = nlohmann::json;

// A config value as JSON (config values are bounded in depth by the loader).
json ConfigValueJson(const api::Value& v) {
  switch (v.type()) {
    case api::Value::Type::kNil:
      return nullptr;
    case api::Value::Type::kBool:
      return v.AsBool();
    case api::Value::Type::kInt:
      return v.AsInt();
    case api::Value::Type::kDouble:
      return v.AsDouble();
    case api::Value::Type::kString:
    case api::Value::Type::kBytes:
      return v.CoerceString().value_or("");
    case api::Value::Type::kList: {
      json list = json::array();
      for (const api::Value& item : v.AsList()) list.push_back(ConfigValueJson(item));
      return list;
    }
    case api::Value::Type::kMap: {
      json map = json::object();
      for (const auto& [k, item] : v.AsMap()) map[k] = ConfigValueJson(item);
      return map;
    }
  }
  return nullptr;
}

json RedactedValue(const std::string& key, const api::Value& value) {
  return core::IsSecretConfigKey(key) ? json("<redacted>") : ConfigValueJson(value);
}

std::string OriginOf(const core::ConfigOrigins* origins, const std::string& key) {
  if (origins == nullptr) return std::string(kUnknownOrigin);
  auto it = origins->find(key);
  return it == origins->end() ? std::string(kUnknownOrigin) : it->second;
}

std::string Dump(const json& body) {
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

json ConfigJson(const api::Config& config) {
  json body = json::object();
  for (const auto& [key, value] : config.entries()) body[key] = RedactedValue(key, value);
  return body;
}

std::string RenderClusterConfiguration(const api::Config& config) {
  return Dump(ConfigJson(config));
}

std::string RenderClusterConfigurationWithOrigins(const api::Config& config,
                                                  const core::ConfigOrigins& origins) {
  json from = json::object();
  for (const auto& [key, value] : config.entries()) from[key] = OriginOf(&origins, key);
  return Dump(json{{"configuration", ConfigJson(config)}, {"origins", from}});
}

TopologyConfiguration EffectiveTopologyConfiguration(const v1::StormBase& base,
                                                     const ClusterConfigRef& cluster) {
  TopologyConfiguration out;
  core::ConfigOrigins origins;
  absl::StatusOr<core::TopologyDef> def = core::LoadStoredTopology(base, &origins);
  if (!def.ok()) return out;
  for (const auto& [key, value] : def->config.entries()) {
    out.values[key] = RedactedValue(key, value);
    out.origins[key] = OriginOf(&origins, key);
  }
  if (cluster.config == nullptr) return out;
  for (const auto& [key, value] : cluster.config->entries()) {
    if (absl::StartsWith(key, "topology.")) continue;
    const std::string own = OriginOf(&origins, key);
    if (def->config.Has(key) && own != core::kOriginDefault) continue;
    out.values[key] = RedactedValue(key, value);
    // A value nimbus itself took from Storm's defaults is a default here too,
    // not something the cluster was set up with (supervisor.slots.ports is
    // each supervisor's own; see /api/v1/supervisor/summary slotPorts).
    const bool cluster_default = cluster.origins != nullptr &&
                                 OriginOf(cluster.origins, key) == core::kOriginDefault;
    out.origins[key] =
        std::string(cluster_default ? std::string_view(core::kOriginDefault) : kClusterOrigin);
  }
  return out;
}

}  // namespace tempest::nimbus
