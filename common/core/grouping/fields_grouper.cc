#include "common/core/grouping/fields_grouper.h"

#include "common/core/grouping/java_hash.h"

namespace tempest::core {

FieldsGrouper::FieldsGrouper(std::vector<api::TaskId> targets, std::vector<int> field_indices)
    : targets_(std::move(targets)), field_indices_(std::move(field_indices)) {}

int FieldsGrouper::ChooseIndex(const api::Values& values) const {
  return FloorMod(JavaDeepHashCode(values, field_indices_), static_cast<int32_t>(targets_.size()));
}

std::span<const api::TaskId> FieldsGrouper::Choose(const api::Values& values) {
  if (targets_.empty()) return {};
  for (int i : field_indices_) {
    if (i >= static_cast<int>(values.size())) return {};  // short tuple: nothing to hash
  }
  return {&targets_[ChooseIndex(values)], 1};
}

}  // namespace tempest::core
