#include "common/core/ack_ledger.h"

namespace tempest::core {

AckResult AckLedger::Init(uint64_t root, uint64_t xor_of_edges, int32_t spout_task) {
  AckResult result;
  pending_.Upsert(root, [&](Entry& entry) {
    entry.value ^= xor_of_edges;
    entry.spout_task = spout_task;
    result = Decide(entry);
    return result.outcome != AckOutcome::kPending;
  });
  return result;
}

AckResult AckLedger::Ack(uint64_t root, uint64_t xor_value) {
  AckResult result;
  pending_.Upsert(root, [&](Entry& entry) {
    entry.value ^= xor_value;
    result = Decide(entry);
    return result.outcome != AckOutcome::kPending;
  });
  return result;
}

AckResult AckLedger::Fail(uint64_t root) {
  AckResult result;
  pending_.Upsert(root, [&](Entry& entry) {
    entry.failed = true;
    result = Decide(entry);
    return result.outcome != AckOutcome::kPending;
  });
  return result;
}

std::optional<int32_t> AckLedger::ResetTimeout(uint64_t root) {
  if (!pending_.Touch(root)) return std::nullopt;
  const Entry* entry = pending_.Find(root);
  if (entry->spout_task == kUnknownTask) return std::nullopt;
  return entry->spout_task;
}

AckResult AckLedger::Decide(const Entry& entry) {
  // Until the init arrives we neither know whom to tell nor have the spout's
  // contribution to the XOR, so a zero value means nothing yet.
  if (entry.spout_task == kUnknownTask) return AckResult{};
  // Same precedence as Storm's Acker: a zero value wins over the failed flag.
  if (entry.value == 0) return {AckOutcome::kCompleted, entry.spout_task};
  if (entry.failed) return {AckOutcome::kFailed, entry.spout_task};
  return AckResult{};
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
