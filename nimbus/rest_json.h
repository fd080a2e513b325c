#ifndef TEMPEST_NIMBUS_REST_JSON_H_
#define TEMPEST_NIMBUS_REST_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "nimbus/rest_model.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {

// Spellings and rows the REST renderers share (rest_views.cc,
// rest_cluster_views.cc). Pure.

// Storm hides its system components and streams (the acker, __ack_init,
// __tick, ...) unless asked (`sys=1`).
bool IsSystemId(std::string_view id);
// Storm UI's spelling of a latency: milliseconds as a string, 3 decimals.
std::string LatencyMs(int64_t us);
// The mean of sampled latencies in that spelling ("0.000" without samples).
std::string MeanMs(int64_t sum_us, int64_t samples);
// Storm UI's uptime spelling: "1d 2h 3m 4s" (leading zero units left out).
std::string PrettyUptime(int64_t secs);

// The fields a topology's row and page share: id, name, status, uptime,
// counts of tasks, executors and workers, owner, and the running totals
// of its current workers' slots (emitted, acked, failed, p99 complete
// latency, workerRestarts, and topologyStats with their all-time window),
// and the assignment: assignmentVersion, workersApplying (assigned workers
// not running it yet) and lastAssignmentChange.
nlohmann::json TopologyTotalsJson(const TopologyView& view, int64_t now_secs);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_REST_JSON_H_
