#include "common/core/ack_ledger.h"

namespace tempest::core {

AckResult AckLedger::Init(uint64_t root, uint64_t xor_of_edges, int32_t spout_task) {
  Entry& entry = *pending_.FindOrInsert(root).first;
  entry.value ^= xor_of_edges;
  entry.spout_task = spout_task;
  return Settle(root, entry);
}

AckResult AckLedger::Ack(uint64_t root, uint64_t xor_value) {
  Entry& entry = *pending_.FindOrInsert(root).first;
  entry.value ^= xor_value;
  return Settle(root, entry);
}

AckResult AckLedger::Fail(uint64_t root) {
  Entry& entry = *pending_.FindOrInsert(root).first;
  entry.failed = true;
  return Settle(root, entry);
}

std::optional<int32_t> AckLedger::ResetTimeout(uint64_t root) {
  if (!pending_.Touch(root)) return std::nullopt;
  const Entry* entry = pending_.Find(root);
  if (entry->spout_task == kUnknownTask) return std::nullopt;
  return entry->spout_task;
}

AckResult AckLedger::Settle(uint64_t root, const Entry& entry) {
  // Until the init arrives we neither know whom to tell nor have the spout's
  // contribution to the XOR, so a zero value means nothing yet.
  if (entry.spout_task == kUnknownTask) return AckResult{};
  // Same precedence as Storm's Acker: a zero value wins over the failed flag.
  AckResult result;
  if (entry.value == 0) {
    result = {AckOutcome::kCompleted, entry.spout_task};
  } else if (entry.failed) {
    result = {AckOutcome::kFailed, entry.spout_task};
  } else {
    return AckResult{};
  }
  pending_.Erase(root);
  return result;
}

std::vector<ExpiredRoot> AckLedger::Rotate() {
  auto expired = pending_.Rotate();
  std::vector<ExpiredRoot> out;
  out.reserve(expired.size());
  for (const auto& [root, entry] : expired) {
    out.push_back(ExpiredRoot{root, entry.spout_task, entry.failed});
  }
  return out;
}

}  // namespace tempest::core
