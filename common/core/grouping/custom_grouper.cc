#include "common/core/grouping/custom_grouper.h"

#include <algorithm>

namespace tempest::core {

CustomGrouper::CustomGrouper(std::unique_ptr<api::CustomStreamGrouping> grouping,
                             api::TaskId source_task, std::vector<api::TaskId> targets)
    : grouping_(std::move(grouping)), source_task_(source_task), targets_(std::move(targets)) {}

std::span<const api::TaskId> CustomGrouper::Choose(const api::Values& values) {
  out_.clear();
  grouping_->ChooseTasks(source_task_, values, out_);
  std::erase_if(out_, [this](api::TaskId t) {
    return !std::binary_search(targets_.begin(), targets_.end(), t);
  });
  return out_;
}

}  // namespace tempest::core
