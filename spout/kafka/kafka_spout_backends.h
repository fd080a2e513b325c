#ifndef TEMPEST_SPOUT_KAFKA_SPOUT_BACKENDS_H_
#define TEMPEST_SPOUT_KAFKA_SPOUT_BACKENDS_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"
#include "spout/kafka/dead_letter_producer.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/offset_store.h"
#include "spout/kafka/partition_source.h"
#include "spout/kafka/record_window.h"

namespace tempest::spout {

class ZkOffsetStore;

// What KafkaSpout::Open knows when it builds its collaborators.
struct KafkaSpoutSite {
  const KafkaSpoutConfig* config = nullptr;  // resolved against the topology config
  std::string offsets_connect;               // ZooKeeper connect string for offsets
  coord::ZkClientConfig zk_config;
  std::string topology_id;
  int task_id = 0;
  std::string owner_description;  // "topology:component:task@host", written into owner nodes
  core::MetricsRegistry* metrics = nullptr;
  core::MetricLabels labels;  // component / task
};

// Where a KafkaSpout writes records past their retry limit (the real one is
// a DeadLetterProducer). Owned and called by the spout's executor thread;
// outcomes come back through the callback it was built with, from inside
// Poll (or the destructor, which waits a bounded time for them).
class DeadLetterSink {
 public:
  virtual ~DeadLetterSink() = default;
  // False if the record could not be queued; then no outcome follows.
  virtual bool Send(const TopicPartition& source, const RecordWindow::Record& record,
                    const DeadLetterProducer::Ref& ref) = 0;
  // Serves ready outcomes; never blocks.
  virtual void Poll() = 0;
};

// Builds a KafkaSpout's offset store and partition source at Open, and its
// dead-letter sink once the brokers are known, all on the executor thread.
// An empty function means the real one (ZkOffsetStore, or
// KafkaGroupOffsetStore when the config keeps offsets in Kafka;
// KafkaPartitionSource, DeadLetterProducer); unit tests pass fakes.
struct KafkaSpoutBackends {
  using DeadLetterFactory = std::function<absl::StatusOr<std::unique_ptr<DeadLetterSink>>(
      const std::string& bootstrap_servers, const KafkaSpoutConfig& config,
      DeadLetterProducer::OutcomeCallback on_outcome)>;

  std::function<absl::StatusOr<std::unique_ptr<OffsetStore>>(const KafkaSpoutSite&)> offset_store;
  std::function<std::unique_ptr<PartitionSource>(const KafkaSpoutSite&)> partition_source;
  DeadLetterFactory dead_letter;
};

// The real ones, built from the site exactly as production runs them. The
// ZooKeeper store comes as itself: its session also serves the spout's
// rewind watcher.
absl::StatusOr<std::unique_ptr<ZkOffsetStore>> MakeZkOffsetStore(const KafkaSpoutSite& site);
// storm-kafka-client's: the offsets in the Kafka consumer group.
absl::StatusOr<std::unique_ptr<OffsetStore>> MakeKafkaGroupOffsetStore(const KafkaSpoutSite& site);
std::unique_ptr<PartitionSource> MakeKafkaPartitionSource(const KafkaSpoutSite& site);
absl::StatusOr<std::unique_ptr<DeadLetterSink>> MakeDeadLetterProducer(
    const std::string& bootstrap_servers, const KafkaSpoutConfig& config,
    DeadLetterProducer::OutcomeCallback on_outcome);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_SPOUT_BACKENDS_H_
