#ifndef TEMPEST_COMMON_CORE_ALL_GROUPER_H_
#define TEMPEST_COMMON_CORE_ALL_GROUPER_H_

#include <vector>

#include "common/core/grouping/stream_grouper.h"

namespace tempest::core {

// All grouping: every tuple goes to every target task. Owns the targets.
class AllGrouper final : public StreamGrouper {
 public:
  explicit AllGrouper(std::vector<api::TaskId> targets) : targets_(std::move(targets)) {}
  std::span<const api::TaskId> Choose(const api::Values& /*values*/) override { return targets_; }

 private:
  std::vector<api::TaskId> targets_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_ALL_GROUPER_H_
