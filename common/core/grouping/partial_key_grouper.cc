#include "common/core/grouping/partial_key_grouper.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/core/grouping/java_hash.h"
#include "common/core/java_random.h"

namespace tempest::core {
namespace {

// Arrays.hashCode(byte[]) fed one byte at a time.
inline uint32_t AddByte(uint32_t h, uint8_t b) {
  return h * 31u + static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(b)));
}

}  // namespace

PartialKeyGrouper::PartialKeyGrouper(std::vector<api::TaskId> targets,
                                     std::vector<int> field_indices)
    : targets_(std::move(targets)),
      field_indices_(std::move(field_indices)),
      sent_(targets_.size(), 0) {}

int32_t PartialKeyGrouper::KeyHash(const api::Values& values) const {
  uint32_t h = 1;
  if (!field_indices_.empty()) {
    for (int i : field_indices_) {
      auto x = static_cast<uint32_t>(JavaHashCode(values[i]));
      h = AddByte(h, static_cast<uint8_t>(x >> 24));
      h = AddByte(h, static_cast<uint8_t>(x >> 16));
      h = AddByte(h, static_cast<uint8_t>(x >> 8));
      h = AddByte(h, static_cast<uint8_t>(x));
    }
    return static_cast<int32_t>(h);
  }
  const api::Value& first = values[0];
  if (const std::string* s = first.TryString()) {
    for (char c : *s) h = AddByte(h, static_cast<uint8_t>(c));
    return static_cast<int32_t>(h);
  }
  // Other types: their text form (allocates; only for untyped keys).
  std::string text = first.CoerceString().value_or(first.DebugString());
  for (char c : text) h = AddByte(h, static_cast<uint8_t>(c));
  return static_cast<int32_t>(h);
}

std::array<int, 2> PartialKeyGrouper::Candidates(const api::Values& values) const {
  const auto n = static_cast<int32_t>(targets_.size());
  JavaRandom random(KeyHash(values));
  int first = random.NextInt(n);
  int second = random.NextInt(n);
  if (first == second) second = (second + 1) % n;
  return {first, second};
}

std::span<const api::TaskId> PartialKeyGrouper::Choose(const api::Values& values) {
  if (targets_.empty() || values.empty()) return {};
  for (int i : field_indices_) {
    if (i >= static_cast<int>(values.size())) return {};
  }
  std::array<int, 2> c = Candidates(values);
  // Fewer tuples so far wins; ties go to the first candidate (as Storm).
  int chosen = sent_[c[1]] < sent_[c[0]] ? c[1] : c[0];
  ++sent_[chosen];
  return {&targets_[chosen], 1};
}

}  // namespace tempest::core
