#include "spout/kafka/kafka_spout_metrics.h"

#include "absl/strings/str_cat.h"

namespace tempest::spout {
namespace {

core::MetricLabels PartitionLabels(const core::MetricLabels& task_labels,
                                   const TopicPartition& tp) {
  core::MetricLabels l = task_labels;
  l["topic"] = tp.topic;
  l["partition"] = absl::StrCat(tp.partition);
  return l;
}

}  // namespace

KafkaPartitionMetrics::KafkaPartitionMetrics(core::MetricsRegistry& registry,
                                             const core::MetricLabels& task_labels,
                                             const TopicPartition& tp) {
  const core::MetricLabels l = PartitionLabels(task_labels, tp);
  lag = &registry.GetGauge("tempest_kafka_spout_lag", l);
  // Lag in time: the newest fetched record's timestamp minus that of the
  // first record not yet committed (0 when caught up).
  lag_ms = &registry.GetGauge("tempest_kafka_spout_lag_ms", l);
  lag_ms->Set(-1);
  log_end = &registry.GetGauge("tempest_kafka_spout_log_end_offset", l);
  log_end->Set(-1);
  committed = &registry.GetGauge("tempest_kafka_spout_committed_offset", l);
  emitted = &registry.GetGauge("tempest_kafka_spout_latest_emitted_offset", l);
  pending = &registry.GetGauge("tempest_kafka_spout_pending", l);
  blocked_seconds = &registry.GetGauge("tempest_kafka_spout_commit_blocked_seconds", l);
  blocked_offset = &registry.GetGauge("tempest_kafka_spout_commit_blocked_offset", l);
  paused = &registry.GetGauge("tempest_kafka_spout_paused", l);
  lost = &registry.GetCounter("tempest_kafka_spout_lost_messages", l);
  dropped = &registry.GetCounter("tempest_kafka_spout_dropped_pending", l);
  dead_lettered = &registry.GetCounter("tempest_kafka_spout_dead_lettered", l);
  out_of_range = &registry.GetCounter("tempest_kafka_spout_out_of_range", l);
}

}  // namespace tempest::spout
