#ifndef TEMPEST_COMMON_CORE_SHUFFLE_GROUPER_H_
#define TEMPEST_COMMON_CORE_SHUFFLE_GROUPER_H_

#include <cstdint>
#include <vector>

#include "common/core/grouping/stream_grouper.h"

namespace tempest::core {

// Storm's ShuffleGrouping: the targets are shuffled once (seeded) and then
// taken round-robin, so every target gets the same share to within one
// tuple. Owns its shuffled copy of the targets; sender thread only.
class ShuffleGrouper final : public StreamGrouper {
 public:
  ShuffleGrouper(std::vector<api::TaskId> targets, uint64_t seed);

  std::span<const api::TaskId> Choose(const api::Values& values) override;

 private:
  std::vector<api::TaskId> order_;
  size_t next_ = 0;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_SHUFFLE_GROUPER_H_
