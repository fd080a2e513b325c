#ifndef TEMPEST_NIMBUS_PROMETHEUS_VIEW_H_
#define TEMPEST_NIMBUS_PROMETHEUS_VIEW_H_

#include <string>

#include "nimbus/rest_model.h"

namespace tempest::nimbus {

// GET /metrics on nimbus: Prometheus text 0.0.4 of the cluster as the
// leader sees it in ZooKeeper (reads supervisors, assignments and beats).
// Pure, like the REST renderers.
std::string RenderNimbusMetrics(const ClusterView& view);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_PROMETHEUS_VIEW_H_
