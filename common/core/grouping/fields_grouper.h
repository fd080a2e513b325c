#ifndef TEMPEST_COMMON_CORE_FIELDS_GROUPER_H_
#define TEMPEST_COMMON_CORE_FIELDS_GROUPER_H_

#include <vector>

#include "common/core/grouping/stream_grouper.h"

namespace tempest::core {

// Storm's fields grouping: target index = floorMod(Arrays.deepHashCode(
// selected values), n) with Java hashCodes (see java_hash.h), so equal keys
// always go to the same task, and to the same task index as in Storm.
// Owns the sorted targets and the selected field indices; sender thread.
class FieldsGrouper final : public StreamGrouper {
 public:
  // `field_indices`: positions of the grouping fields in the stream, in
  // grouping order; `targets` sorted ascending.
  FieldsGrouper(std::vector<api::TaskId> targets, std::vector<int> field_indices);

  std::span<const api::TaskId> Choose(const api::Values& values) override;
  // The target index for `values` (exposed for tests and tooling).
  int ChooseIndex(const api::Values& values) const;

 private:
  std::vector<api::TaskId> targets_;
  std::vector<int> field_indices_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_FIELDS_GROUPER_H_
