#include "spout/kafka/kafka_partition_source.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"

namespace tempest::spout {
namespace {

KafkaMetadataWorker::Options WorkerOptions(KafkaPartitionSource::Options& options) {
  KafkaMetadataWorker::Options mo;
  mo.config = std::move(options.config);
  mo.topology_id = std::move(options.topology_id);
  mo.zk_config = options.zk_config;
  return mo;
}

}  // namespace

KafkaPartitionSource::KafkaPartitionSource(Options options)
    : client_id_(absl::StrCat("tempest-kafka-spout-", options.config.id)),
      kafka_properties_(options.config.kafka_properties),
      metadata_(WorkerOptions(options)) {}

KafkaPartitionSource::~KafkaPartitionSource() = default;

void KafkaPartitionSource::Discover() { metadata_.Discover(); }

void KafkaPartitionSource::Resolve(const TopicPartition& tp, uint64_t tag,
                                   std::optional<StormKafkaOffset> stored,
                                   std::chrono::milliseconds delay) {
  metadata_.Resolve(tp, tag, std::move(stored), delay);
}

void KafkaPartitionSource::Watermarks(const TopicPartition& tp, uint64_t tag, int64_t requested,
                                      std::chrono::milliseconds delay) {
  metadata_.Watermarks(tp, tag, requested, delay);
}

std::vector<MetadataResult> KafkaPartitionSource::TakeResults() { return metadata_.Take(); }

bool KafkaPartitionSource::HasResults() const { return metadata_.HasResults(); }

absl::Status KafkaPartitionSource::ConnectReader(const std::string& bootstrap_servers) {
  kafka::KafkaReaderOptions ro;
  ro.bootstrap_servers = bootstrap_servers;
  ro.client_id = client_id_;
  for (const auto& [k, v] : kafka_properties_) ro.properties[k] = v;
  ASSIGN_OR_RETURN(reader_, kafka::KafkaReader::Create(ro));
  return absl::OkStatus();
}

absl::Status KafkaPartitionSource::Start(const TopicPartition& tp, int64_t offset) {
  return reader_->Start(tp, offset);
}

absl::Status KafkaPartitionSource::Stop(const TopicPartition& tp) { return reader_->Stop(tp); }

std::vector<kafka::PartitionEvent> KafkaPartitionSource::Poll(
    size_t max_records, std::chrono::milliseconds timeout,
    const std::function<void(const kafka::KafkaRecord&)>& sink) {
  return reader_->Poll(max_records, timeout, sink);
}

absl::StatusOr<std::pair<int64_t, int64_t>> KafkaPartitionSource::CachedWatermarks(
    const TopicPartition& tp) {
  return reader_->CachedWatermarks(tp);
}

void KafkaPartitionSource::StopMetadata() { metadata_.Stop(); }

}  // namespace tempest::spout
