#ifndef TEMPEST_COMMON_KAFKA_KAFKA_READER_H_
#define TEMPEST_COMMON_KAFKA_KAFKA_READER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/handles.h"
#include "common/kafka/topic_partition.h"

namespace tempest::kafka {

// One record as handed to a Poll sink. The views point into librdkafka's
// buffers and are valid only during the sink call.
struct KafkaRecord {
  std::string_view topic;
  int32_t partition = 0;
  int64_t offset = 0;
  std::string_view key;  // empty when the record has no key
  std::string_view value;
  bool has_key = false;
  bool has_value = false;  // false for a null value (a tombstone)
  int64_t timestamp_ms = -1;
};

// Something that happened to a partition during Poll, other than a record.
struct PartitionEvent {
  enum class Kind {
    kOutOfRange,      // the requested offset no longer (or not yet) exists
    kEndOfPartition,  // caught up with the log end (offset = log-end offset)
    kError,           // any other consume error (message says which)
  };
  Kind kind = Kind::kError;
  TopicPartition partition;
  int64_t offset = -1;
  std::string message;
};

struct KafkaReaderOptions {
  std::string bootstrap_servers;
  std::string client_id = "tempest";
  // Extra librdkafka properties (e.g. "fetch.wait.max.ms"), applied last.
  std::map<std::string, std::string> properties;
};

// Reads explicitly chosen partitions from explicit offsets with librdkafka's
// partition (simple) consumer: no consumer group, no automatic offset
// commits, and no automatic offset reset. Offsets are the caller's business
// (the KafkaSpout keeps them in ZooKeeper), and an offset that retention
// removed is reported as kOutOfRange, never silently skipped.
//
// Records for every started partition arrive through one queue, drained in
// batches by Poll. Owns the librdkafka handle, the topic handles and the
// queue. Single-threaded: use it from one thread (the spout's executor);
// librdkafka's own threads only fill the queue.
class KafkaReader {
 public:
  static absl::StatusOr<std::unique_ptr<KafkaReader>> Create(const KafkaReaderOptions& options);
  ~KafkaReader();
  KafkaReader(const KafkaReader&) = delete;
  KafkaReader& operator=(const KafkaReader&) = delete;

  // Starts fetching `partition` at `offset` (>= 0). Restarting a started
  // partition repositions it.
  absl::Status Start(const TopicPartition& partition, int64_t offset);
  absl::Status Stop(const TopicPartition& partition);
  bool IsStarted(const TopicPartition& partition) const;

  // Waits up to `timeout` for the first record, then drains up to
  // `max_records` without waiting, calling `sink` for each. Returns the
  // non-record events seen. Records of a stopped partition are dropped.
  std::vector<PartitionEvent> Poll(size_t max_records, std::chrono::milliseconds timeout,
                                   const std::function<void(const KafkaRecord&)>& sink);

  // (low, high) watermarks from the partition leader; high is the log end.
  absl::StatusOr<std::pair<int64_t, int64_t>> Watermarks(const TopicPartition& partition,
                                                         std::chrono::milliseconds timeout);
  // The last (low, high) watermarks librdkafka learnt from fetch responses,
  // without a network round trip; NotFound before the first fetch.
  absl::StatusOr<std::pair<int64_t, int64_t>> CachedWatermarks(const TopicPartition& partition);
  // storm-kafka's startOffsetTime: -2 earliest, -1 latest, else the first
  // offset with a timestamp >= `time` (ms since the epoch), or the log end.
  absl::StatusOr<int64_t> OffsetForTime(const TopicPartition& partition, int64_t time,
                                        std::chrono::milliseconds timeout);
  // Every partition of `topics`, sorted, from cluster metadata.
  absl::StatusOr<std::vector<TopicPartition>> Partitions(const std::vector<std::string>& topics,
                                                         std::chrono::milliseconds timeout);
  // The names of every topic the cluster has, from one metadata request for
  // all topics: unlike a request naming a topic, it never makes a broker
  // that auto-creates topics (librdkafka's mock cluster, `tempest
  // dev-kafka`) create one. Tools check a name here before asking about it.
  absl::StatusOr<std::vector<std::string>> ListTopics(std::chrono::milliseconds timeout);
  // (host, port) of the partition's current leader, for storm-kafka's
  // "broker" field; ("", 0) when unknown.
  std::pair<std::string, int> Leader(const TopicPartition& partition,
                                     std::chrono::milliseconds timeout);
  // Every partition's leader of `topic` from one metadata request.
  std::map<int, std::pair<std::string, int>> Leaders(const std::string& topic,
                                                     std::chrono::milliseconds timeout);

 private:
  KafkaReader() = default;
  absl::StatusOr<rd_kafka_topic_t*> OpenTopic(const std::string& topic);

  // Declared in the order they are made; the queue and the topics belong to
  // the client and are destroyed first.
  ClientHandle rk_;
  QueueHandle queue_;
  std::map<std::string, TopicHandle> topics_;
  std::map<TopicPartition, bool> started_;
};

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_KAFKA_READER_H_
