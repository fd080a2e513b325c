#ifndef TEMPEST_SPOUT_STORM_KAFKA_OFFSET_H_
#define TEMPEST_SPOUT_STORM_KAFKA_OFFSET_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace tempest::spout {

// One partition's committed state in legacy storm-kafka's ZooKeeper format:
// {"topology":{"id":..,"name":..},"offset":N,"partition":N,
//  "broker":{"host":..,"port":..},"topic":..}
// `offset` is the first offset not yet known to be processed (the resume
// point), exactly as storm-kafka's PartitionManager writes it.
struct StormKafkaOffset {
  std::string topology_id;
  std::string topology_name;
  int64_t offset = 0;
  int32_t partition = 0;
  std::string broker_host;
  int32_t broker_port = 0;
  std::string topic;
};

// Serializes with storm-kafka's key order, so byte-level diffs against nodes
// written by Storm stay readable.
std::string EncodeStormKafkaOffset(const StormKafkaOffset& state);

// Parses a node written by storm-kafka (any version since 0.9) or by Tempest.
// storm-kafka only ever reads back `topology.id` and `offset`; those two are
// required, the rest are taken when present and well-typed. Anything that is
// not a JSON object with an integral, non-negative offset is InvalidArgument
// with a message naming the problem; this never crashes on hostile input.
absl::StatusOr<StormKafkaOffset> DecodeStormKafkaOffset(const std::string& json);

// ZooKeeper paths, following storm-kafka: {zkRoot}/{id}/partition_{N}, with a
// {topic}/ level when the spout reads several topics.
std::string OffsetNodePath(const std::string& zk_root, const std::string& spout_id,
                           const std::string& topic, int partition, bool topic_level);
// The ephemeral ownership node for the same partition. It lives under
// "@owners", a name no Kafka topic can have ('@' is not allowed in topic
// names), so tools that list {zkRoot}/{id} for partition_N or topic children
// never mistake it for offsets.
std::string OwnerNodePath(const std::string& zk_root, const std::string& spout_id,
                          const std::string& topic, int partition, bool topic_level);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_STORM_KAFKA_OFFSET_H_
