#include "common/core/ack_ledger.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace tempest::core {
namespace {

constexpr size_t kInitialCapacity = 1024;

}  // namespace

AckLedger::AckLedger(int buckets) : buckets_(static_cast<uint16_t>(std::clamp(buckets, 2, 1000))) {
  Allocate(kInitialCapacity);
}

AckResult AckLedger::Init(uint64_t root, uint64_t xor_of_edges, int32_t spout_task) {
  const size_t index = FindOrInsert(root);
  slots_[index].value ^= xor_of_edges;
  slots_[index].spout_task = spout_task;
  return SettleAt(index);
}

AckResult AckLedger::Ack(uint64_t root, uint64_t xor_value) {
  const size_t index = FindOrInsert(root);
  slots_[index].value ^= xor_value;
  return SettleAt(index);
}

AckResult AckLedger::Fail(uint64_t root) {
  const size_t index = FindOrInsert(root);
  slots_[index].failed = 1;
  return SettleAt(index);
}

std::optional<int32_t> AckLedger::ResetTimeout(uint64_t root) {
  const size_t index = Find(root);
  if (index == kNotFound) return std::nullopt;
  slots_[index].epoch = epoch_;
  if (slots_[index].spout_task == kUnknownTask) return std::nullopt;
  return slots_[index].spout_task;
}

std::vector<ExpiredRoot> AckLedger::Rotate() {
  ++epoch_;
  std::vector<ExpiredRoot> expired;
  // Ages are taken mod 2^16; every entry is removed once its age reaches
  // buckets_ (< 2^16), so no age ever wraps.
  for (size_t i = 0; i <= mask_;) {
    const Slot& slot = slots_[i];
    if (slot.used && static_cast<uint16_t>(epoch_ - slot.epoch) >= buckets_) {
      expired.push_back(ExpiredRoot{slot.root, slot.spout_task, slot.failed != 0});
      // Backward shifting may move a not-yet-scanned entry into slot i (never
      // behind it), so look at slot i again.
      EraseAt(i);
      continue;
    }
    ++i;
  }
  return expired;
}

size_t AckLedger::FindOrInsert(uint64_t root) {
  size_t i = Home(root);
  while (slots_[i].used) {
    if (slots_[i].root == root) return i;
    i = (i + 1) & mask_;
  }
  // Half load keeps linear-probe runs short (expected < 2.5 slots per miss).
  if ((size_ + 1) * 2 > mask_ + 1) {
    Grow();
    i = Home(root);
    while (slots_[i].used) i = (i + 1) & mask_;
  }
  slots_[i] = Slot{root, 0, kUnknownTask, epoch_, 1, 0};
  ++size_;
  return i;
}

size_t AckLedger::Find(uint64_t root) const {
  for (size_t i = Home(root); slots_[i].used; i = (i + 1) & mask_) {
    if (slots_[i].root == root) return i;
  }
  return kNotFound;
}

AckResult AckLedger::SettleAt(size_t index) {
  const Slot& slot = slots_[index];
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
  EraseAt(index);
  return result;
}

void AckLedger::EraseAt(size_t index) {
  // Backward-shift deletion: pull later entries of the probe run into the
  // hole when their home slot allows it, so lookups never need tombstones.
  size_t hole = index;
  for (size_t j = (index + 1) & mask_; slots_[j].used; j = (j + 1) & mask_) {
    const size_t home = Home(slots_[j].root);
    // Entry j may move to `hole` unless its home lies cyclically in (hole, j].
    if (((j - home) & mask_) >= ((j - hole) & mask_)) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole].used = 0;
  --size_;
}

void AckLedger::Allocate(size_t capacity) {
  slots_ = std::make_unique<Slot[]>(capacity);  // Value-initialised: all unused.
  mask_ = capacity - 1;
  shift_ = 64 - std::countr_zero(capacity);
  size_ = 0;
}

void AckLedger::Grow() {
  std::unique_ptr<Slot[]> old = std::move(slots_);
  const size_t old_capacity = mask_ + 1;
  Allocate(old_capacity * 2);
  for (size_t i = 0; i < old_capacity; ++i) {
    if (!old[i].used) continue;
    size_t j = Home(old[i].root);
    while (slots_[j].used) j = (j + 1) & mask_;
    slots_[j] = old[i];
    ++size_;
  }
}

}  // namespace tempest::core
