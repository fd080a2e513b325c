#ifndef TEMPEST_COMMON_CORE_GLOBAL_GROUPER_H_
#define TEMPEST_COMMON_CORE_GLOBAL_GROUPER_H_

#include <algorithm>
#include <vector>

#include "common/core/grouping/stream_grouper.h"

namespace tempest::core {

// Global grouping (and Storm's fields grouping with no fields): every tuple
// goes to the consumer's lowest task id.
class GlobalGrouper final : public StreamGrouper {
 public:
  explicit GlobalGrouper(const std::vector<api::TaskId>& targets) {
    if (!targets.empty()) {
      target_ = *std::min_element(targets.begin(), targets.end());
      has_target_ = true;
    }
  }
  std::span<const api::TaskId> Choose(const api::Values& /*values*/) override {
    if (!has_target_) return {};
    return {&target_, 1};
  }

 private:
  api::TaskId target_;
  bool has_target_ = false;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_GLOBAL_GROUPER_H_
