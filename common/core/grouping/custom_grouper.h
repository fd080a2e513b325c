#ifndef TEMPEST_COMMON_CORE_CUSTOM_GROUPER_H_
#define TEMPEST_COMMON_CORE_CUSTOM_GROUPER_H_

#include <memory>
#include <vector>

#include "common/api/custom_stream_grouping.h"
#include "common/core/grouping/stream_grouper.h"

namespace tempest::core {

// Runs a user CustomStreamGrouping as a StreamGrouper. Owns the user
// instance and a reused output vector (no allocation once it has grown);
// drops task ids that are not consumer tasks. Sender thread only.
class CustomGrouper final : public StreamGrouper {
 public:
  CustomGrouper(std::unique_ptr<api::CustomStreamGrouping> grouping, api::TaskId source_task,
                std::vector<api::TaskId> targets);

  std::span<const api::TaskId> Choose(const api::Values& values) override;

 private:
  std::unique_ptr<api::CustomStreamGrouping> grouping_;
  api::TaskId source_task_;
  std::vector<api::TaskId> targets_;
  std::vector<api::TaskId> out_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_CUSTOM_GROUPER_H_
