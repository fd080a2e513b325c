#ifndef TEMPEST_WORKER_TESTING_COMPLETE_TOPOLOGY_H_
#define TEMPEST_WORKER_TESTING_COMPLETE_TOPOLOGY_H_

#include <chrono>
#include <memory>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/core/topology/topology_def.h"
#include "worker/local_cluster.h"
#include "worker/testing/tuple_capture_bolt.h"

namespace tempest::worker::testing {

struct CompleteTopologyOptions {
  LocalClusterOptions cluster;
  // How long to wait for every spout to be exhausted and every tree done
  // (Storm's default is 10 s; ours is generous for a loaded 2-core box).
  std::chrono::milliseconds timeout{30000};
};

// Storm's Testing.completeTopology: subscribes a capture bolt (global
// grouping) to every non-direct stream of every component, runs the
// topology in a LocalCluster until it is Finished() (every spout must be
// finite, e.g. FixedTupleSpout), kills it, and returns everything each
// component emitted: store->Read("split") / Read("split", "other-stream").
// DeadlineExceeded if it does not finish in time. Classes are looked up in
// `registry` (copied, plus the capture bolt). Control thread.
absl::StatusOr<std::shared_ptr<CaptureStore>> CompleteTopology(
    const core::TopologyDef& def, const api::ComponentRegistry& registry,
    CompleteTopologyOptions options = {});

}  // namespace tempest::worker::testing

#endif  // TEMPEST_WORKER_TESTING_COMPLETE_TOPOLOGY_H_
