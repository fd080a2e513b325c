#ifndef TEMPEST_SPOUT_KAFKA_METADATA_WORKER_H_
#define TEMPEST_SPOUT_KAFKA_METADATA_WORKER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/serial_executor.h"
#include "common/coord/zk_session.h"
#include "common/kafka/kafka_reader.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/partition_assignment.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"

namespace tempest::spout {

// Where a freshly acquired partition starts, by storm-kafka's rules:
// no stored offset -> `current` (the offset for startOffsetTime); a stored
// offset from another topology with ignoreZkOffsets -> `current`; else the
// stored offset, unless it is more than maxOffsetBehind behind `current`.
// (storm-kafka also resets a stored offset <= 0; we do not: 0 is a valid
// resume point.) `committed` is what ZooKeeper holds (the never-backwards
// floor), or `start` when nothing is stored. Pure.
struct StartDecision {
  int64_t start = 0;
  int64_t committed = 0;
  std::string reason;
};
StartDecision DecideStart(const std::optional<StormKafkaOffset>& stored,
                          const std::string& topology_id, bool ignore_zk_offsets,
                          int64_t max_offset_behind, int64_t current);

// Answers from the metadata worker, drained by the spout's executor thread.
struct MetadataResult {
  enum class Kind { kDiscovered, kResolved, kWatermarks };
  Kind kind = Kind::kDiscovered;
  absl::Status status;
  // kDiscovered
  std::string bootstrap_servers;  // set when found in the broker registry
  std::vector<TopicPartition> partitions;
  // kResolved / kWatermarks
  TopicPartition partition;
  uint64_t tag = 0;  // the request's acquisition / epoch tag
  StartDecision decision;
  int64_t low = 0, high = 0;
  std::pair<std::string, int> leader{"", 0};
  int64_t requested = 0;  // kWatermarks: the offset that was out of range
};

// Kafka (and Kafka-registry) lookups that may block, done off the executor
// thread: partition discovery (cluster metadata, or Kafka's ZooKeeper
// registry for legacy ZkHosts), start-offset resolution and watermarks.
// Owns one SerialExecutor thread, its own metadata-only KafkaReader and, for
// ZkHosts, a ZkSession to Kafka's ZooKeeper. Requests are posted from the
// executor thread; results are collected with Take(). Thread-safe.
class KafkaMetadataWorker {
 public:
  struct Options {
    KafkaSpoutConfig config;
    std::string topology_id;
    coord::ZkClientConfig zk_config;
    std::chrono::milliseconds timeout{5000};
  };
  explicit KafkaMetadataWorker(Options options);
  ~KafkaMetadataWorker();

  void Discover();
  void Resolve(const TopicPartition& tp, uint64_t tag, std::optional<StormKafkaOffset> stored,
               std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  void Watermarks(const TopicPartition& tp, uint64_t tag, int64_t requested,
                  std::chrono::milliseconds delay = std::chrono::milliseconds(0));
  std::vector<MetadataResult> Take();
  bool HasResults() const;
  void Stop();

 private:
  void Push(MetadataResult r);
  absl::Status EnsureReader();
  // The reader's watermarks of `tp` into r.low / r.high (untouched on error).
  absl::Status FillWatermarks(const TopicPartition& tp, MetadataResult& r);
  absl::StatusOr<std::string> RegistryBootstrap();
  absl::StatusOr<std::vector<TopicPartition>> RegistryPartitions();
  absl::Status EnsureRegistrySession();

  Options options_;
  std::string bootstrap_;  // worker thread only
  std::unique_ptr<kafka::KafkaReader> reader_;
  std::unique_ptr<coord::ZkSession> registry_;
  std::map<TopicPartition, std::pair<std::string, int>> leaders_;  // worker thread only
  mutable absl::Mutex mu_;
  std::vector<MetadataResult> results_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> has_results_{false};
  coord::SerialExecutor executor_;  // last: stops before the members it uses go
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_METADATA_WORKER_H_
