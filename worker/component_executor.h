#ifndef TEMPEST_WORKER_COMPONENT_EXECUTOR_H_
#define TEMPEST_WORKER_COMPONENT_EXECUTOR_H_

// What the spout and bolt executors do alike for each of their tasks (a
// Task struct with `id`, `context` and `router`) and for each emit.
// Templates over the executor's Task; control thread (Build, Downstream) or
// the executor thread (Setup), like their callers.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/api/topology_context.h"
#include "common/core/metrics_registry.h"
#include "common/core/status_macros.h"
#include "common/core/topology/topology_def.h"
#include "worker/task_router.h"
#include "worker/worker_context.h"

namespace tempest::worker {

// "file:line: <kind> 'id': message" with the status's code, for a component
// the registry could not create.
inline absl::Status ComponentCreationError(std::string_view kind, const core::ComponentDef& def,
                                           const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(def.location.Prefix(), api::Sv(kind), " '",
                                                  def.id.value(), "': ", status.message()));
}

// "<kind> 'component' task N <what>: message" with the status's code, for a
// user call (Open, Prepare) that failed during Setup.
inline absl::Status TaskCallError(std::string_view kind, const api::ComponentId& component,
                                  api::TaskId task, std::string_view what,
                                  const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(api::Sv(kind), " '", component.value(), "' task ", task.value(),
                                   " ", api::Sv(what), ": ", status.message()));
}

// Gives `task` (its id set) its TopologyContext and TaskRouter.
template <typename Task>
absl::Status ConnectTask(WorkerContext& ctx, Task& task) {
  task.context = std::make_unique<api::TopologyContext>(ctx.info, task.id);
  TEMPEST_ASSIGN_OR_RETURN(task.router, TaskRouter::Create(ctx, task.id, *task.context));
  return absl::OkStatus();
}

// The route of an emit on `stream` with `targets` filled in (one task for a
// `direct` emit); InvalidArgument for an undeclared stream, or the router's
// error (a direct emit to a task that does not consume the stream, ...).
inline absl::StatusOr<StreamRoute*> RouteEmit(TaskRouter& router, const api::StreamId& stream,
                                              const api::Values& values,
                                              std::optional<api::TaskId> direct,
                                              std::vector<api::TaskId>& targets) {
  StreamRoute* route = router.Find(stream);
  if (route == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("emit on undeclared stream '", stream.value(), "'"));
  }
  targets.clear();
  TEMPEST_RETURN_IF_ERROR(direct ? router.DirectTarget(*route, *direct, targets)
                                 : router.Targets(*route, values, targets));
  return route;
}

// Every task the executor's tasks may send data to.
template <typename Task>
std::vector<api::TaskId> DownstreamOf(const std::vector<std::unique_ptr<Task>>& tasks) {
  std::vector<api::TaskId> all;
  for (const auto& task : tasks) {
    std::vector<api::TaskId> t = task->router->AllTargets();
    all.insert(all.end(), t.begin(), t.end());
  }
  return all;
}

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_COMPONENT_EXECUTOR_H_
