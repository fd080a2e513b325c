#include "common/core/grouping/local_or_shuffle_grouper.h"

namespace tempest::core {

std::vector<api::TaskId> LocalOrShuffleGrouper::PickCandidates(
    const std::vector<api::TaskId>& targets, const absl::flat_hash_set<api::TaskId>& local) {
  std::vector<api::TaskId> out;
  for (api::TaskId t : targets) {
    if (local.contains(t)) out.push_back(t);
  }
  return out.empty() ? targets : out;
}

LocalOrShuffleGrouper::LocalOrShuffleGrouper(const std::vector<api::TaskId>& targets,
                                             const absl::flat_hash_set<api::TaskId>& local_tasks,
                                             uint64_t seed)
    : candidates_(PickCandidates(targets, local_tasks)), shuffle_(candidates_, seed) {}

}  // namespace tempest::core
