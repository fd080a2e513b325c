#ifndef TEMPEST_SPOUT_KAFKA_MESSAGE_ID_H_
#define TEMPEST_SPOUT_KAFKA_MESSAGE_ID_H_

#include <cstdint>
#include <optional>

#include "common/api/spout_output_collector.h"

namespace tempest::spout {

// The message id a KafkaSpout gives an emitted record: the partition's slot
// in the task, its ownership epoch (so acks of an older ownership find
// nothing) and the offset. Usually one int64 (11 bits slot, 8 bits epoch
// modulo 256, 44 bits offset); a slot or offset too large for that becomes a
// list [slot, epoch, offset]. Pure; any thread.
struct KafkaMessageId {
  int slot = 0;
  uint32_t epoch = 0;  // the compact form holds only the low 8 bits
  int64_t offset = 0;
  bool compact = false;

  // Whether the id was emitted under ownership epoch `current`.
  bool IsOfEpoch(uint32_t current) const {
    return compact ? (current & 0xff) == epoch : current == epoch;
  }
};

api::MessageId EncodeKafkaMessageId(int slot, uint32_t epoch, int64_t offset);
// nullopt for an id no KafkaSpout made (wrong type, negative, wrong shape).
std::optional<KafkaMessageId> DecodeKafkaMessageId(const api::MessageId& id);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_MESSAGE_ID_H_
