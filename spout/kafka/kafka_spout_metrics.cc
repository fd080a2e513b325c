#include "spout/kafka/kafka_spout_metrics.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/core/kafka_spout_metric_names.h"

namespace tempest::spout {
namespace {

namespace names = core::kafka_spout_metrics;

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
  lag = &registry.GetGauge(std::string(names::kLag), l);
  // Lag in time: the newest fetched record's timestamp minus that of the
  // first record not yet committed (0 when caught up).
  lag_ms = &registry.GetGauge(std::string(names::kLagMs), l);
  lag_ms->Set(-1);
  log_end = &registry.GetGauge(std::string(names::kLogEndOffset), l);
  log_end->Set(-1);
  committed = &registry.GetGauge(std::string(names::kCommittedOffset), l);
  emitted = &registry.GetGauge(std::string(names::kLatestEmittedOffset), l);
  pending = &registry.GetGauge(std::string(names::kPending), l);
  blocked_seconds = &registry.GetGauge(std::string(names::kCommitBlockedSeconds), l);
  blocked_offset = &registry.GetGauge(std::string(names::kCommitBlockedOffset), l);
  paused = &registry.GetGauge(std::string(names::kPaused), l);
  lost = &registry.GetCounter(std::string(names::kLostMessages), l);
  dropped = &registry.GetCounter(std::string(names::kDroppedPending), l);
  dead_lettered = &registry.GetCounter(std::string(names::kDeadLettered), l);
  out_of_range = &registry.GetCounter(std::string(names::kOutOfRange), l);
}

}  // namespace tempest::spout
