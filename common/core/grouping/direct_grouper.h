#ifndef TEMPEST_COMMON_CORE_DIRECT_GROUPER_H_
#define TEMPEST_COMMON_CORE_DIRECT_GROUPER_H_

#include <algorithm>
#include <vector>

#include "common/core/grouping/stream_grouper.h"

namespace tempest::core {

// Direct grouping: the emitter names the task (EmitDirect). Regular emits
// route nowhere; a direct emit is accepted only for one of the consumer's
// tasks. Owns the sorted targets; sender thread only.
class DirectGrouper final : public StreamGrouper {
 public:
  explicit DirectGrouper(std::vector<api::TaskId> targets) : targets_(std::move(targets)) {
    std::sort(targets_.begin(), targets_.end());
  }

  std::span<const api::TaskId> Choose(const api::Values& /*values*/) override { return {}; }
  std::span<const api::TaskId> ChooseDirect(api::TaskId task) override {
    auto it = std::lower_bound(targets_.begin(), targets_.end(), task);
    if (it == targets_.end() || *it != task) return {};
    return {&*it, 1};
  }
  bool is_direct() const override { return true; }

 private:
  std::vector<api::TaskId> targets_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_DIRECT_GROUPER_H_
