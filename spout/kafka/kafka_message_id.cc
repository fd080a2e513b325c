#include "spout/kafka/kafka_message_id.h"

namespace tempest::spout {
namespace {

constexpr int kSlotBits = 11;    // up to 2048 partitions per task in the compact id
constexpr int kEpochBits = 8;    // ownership epoch modulo 256
constexpr int kOffsetBits = 44;  // offsets below 2^44 (~17.6e12)
constexpr int64_t kOffsetMask = (int64_t{1} << kOffsetBits) - 1;

}  // namespace

api::MessageId EncodeKafkaMessageId(int slot, uint32_t epoch, int64_t offset) {
  if (slot < (1 << kSlotBits) && offset >= 0 && offset <= kOffsetMask) {
    return api::MessageId((int64_t{slot} << (kOffsetBits + kEpochBits)) |
                          (int64_t{epoch & 0xff} << kOffsetBits) | offset);
  }
  return api::MessageId(api::ValueList{int64_t{slot}, int64_t{epoch}, offset});
}

std::optional<KafkaMessageId> DecodeKafkaMessageId(const api::MessageId& id) {
  KafkaMessageId out;
  if (id.is_int()) {
    const int64_t v = id.AsInt();
    if (v < 0) return std::nullopt;
    out.slot = static_cast<int>(v >> (kOffsetBits + kEpochBits));
    out.epoch = static_cast<uint32_t>((v >> kOffsetBits) & 0xff);
    out.offset = v & kOffsetMask;
    out.compact = true;
    return out;
  }
  const api::ValueList* l = id.TryList();
  if (l == nullptr || l->size() != 3 || !(*l)[0].is_int() || !(*l)[1].is_int() ||
      !(*l)[2].is_int()) {
    return std::nullopt;
  }
  out.slot = static_cast<int>((*l)[0].AsInt());
  out.epoch = static_cast<uint32_t>((*l)[1].AsInt());
  out.offset = (*l)[2].AsInt();
  return out;
}

}  // namespace tempest::spout
