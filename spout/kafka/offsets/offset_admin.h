#ifndef TEMPEST_SPOUT_OFFSET_ADMIN_H_
#define TEMPEST_SPOUT_OFFSET_ADMIN_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"

namespace tempest::spout {

// One partition's committed offset as stored by a KafkaSpout (ours or legacy
// storm-kafka's) under {zkRoot}/{id}.
struct StoredPartitionOffset {
  std::string topic;  // from the node, else from the {topic}/ level
  int partition = 0;
  std::string path;
  std::optional<StormKafkaOffset> state;  // nullopt when the node does not parse
  std::string parse_error;                // why it did not parse
  int version = 0;                        // the node's version
  bool stored = true;                     // false: Kafka has the partition, ZooKeeper no node
  // The live owner (ephemeral node under @owners), if any: its ZooKeeper
  // session and a description of who holds it.
  int64_t owner_session = 0;
  std::string owner;           // readable: "host/topology/component:task" (or the raw record)
  std::string owner_host;      // parsed from the owner record when it has them
  std::string owner_topology;
  std::string owner_task;      // "component:task"
  // Filled when a Kafka endpoint was given.
  std::optional<int64_t> log_start_offset;
  std::optional<int64_t> log_end_offset;
  std::optional<int64_t> lag;
  // The stored offset lies outside [log start, log end]: the spout handles
  // it under its outOfRangePolicy; lag is then not meaningful.
  bool out_of_range = false;
  // What `lag` counts from: "committed", or, without a stored offset, the
  // start policy ("earliest", "latest", "time T"); empty while unknown.
  std::string lag_basis;
  // Why Kafka could not give this partition's log range (lag unknown).
  std::string kafka_error;
};

// storm-kafka's startOffsetTime values.
inline constexpr int64_t kStartEarliest = -2;
inline constexpr int64_t kStartLatest = -1;

// Reads the owner node at `path` into `out` (owner_session 0: none).
void ReadOwner(coord::ZkSession& session, const std::string& path, StoredPartitionOffset& out);

// Lists every partition_N node under {zk_root}/{spout_id} (and under its
// {topic}/ children for multi-topic spouts), sorted by (topic, partition).
// Nodes that do not parse are listed with parse_error, never skipped.
absl::StatusOr<std::vector<StoredPartitionOffset>> ListStoredOffsets(coord::ZkSession& session,
                                                                     const std::string& zk_root,
                                                                     const std::string& spout_id);

// Adds log-start and log-end offsets and lag from Kafka (bootstrap servers)
// to `offsets`, and a row (stored = false) for every partition of the topics
// (those of `offsets` and `extra_topics`) that has no stored node; sorted.
// The lag is the log end (asked of the partition's leader, never a cached
// fetch position) minus the stored offset; a partition without one counts
// from where a spout would start it, `start_offset_time` (kStartEarliest:
// the log start, kStartLatest: nothing to read, else the first offset at or
// after that time in ms); spout/kafka/kafka_lag.h is the contract built on this.
absl::Status AddKafkaLag(const std::string& bootstrap_servers,
                         std::vector<StoredPartitionOffset>& offsets,
                         std::chrono::milliseconds timeout,
                         const std::vector<std::string>& extra_topics = {},
                         const std::string& zk_root = "", const std::string& spout_id = "",
                         int64_t start_offset_time = kStartEarliest);

// The lag of a partition with no stored offset whose log holds [low, high),
// for a spout starting at `start` (clamped to the log). Pure.
int64_t LagFromStart(int64_t start, int64_t low, int64_t high);
// How `start_offset_time` reads in lag_basis: "earliest", "latest", "time T".
std::string StartPolicyName(int64_t start_offset_time);

// Sum of the known lags of `offsets` and how many have none (unknown, or a
// stored offset outside the log).
struct LagTotals {
  int64_t total = 0;
  int unknown = 0;
};
LagTotals SumLag(const std::vector<StoredPartitionOffset>& offsets);

struct SetOffsetRequest {
  std::string zk_root;
  std::string spout_id;
  std::string topic;
  int partition = 0;
  int64_t offset = 0;
  // Multi-topic spouts keep a {topic}/ level; detected from the existing node
  // when unset.
  std::optional<bool> topic_level;
  bool force = false;  // write even while a live owner holds the partition
  std::string actor;   // who writes, for the journal ("tempest offsets set (user@host)")
};

// Writes a committed offset in storm-kafka's JSON, with a "manual set"
// journal entry in the same multi. Refuses (FailedPrecondition) while a live
// owner holds the partition unless `force`. Keeps the topology id/name and
// broker of an existing node; the write is versioned, so a concurrent commit
// makes it fail (Aborted) instead of being lost.
absl::StatusOr<StoredPartitionOffset> SetStoredOffset(coord::ZkSession& session,
                                                      const SetOffsetRequest& request);

// The (low, high) watermarks of a partition, for --to-earliest / --to-latest.
absl::StatusOr<std::pair<int64_t, int64_t>> KafkaWatermarks(const std::string& bootstrap_servers,
                                                            const std::string& topic, int partition,
                                                            std::chrono::milliseconds timeout);

// One Kafka connection for the lookups of `tempest offsets set`. It never
// names a topic to Kafka before the cluster's topic list shows it exists.
class OffsetsKafka {
 public:
  static absl::StatusOr<std::unique_ptr<OffsetsKafka>> Connect(const std::string& bootstrap,
                                                               std::chrono::milliseconds timeout);
  ~OffsetsKafka();
  // The topic's partition numbers, sorted (NotFound: no such topic).
  absl::StatusOr<std::vector<int>> Partitions(const std::string& topic);
  absl::StatusOr<std::pair<int64_t, int64_t>> Watermarks(const std::string& topic, int partition);
  // The first offset with a timestamp >= time_ms, else the log end.
  absl::StatusOr<int64_t> OffsetForTime(const std::string& topic, int partition, int64_t time_ms);

 private:
  // NotFound "Kafka has no topic T" unless the cluster lists it: every
  // lookup above asks this first, so no topic name reaches a broker that
  // would create it.
  absl::Status CheckTopic(const std::string& topic);

  OffsetsKafka() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::chrono::milliseconds timeout_{10000};
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_OFFSET_ADMIN_H_
