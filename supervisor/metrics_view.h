#ifndef TEMPEST_SUPERVISOR_METRICS_VIEW_H_
#define TEMPEST_SUPERVISOR_METRICS_VIEW_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/core/metrics_registry.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::supervisor {

// One worker slot as the supervisor's /metrics shows it.
struct WorkerMetricsSource {
  int port = 0;
  std::string topology_id;
  // The worker's latest local heartbeat that matched it (topology, port,
  // pid); null until it first beats. Shared, never modified.
  std::shared_ptr<const v1::WorkerHeartbeat> beat;
};

// What GET /metrics on a supervisor renders (docs/adr/0019): a plain model
// the HTTP handler gathers from the supervisor's two threads.
struct SupervisorMetricsView {
  std::string supervisor_id;
  std::string host;
  std::string version;
  int64_t now_secs = 0;  // wall clock of this host, for heartbeat ages
  int64_t uptime_secs = 0;
  int slots_offered = 0;
  int slots_used = 0;
  // The supervisor's own registry: its worker counters, its ZooKeeper
  // session and its HTTP server.
  std::vector<core::MetricSample> own;
  std::vector<WorkerMetricsSource> workers;  // one per port with a worker
};

// Prometheus text (0.0.4) of the supervisor's own series and of every
// worker's registry (WorkerHeartbeat.local_metrics), the worker series
// labelled as nimbus labels a topology, topology_id (the id) and topology
// (the name), and port (the slot); a worker's own topology=<id> label is
// dropped as redundant. Registry series become valid exposition:
// counters end in _total, gauges do not, histograms are summaries
// (quantiles 0.5 and 0.99, _sum, _count), and a name ending in _us or _ms
// becomes _seconds with its values converted. One # HELP and # TYPE per
// family, families sorted by name; a series whose name or label names are
// not valid Prometheus names, whose name clashes with a family of another
// type, or that repeats a series already written, is left out (the
// heartbeat file is the worker's to write). Pure: no I/O, no clock.
std::string RenderSupervisorMetrics(const SupervisorMetricsView& view);

// The topology's name in an id nimbus made ({name}-{counter}-{secs}); the id
// itself when it is not of that form.
std::string TopologyNameOf(std::string_view topology_id);

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_METRICS_VIEW_H_
