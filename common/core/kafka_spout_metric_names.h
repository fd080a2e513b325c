#ifndef TEMPEST_COMMON_CORE_KAFKA_SPOUT_METRIC_NAMES_H_
#define TEMPEST_COMMON_CORE_KAFKA_SPOUT_METRIC_NAMES_H_

#include <string_view>

// The names of the KafkaSpout's per-partition metrics: one table for the
// spout that registers them (spout/kafka/kafka_spout_metrics.cc), the worker
// that reads the lag ones back out of its registry into its heartbeat
// (worker/worker_process.cc) and the supervisor that writes them to
// Prometheus with their help (supervisor/metrics_view.cc). Each series is
// labelled component, task, topic and partition. Here, below all three,
// because none of them may include another.
namespace tempest::core::kafka_spout_metrics {

// Every KafkaSpout metric name starts with it (the offset stores' too).
inline constexpr std::string_view kPrefix = "tempest_kafka_spout_";

// Gauges.
// Records between the committed offset and the log end.
inline constexpr std::string_view kLag = "tempest_kafka_spout_lag";
// The newest fetched record's timestamp minus that of the first record not
// yet committed (0 when caught up, -1 unknown).
inline constexpr std::string_view kLagMs = "tempest_kafka_spout_lag_ms";
inline constexpr std::string_view kLogEndOffset = "tempest_kafka_spout_log_end_offset";
inline constexpr std::string_view kCommittedOffset = "tempest_kafka_spout_committed_offset";
inline constexpr std::string_view kLatestEmittedOffset =
    "tempest_kafka_spout_latest_emitted_offset";
inline constexpr std::string_view kPending = "tempest_kafka_spout_pending";
inline constexpr std::string_view kCommitBlockedSeconds =
    "tempest_kafka_spout_commit_blocked_seconds";
inline constexpr std::string_view kCommitBlockedOffset =
    "tempest_kafka_spout_commit_blocked_offset";
inline constexpr std::string_view kPaused = "tempest_kafka_spout_paused";

// Counters.
inline constexpr std::string_view kLostMessages = "tempest_kafka_spout_lost_messages";
inline constexpr std::string_view kDroppedPending = "tempest_kafka_spout_dropped_pending";
inline constexpr std::string_view kDeadLettered = "tempest_kafka_spout_dead_lettered";
inline constexpr std::string_view kOutOfRange = "tempest_kafka_spout_out_of_range";

}  // namespace tempest::core::kafka_spout_metrics

#endif  // TEMPEST_COMMON_CORE_KAFKA_SPOUT_METRIC_NAMES_H_
