#ifndef TEMPEST_NIMBUS_REST_MODEL_H_
#define TEMPEST_NIMBUS_REST_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nimbus/topology_store.h"
#include "spout/kafka/kafka_lag.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// The REST API's view models: what the router gathers from the nimbus
// (ZooKeeper reads) before a page is rendered, and the sums every renderer
// shares (rest_views.h, rest_cluster_views.h, prometheus_view.h). Pure: no
// I/O, no clock. Safe from any thread.

// One topology as its pages read it: the record, its assignment (if any) and
// every workerbeat (renderers keep the beats of currently assigned slots).
struct TopologyView {
  StoredTopology topology;
  std::optional<v1::Assignment> assignment;
  std::vector<StoredBeat> beats;
  std::vector<StoredError> errors;  // oldest first; read for the detail pages only
  // The supervisors' records of failed workers (all slots; renderers keep
  // those of assigned slots, CurrentFailures). Read wherever beats are.
  std::vector<StoredWorkerFailure> failures;
  // Each executor's statistics per window (the keys of kStatsWindows, 0 =
  // all time), from the nimbus's StatsHistory; executors of an older layout
  // included. Filled for the pages that show statistics.
  std::map<int64_t, std::vector<v1::ExecutorStats>> stats;
  int64_t window_secs = 0;  // the window the page's tables show (?window=)
  // Live nimbuses, each holding the topology (Storm's replicationCount).
  int nimbuses = 1;
  // Each KafkaSpout's lag as nimbus measured it (Nimbus::KafkaLag); filled
  // for the lag page and /metrics.
  std::vector<spout::SpoutLag> kafka_lag;
  // Each KafkaSpout as its definition configures it (Nimbus::KafkaSpouts);
  // filled for the topology page, where `tempest upgrade` reads them.
  std::vector<spout::SpoutLagTarget> kafka_spouts;
};

// The cluster as the summaries and /metrics read it. `supervisors` and each
// topology's `beats` are filled only for the views that need them.
struct ClusterView {
  int64_t now_secs = 0;
  bool leader = false;
  // Live nimbuses: each holds every topology's code (Storm's replicationCount).
  int nimbuses = 0;
  std::vector<v1::SupervisorInfo> supervisors;
  std::vector<TopologyView> topologies;
};

// Worker slots (supervisor id, port) the assignment uses.
int AssignedWorkers(const std::optional<v1::Assignment>& a);
// The beats of the workers a topology is assigned to now (stale beats of
// slots it no longer has are left out until the leader deletes them).
std::vector<const StoredBeat*> CurrentBeats(const TopologyView& view);

// The failure records of the slots the topology is assigned to now.
std::vector<const StoredWorkerFailure*> CurrentFailures(const TopologyView& view);
// Worker restarts of each assigned slot ("{node}-{port}"): the larger of the
// worker's own count (its beat) and its supervisor's (the failure record),
// so a worker that dies before its first beat counts.
std::map<std::string, int64_t> RestartsBySlot(const TopologyView& view);
int64_t TopologyRestarts(const TopologyView& view);
// The failure records as Storm errors of the components whose executors run
// on the failing slots (errorTime: the exit), merged into `errors` in time
// order, so lastError, componentErrors and `get-errors` name a crash loop.
void AddWorkerFailureErrors(TopologyView& view);
// One line for a failing slot: "exited 1 (5 restarts): <last output line>".
std::string FailureReason(const StoredWorkerFailure& f);

// Sums over a topology's current beats. The counts are each slot's running
// totals across its worker restarts (WorkerHeartbeat), so they do not drop
// when a worker dies and its supervisor starts the next; the p99 of the
// whole topology is taken as the largest per-worker p99 (percentiles do
// not add).
struct Totals {
  int64_t emitted = 0, transferred = 0, acked = 0, failed = 0, p99_us = 0, restarts = 0;
  int workers = 0;
  void Add(const v1::WorkerHeartbeat& b);
};
Totals TotalsOf(const std::vector<const StoredBeat*>& beats);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_REST_MODEL_H_
