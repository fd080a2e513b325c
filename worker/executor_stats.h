#ifndef TEMPEST_WORKER_EXECUTOR_STATS_H_
#define TEMPEST_WORKER_EXECUTOR_STATS_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/core/metrics_registry.h"
#include "common/core/topology/task_layout.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::worker {

// Storm's executor statistics for the worker's heartbeat, read from the
// series the executors keep in the metrics registry (spout_executor.cc,
// bolt_executor.cc, task_router.cc): per task and output stream
// tempest_emitted_total / tempest_transferred_total, a spout's
// tempest_acked_total / tempest_failed_total / tempest_complete_latency_us
// per stream, a bolt's tempest_executed_total / acked / failed and
// tempest_execute_latency_us / tempest_process_latency_us per input stream
// (labels input_component, input_stream). Tasks are summed into the
// executor that runs them. Pure; the heartbeat thread calls it once a beat.
std::vector<v1::ExecutorStats> CollectExecutorStats(
    const std::vector<core::MetricSample>& samples,
    const std::vector<core::ExecutorInfo>& executors, const std::set<std::string>& spouts,
    int64_t uptime_secs);

// Adds the counts of `previous` (the last beat of the slot's previous
// worker, itself carrying what came before) into `current`, executor by
// executor (same tasks and component) and stream by stream, so a restarted
// worker's all-time statistics continue instead of starting from zero.
// Executors or streams the previous worker had and this one has not are
// kept as they were.
void AddCarriedStats(const google::protobuf::RepeatedPtrField<v1::ExecutorStats>& previous,
                     std::vector<v1::ExecutorStats>& current);

// The registry snapshot as the local heartbeat's MetricPoints.
void ToMetricPoints(const std::vector<core::MetricSample>& samples,
                    google::protobuf::RepeatedPtrField<v1::MetricPoint>& out);

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_EXECUTOR_STATS_H_
