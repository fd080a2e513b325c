#ifndef TEMPEST_NIMBUS_REST_VIEWS_H_
#define TEMPEST_NIMBUS_REST_VIEWS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/rest_config_views.h"
#include "nimbus/rest_model.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// The REST API's topology pages: pure functions that render the models of
// rest_model.h as the JSON bodies of Storm UI's /api/v1 (the cluster-level
// pages are rest_cluster_views.h). Renderers do no I/O and read no clock:
// `now_secs` comes with the model. Safe from any thread; field names and
// values are the public REST contract (nimbus/README.md).

// GET /api/v1/topology/:id. `configuration` is the topology's effective
// config with the cluster's daemon settings, `configurationOrigins` where
// each value came from (rest_config_views.h).
std::string RenderTopologyDetail(const TopologyView& view, int64_t now_secs,
                                 const ClusterConfigRef& cluster = {});
// GET /api/v1/topology/:id/visualization: Storm UI's graph of the topology
// (component -> type, capacity, latency, transferred, per-executor stats and
// its inputs with their groupings) for the view's window.
std::string RenderTopologyVisualization(const TopologyView& view, int64_t now_secs);
// The beat row of a spout's partition (latest emitted offset, lag in
// seconds), from the worker that got furthest with it; nullptr if none.
const v1::SpoutPartitionLag* BeatLagOf(const TopologyView& view, std::string_view component,
                                       std::string_view topic, int partition);

// GET /api/v1/topology/:id/lag.
std::string RenderTopologyLag(const TopologyView& view);
// GET /api/v1/topology/:id/component/:component; nullopt when the topology
// has no such component. `componentErrors` lists its stored errors, newest first.
std::optional<std::string> RenderComponentDetail(const TopologyView& view,
                                                 std::string_view component, int64_t now_secs);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_REST_VIEWS_H_
