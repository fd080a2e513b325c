#ifndef TEMPEST_NIMBUS_REST_CLUSTER_VIEWS_H_
#define TEMPEST_NIMBUS_REST_CLUSTER_VIEWS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nimbus/nimbus_peer.h"
#include "nimbus/rest_model.h"
#include "nlohmann/json_fwd.hpp"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// The cluster-level pages of the REST API (Storm UI's /api/v1 names): the
// cluster, supervisor, nimbus, owner and topology summaries, one
// supervisor's workers, a topology's workers and its per-stream metrics.
// Pure functions of the models in rest_model.h: no I/O, no clock. Safe from
// any thread.
//
// Resources: Tempest schedules worker slots and reserves neither memory
// nor CPU, so Storm's resource fields report the slots model: every figure
// counts worker slots (a slot is 1 of "memory" and 1 of "CPU"; off-heap is
// always 0), percentages are the share of slots in use, and
// schedulerDisplayResource is false, as Storm says under a scheduler that
// is not resource aware.

// GET /api/v1/cluster/summary (reads supervisors and assignments).
std::string RenderClusterSummary(const ClusterView& view);
// GET /api/v1/nimbus/summary.
std::string RenderNimbusSummary(const std::vector<NimbusPeer>& peers, int64_t now_secs);
// GET /api/v1/supervisor/summary (reads supervisors and assignments).
std::string RenderSupervisorSummary(const ClusterView& view);
// Slots the assignments give topologies, by supervisor id: the one count of
// used slots of the cluster summary, the supervisor rows and /metrics.
std::map<std::string, int> AssignedSlotsBySupervisor(const ClusterView& view);
// GET /api/v1/topology/summary (reads assignments and beats).
std::string RenderTopologySummary(const ClusterView& view);

// Storm's worker summary of one slot of `view`'s assignment: supervisorId,
// host, port, topologyId, topologyName, executorsTotal, componentNumTasks
// (system components left out), assignedMemOnHeap/OffHeap, assignedCpu,
// uptime/uptimeSeconds (from `beat`, 0 without one) and workerLogLink
// ("": Tempest has no log viewer; the log is worker.log in the slot's
// records directory, {storm.local.dir}/supervisor/workers/{port}, on its
// supervisor).
nlohmann::json WorkerSlotJson(const TopologyView& view, const std::string& node, int port,
                              const StoredBeat* beat);

// Storm's resource fields of a topology in the slots model, added to `body`:
// schedulerDisplayResource (false), requestedMemOnHeap, requestedTotalMem,
// requestedCpu (the requested workers), assignedMemOnHeap, assignedTotalMem,
// assignedCpu (the assigned workers), requestedMemOffHeap and
// assignedMemOffHeap (0), and replicationCount: `nimbuses`, the live
// nimbuses, as each reads the topology's code from ZooKeeper. The summary
// and the topology page share it.
void AddTopologyResources(const TopologyView& view, int nimbuses, nlohmann::json& body);
// A spout's or bolt's requestedMemOnHeap, requestedMemOffHeap and
// requestedCpu: 0, as slots are requested by the topology
// (topology.workers), not by its components.
void AddComponentResources(nlohmann::json& body);

// GET /api/v1/supervisor?id=ID or ?host=HOST (id wins; neither: every
// supervisor): the matching supervisors and the worker slots assigned on
// them. nullopt when an id is given and no supervisor has it. `view` needs
// its supervisors, assignments and beats.
std::optional<std::string> RenderSupervisorDetail(const ClusterView& view, std::string_view id,
                                                  std::string_view host);

// GET /api/v1/history/summary: "topo-history", the ids of the topologies
// nimbus stores (Tempest has no users: every caller sees them all).
std::string RenderHistorySummary(const ClusterView& view);

// GET /api/v1/owner-resources and /owner-resources/:owner (`owner`): per
// topology owner, the topologies, executors, workers, tasks and slots
// (as memory and CPU); guarantees are "N/A" (no resource-aware pools).
// An unknown owner gets an empty list, as in Storm.
std::string RenderOwnerResources(const ClusterView& view, std::optional<std::string_view> owner);

// GET /api/v1/topology-workers/:id: hostPortList of the slots the topology
// is assigned, and logviewerPort null (Tempest runs no log viewer, whatever
// logviewer.port a Storm config carries).
std::string RenderTopologyWorkers(const TopologyView& view);

// GET /api/v1/topology/:id/metrics: Storm's per-component, per-stream
// counts of `stats`, the executors' statistics in the window of
// `window_secs` (0 = all time): window, windowHint and Storm's own
// "window-hint"; spouts and bolts of `view`'s topology each with emitted,
// transferred, acked, failed and average latencies by stream. System
// components and streams (ids starting "__") only with `include_sys`.
std::string RenderTopologyMetrics(const TopologyView& view,
                                  const std::vector<v1::ExecutorStats>& stats,
                                  int64_t window_secs, bool include_sys);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_REST_CLUSTER_VIEWS_H_
