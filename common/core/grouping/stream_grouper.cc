#include "common/core/grouping/stream_grouper.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"
#include "common/core/grouping/all_grouper.h"
#include "common/core/grouping/custom_grouper.h"
#include "common/core/grouping/direct_grouper.h"
#include "common/core/grouping/fields_grouper.h"
#include "common/core/grouping/global_grouper.h"
#include "common/core/grouping/local_or_shuffle_grouper.h"
#include "common/core/grouping/none_grouper.h"
#include "common/core/grouping/partial_key_grouper.h"
#include "common/core/grouping/shuffle_grouper.h"
#include "common/core/status_macros.h"

namespace tempest::core {

absl::StatusOr<std::unique_ptr<StreamGrouper>> CreateStreamGrouper(const GroupingDef& grouping,
                                                                   GrouperOptions options) {
  std::vector<api::TaskId>& targets = options.target_tasks;
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  if (targets.empty()) return absl::InvalidArgumentError("grouping has no target tasks");

  auto select = [&]() -> absl::StatusOr<std::vector<int>> {
    absl::StatusOr<std::vector<int>> idx = options.output_fields.Select(grouping.fields);
    if (!idx.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(api::Sv(GroupingTypeName(grouping.type)), " grouping on stream '",
                       options.stream.value(), "': ", idx.status().message()));
    }
    return idx;
  };

  switch (grouping.type) {
    case GroupingType::kShuffle:
      return std::make_unique<ShuffleGrouper>(std::move(targets), options.seed);
    case GroupingType::kFields: {
      // Storm: fields grouping on no fields is global grouping.
      if (grouping.fields.empty()) return std::make_unique<GlobalGrouper>(targets);
      TEMPEST_ASSIGN_OR_RETURN(std::vector<int> idx, select());
      return std::make_unique<FieldsGrouper>(std::move(targets), std::move(idx));
    }
    case GroupingType::kAll:
      return std::make_unique<AllGrouper>(std::move(targets));
    case GroupingType::kGlobal:
      return std::make_unique<GlobalGrouper>(targets);
    case GroupingType::kNone:
      return std::make_unique<NoneGrouper>(std::move(targets), options.seed);
    case GroupingType::kDirect:
      return std::make_unique<DirectGrouper>(std::move(targets));
    case GroupingType::kLocalOrShuffle:
      return std::make_unique<LocalOrShuffleGrouper>(targets, options.local_tasks, options.seed);
    case GroupingType::kPartialKey: {
      std::vector<int> idx;
      if (!grouping.fields.empty()) {
        TEMPEST_ASSIGN_OR_RETURN(idx, select());
      }
      return std::make_unique<PartialKeyGrouper>(std::move(targets), std::move(idx));
    }
    case GroupingType::kCustom: {
      if (options.registry == nullptr || options.context == nullptr) {
        return absl::InvalidArgumentError("custom grouping needs a registry and a context");
      }
      TEMPEST_ASSIGN_OR_RETURN(std::unique_ptr<api::CustomStreamGrouping> custom,
                               options.registry->CreateGrouping(grouping.custom));
      TEMPEST_RETURN_IF_ERROR(custom->Prepare(*options.context, options.stream, targets));
      return std::make_unique<CustomGrouper>(std::move(custom), options.source_task,
                                             std::move(targets));
    }
  }
  return absl::InvalidArgumentError("unknown grouping type");
}

}  // namespace tempest::core
