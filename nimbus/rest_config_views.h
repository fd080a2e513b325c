#ifndef TEMPEST_NIMBUS_REST_CONFIG_VIEWS_H_
#define TEMPEST_NIMBUS_REST_CONFIG_VIEWS_H_

#include <string>
#include <string_view>

#include "common/api/config.h"
#include "common/core/config/config_loader.h"
#include "nlohmann/json.hpp"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// The configuration pages: what the cluster and each topology run with, and
// where each value came from. Values of keys that hold credentials
// (core::IsSecretConfigKey) read "<redacted>" everywhere. Pure.

// Nimbus's effective config and its origins (core::ConfigLoader::LoadEffective).
struct ClusterConfigRef {
  const api::Config* config = nullptr;  // nullptr: none known
  const core::ConfigOrigins* origins = nullptr;
};

// The origin of a key nimbus has no record of (a config built in code).
inline constexpr std::string_view kUnknownOrigin = "unknown";
// The origin, on a topology's page, of a value the cluster's config gives.
inline constexpr std::string_view kClusterOrigin = "cluster";

// A config as one JSON object, key -> value, credentials redacted.
nlohmann::json ConfigJson(const api::Config& config);

// GET /api/v1/cluster/configuration: ConfigJson of the daemon's config,
// Storm UI's shape.
std::string RenderClusterConfiguration(const api::Config& config);
// GET /api/v1/cluster/configuration?origin=1:
// {"configuration": <the plain answer>, "origins": {key: origin}}.
std::string RenderClusterConfigurationWithOrigins(const api::Config& config,
                                                  const core::ConfigOrigins& origins);

// A topology's effective config as its workers' components and the daemons
// see it, and the origin of each key: the topology's own settings (its Flux
// `config:` and name: "topology"; submit/rebalance overrides: "override")
// first; then, for keys outside topology.* (ZooKeeper, nimbus, supervisor,
// ui, ...: the daemons' settings, which the topology's defaults do not
// change), the cluster's value ("cluster"); then Storm's defaults
// ("default"). Cluster-file topology.* keys do not reach a topology, so
// they are not shown as its values. Both objects are empty if the stored
// definition no longer loads.
struct TopologyConfiguration {
  nlohmann::json values = nlohmann::json::object();
  nlohmann::json origins = nlohmann::json::object();
};
TopologyConfiguration EffectiveTopologyConfiguration(const v1::StormBase& base,
                                                     const ClusterConfigRef& cluster);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_REST_CONFIG_VIEWS_H_
