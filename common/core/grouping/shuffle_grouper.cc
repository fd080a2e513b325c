#include "common/core/grouping/shuffle_grouper.h"

#include <algorithm>
#include <random>

namespace tempest::core {

ShuffleGrouper::ShuffleGrouper(std::vector<api::TaskId> targets, uint64_t seed)
    : order_(std::move(targets)) {
  std::mt19937_64 rng(seed);
  std::shuffle(order_.begin(), order_.end(), rng);
}

std::span<const api::TaskId> ShuffleGrouper::Choose(const api::Values& /*values*/) {
  if (order_.empty()) return {};
  const api::TaskId* chosen = &order_[next_];
  if (++next_ == order_.size()) next_ = 0;
  return {chosen, 1};
}

}  // namespace tempest::core
