// Fuzzes the parser of storm-kafka's offset nodes ({zkRoot}/{id}/partition_N,
// written by Storm, by Tempest or by anyone with ZooKeeper access). A node it
// accepts has a non-negative offset, and writing the parsed state and parsing
// that again gives the same state.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "spout/kafka/offsets/storm_kafka_offset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tempest::spout::StormKafkaOffset;
  const std::string node(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<StormKafkaOffset> state = tempest::spout::DecodeStormKafkaOffset(node);
  if (!state.ok()) return 0;
  if (state->offset < 0) std::abort();
  absl::StatusOr<StormKafkaOffset> again =
      tempest::spout::DecodeStormKafkaOffset(tempest::spout::EncodeStormKafkaOffset(*state));
  if (!again.ok() || again->offset != state->offset || again->topology_id != state->topology_id ||
      again->partition != state->partition || again->topic != state->topic ||
      again->broker_host != state->broker_host || again->broker_port != state->broker_port ||
      again->topology_name != state->topology_name) {
    std::abort();
  }
  return 0;
}
