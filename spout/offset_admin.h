#ifndef TEMPEST_SPOUT_OFFSET_ADMIN_H_
#define TEMPEST_SPOUT_OFFSET_ADMIN_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"
#include "spout/storm_kafka_offset.h"

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
  // The live owner (ephemeral node under @owners), if any: its ZooKeeper
  // session and a description of who holds it.
  int64_t owner_session = 0;
  std::string owner;
  // Filled when a Kafka endpoint was given.
  std::optional<int64_t> log_end_offset;
  std::optional<int64_t> lag;
};

// Lists every partition_N node under {zk_root}/{spout_id} (and under its
// {topic}/ children for multi-topic spouts), sorted by (topic, partition).
// Nodes that do not parse are listed with parse_error, never skipped.
absl::StatusOr<std::vector<StoredPartitionOffset>> ListStoredOffsets(coord::ZkSession& session,
                                                                     const std::string& zk_root,
                                                                     const std::string& spout_id);

// Adds log-end offsets and lag from Kafka (bootstrap servers) to `offsets`.
absl::Status AddKafkaLag(const std::string& bootstrap_servers,
                         std::vector<StoredPartitionOffset>& offsets,
                         std::chrono::milliseconds timeout);

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
};

// Writes a committed offset in storm-kafka's JSON. Refuses (FailedPrecondition)
// while a live owner holds the partition unless `force`. Keeps the topology
// id/name and broker of an existing node; the write is a versioned set, so a
// concurrent commit makes it fail (Aborted) instead of being lost.
absl::StatusOr<StoredPartitionOffset> SetStoredOffset(coord::ZkSession& session,
                                                      const SetOffsetRequest& request);

// The (low, high) watermarks of a partition, for --to-earliest / --to-latest.
absl::StatusOr<std::pair<int64_t, int64_t>> KafkaWatermarks(const std::string& bootstrap_servers,
                                                            const std::string& topic, int partition,
                                                            std::chrono::milliseconds timeout);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_OFFSET_ADMIN_H_
