#ifndef TEMPEST_NIMBUS_NIMBUS_PEER_H_
#define TEMPEST_NIMBUS_NIMBUS_PEER_H_

#include <string>

#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// One registered nimbus, as the nimbus summary reports it: what
// Nimbus::Nimbuses() reads from {root}/nimbuses/ and the leader election,
// and what RenderNimbusSummary (rest_cluster_views.h) renders.
struct NimbusPeer {
  std::string id;  // host:port
  v1::NimbusSummary summary;
  bool leader = false;
};

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_NIMBUS_PEER_H_
