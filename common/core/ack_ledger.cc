#include "common/core/ack_ledger.h"

#include <algorithm>

namespace tempest::core {

AckLedger::AckLedger(int buckets) : buckets_(static_cast<uint16_t>(std::clamp(buckets, 2, 1000))) {}

AckResult AckLedger::Init(uint64_t root, uint64_t xor_of_edges, int32_t spout_task) {
  if (xor_of_edges == 0) {
    // A whole tree in one message (a bolt's ack that carries the init, or a
    // tuple that went nowhere) completes without an entry, unless acks or
    // fails for it arrived first.
    const size_t found = table_.IndexOf(root);
    if (found == ProbeTable<Slot>::kNotFound) return {AckOutcome::kCompleted, spout_task};
  }
  const size_t index = FindOrInsert(root);
  table_.at(index).value ^= xor_of_edges;
  table_.at(index).spout_task = spout_task;
  return SettleAt(index);
}

AckResult AckLedger::Ack(uint64_t root, uint64_t xor_value) {
  const size_t index = FindOrInsert(root);
  table_.at(index).value ^= xor_value;
  return SettleAt(index);
}

AckResult AckLedger::Fail(uint64_t root) {
  const size_t index = FindOrInsert(root);
  table_.at(index).failed = 1;
  return SettleAt(index);
}

std::optional<int32_t> AckLedger::ResetTimeout(uint64_t root) {
  const size_t index = table_.IndexOf(root);
  if (index == ProbeTable<Slot>::kNotFound) return std::nullopt;
  table_.at(index).epoch = epoch_;
  if (table_.at(index).spout_task == kUnknownTask) return std::nullopt;
  return table_.at(index).spout_task;
}

std::vector<ExpiredRoot> AckLedger::Rotate() {
  ++epoch_;
  std::vector<ExpiredRoot> expired;
  table_.EraseExpired(epoch_, buckets_, [&](const Slot& slot) {
    expired.push_back(ExpiredRoot{slot.key, slot.spout_task, slot.failed != 0});
  });
  return expired;
}

size_t AckLedger::FindOrInsert(uint64_t root) {
  return table_.FindOrInsert(root, Slot{0, 0, kUnknownTask, epoch_, 0, 0}).first;
}

AckResult AckLedger::SettleAt(size_t index) {
  const Slot& slot = table_.at(index);
  // Until the init arrives we neither know whom to tell nor have the spout's
  // contribution to the XOR, so a zero value means nothing yet.
  if (slot.spout_task == kUnknownTask) return AckResult{};
  AckResult result;
  // Same precedence as Storm's Acker: a zero value wins over the failed flag.
  if (slot.value == 0) {
    result = {AckOutcome::kCompleted, slot.spout_task};
  } else if (slot.failed) {
    result = {AckOutcome::kFailed, slot.spout_task};
  } else {
    return AckResult{};
  }
  table_.EraseAt(index);
  return result;
}

}  // namespace tempest::core
