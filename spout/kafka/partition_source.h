#ifndef TEMPEST_SPOUT_PARTITION_SOURCE_H_
#define TEMPEST_SPOUT_PARTITION_SOURCE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/kafka_reader.h"
#include "spout/kafka/kafka_metadata_worker.h"
#include "spout/kafka/offsets/partition_assignment.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"

namespace tempest::spout {

// What a KafkaSpout needs from Kafka: metadata answered asynchronously
// (partition discovery, where an acquired partition starts, watermarks after
// an out-of-range fetch), and a partition reader it drives directly (start,
// stop, poll batches, cached log ends). Metadata requests only post; answers
// come back as MetadataResults through TakeResults.
//
// Owned and called by the spout's executor thread (an implementation may
// answer metadata on a thread of its own). The real one is
// KafkaPartitionSource (kafka::KafkaReader + KafkaMetadataWorker); unit tests use a
// scripted fake.
class PartitionSource {
 public:
  virtual ~PartitionSource() = default;

  // Metadata, answered through TakeResults.
  virtual void Discover() = 0;
  // `tag` comes back in the result; `delay` postpones the lookup.
  virtual void Resolve(const TopicPartition& tp, uint64_t tag,
                       std::optional<StormKafkaOffset> stored,
                       std::chrono::milliseconds delay = std::chrono::milliseconds(0)) = 0;
  virtual void Watermarks(const TopicPartition& tp, uint64_t tag, int64_t requested,
                          std::chrono::milliseconds delay = std::chrono::milliseconds(0)) = 0;
  virtual std::vector<MetadataResult> TakeResults() = 0;
  // Cheap check for the executor's hot loop.
  virtual bool HasResults() const = 0;

  // Connects the reader to `bootstrap_servers` (known from the config at
  // open, or from a discovery through Kafka's broker registry). Until then
  // nothing can be fetched.
  virtual absl::Status ConnectReader(const std::string& bootstrap_servers) = 0;
  virtual bool reader_connected() const = 0;

  // Reader calls; only valid once connected. As kafka::KafkaReader's.
  virtual absl::Status Start(const TopicPartition& tp, int64_t offset) = 0;
  virtual absl::Status Stop(const TopicPartition& tp) = 0;
  virtual std::vector<kafka::PartitionEvent> Poll(
      size_t max_records, std::chrono::milliseconds timeout,
      const std::function<void(const kafka::KafkaRecord&)>& sink) = 0;
  virtual absl::StatusOr<std::pair<int64_t, int64_t>> CachedWatermarks(
      const TopicPartition& tp) = 0;

  // Stops answering metadata (bounded); the reader stays until destruction.
  virtual void StopMetadata() = 0;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_PARTITION_SOURCE_H_
