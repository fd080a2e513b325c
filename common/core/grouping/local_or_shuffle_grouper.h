#ifndef TEMPEST_COMMON_CORE_LOCAL_OR_SHUFFLE_GROUPER_H_
#define TEMPEST_COMMON_CORE_LOCAL_OR_SHUFFLE_GROUPER_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "common/core/grouping/shuffle_grouper.h"

namespace tempest::core {

// Local-or-shuffle grouping: shuffle over the consumer tasks that run in the
// sending worker when there are any, over all consumer tasks otherwise.
// Owns a ShuffleGrouper over the chosen set; sender thread only.
class LocalOrShuffleGrouper final : public StreamGrouper {
 public:
  LocalOrShuffleGrouper(const std::vector<api::TaskId>& targets,
                        const absl::flat_hash_set<api::TaskId>& local_tasks, uint64_t seed);

  std::span<const api::TaskId> Choose(const api::Values& values) override {
    return shuffle_.Choose(values);
  }
  // The set actually shuffled over (local tasks if any).
  const std::vector<api::TaskId>& candidates() const { return candidates_; }

 private:
  static std::vector<api::TaskId> PickCandidates(const std::vector<api::TaskId>& targets,
                                                 const absl::flat_hash_set<api::TaskId>& local);
  std::vector<api::TaskId> candidates_;
  ShuffleGrouper shuffle_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_LOCAL_OR_SHUFFLE_GROUPER_H_
