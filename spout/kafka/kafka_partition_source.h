#ifndef TEMPEST_SPOUT_KAFKA_PARTITION_SOURCE_H_
#define TEMPEST_SPOUT_KAFKA_PARTITION_SOURCE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/kafka/kafka_reader.h"
#include "spout/kafka/kafka_metadata_worker.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/partition_source.h"

namespace tempest::spout {

// The real PartitionSource: a KafkaMetadataWorker (its own thread, its own
// metadata-only reader) for metadata, and a kafka::KafkaReader (librdkafka
// partition consumer) created on ConnectReader for fetching. Owned and
// called by the spout's executor thread.
class KafkaPartitionSource : public PartitionSource {
 public:
  struct Options {
    KafkaSpoutConfig config;
    std::string topology_id;
    coord::ZkClientConfig zk_config;
  };
  explicit KafkaPartitionSource(Options options);
  ~KafkaPartitionSource() override;

  void Discover() override;
  void Resolve(const TopicPartition& tp, uint64_t tag, std::optional<StormKafkaOffset> stored,
               std::chrono::milliseconds delay) override;
  void Watermarks(const TopicPartition& tp, uint64_t tag, int64_t requested,
                  std::chrono::milliseconds delay) override;
  std::vector<MetadataResult> TakeResults() override;
  bool HasResults() const override;

  absl::Status ConnectReader(const std::string& bootstrap_servers) override;
  bool reader_connected() const override { return reader_ != nullptr; }
  absl::Status Start(const TopicPartition& tp, int64_t offset) override;
  absl::Status Stop(const TopicPartition& tp) override;
  std::vector<kafka::PartitionEvent> Poll(
      size_t max_records, std::chrono::milliseconds timeout,
      const std::function<void(const kafka::KafkaRecord&)>& sink) override;
  absl::StatusOr<std::pair<int64_t, int64_t>> CachedWatermarks(const TopicPartition& tp) override;
  void StopMetadata() override;

 private:
  std::string client_id_;
  std::map<std::string, std::string> kafka_properties_;
  KafkaMetadataWorker metadata_;
  std::unique_ptr<kafka::KafkaReader> reader_;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_PARTITION_SOURCE_H_
