#ifndef TEMPEST_SPOUT_KAFKA_SPOUT_METRICS_H_
#define TEMPEST_SPOUT_KAFKA_SPOUT_METRICS_H_

#include "common/core/metrics_registry.h"
#include "spout/kafka/offsets/partition_assignment.h"

namespace tempest::spout {

// One partition's KafkaSpout metrics (tempest_kafka_spout_*), labelled with
// the task's labels plus topic and partition. The registry owns the metrics;
// this only points at them. Updated on the spout's executor thread.
struct KafkaPartitionMetrics {
  KafkaPartitionMetrics(core::MetricsRegistry& registry, const core::MetricLabels& task_labels,
                        const TopicPartition& tp);

  core::Gauge* lag;
  core::Gauge* lag_ms;   // -1 while unknown
  core::Gauge* log_end;  // -1 while unknown
  core::Gauge* committed;
  core::Gauge* emitted;
  core::Gauge* pending;
  core::Gauge* blocked_seconds;
  core::Gauge* blocked_offset;
  core::Gauge* paused;
  core::Counter* lost;
  core::Counter* dropped;
  core::Counter* dead_lettered;
  core::Counter* out_of_range;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_SPOUT_METRICS_H_
