#ifndef TEMPEST_COMMON_API_CUSTOM_STREAM_GROUPING_H_
#define TEMPEST_COMMON_API_CUSTOM_STREAM_GROUPING_H_

#include <vector>

#include "absl/status/status.h"
#include "common/api/ids.h"
#include "common/api/topology_context.h"
#include "common/api/value.h"

namespace tempest::api {

// A user-defined routing function (Storm's CustomStreamGrouping), registered
// by class name and named in Flux as `grouping: {type: CUSTOM, customClass:
// {className: ...}}`. One instance per (sending task, consumer, stream); the
// sending executor thread calls Prepare once, then ChooseTasks per tuple.
class CustomStreamGrouping {
 public:
  virtual ~CustomStreamGrouping() = default;

  // `target_tasks` are the consumer's tasks, ascending.
  virtual absl::Status Prepare(const TopologyContext& context, const StreamId& stream,
                               const std::vector<TaskId>& target_tasks) = 0;
  // Appends the chosen tasks to `out` (which the caller clears and reuses,
  // so the common path does not allocate).
  virtual void ChooseTasks(TaskId source_task, const Values& values, std::vector<TaskId>& out) = 0;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_CUSTOM_STREAM_GROUPING_H_
