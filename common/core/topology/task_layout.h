#ifndef TEMPEST_COMMON_CORE_TASK_LAYOUT_H_
#define TEMPEST_COMMON_CORE_TASK_LAYOUT_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/api/ids.h"
#include "common/api/topology_context.h"
#include "common/core/topology/topology_def.h"

namespace tempest::core {

// An executor: a contiguous range of one component's tasks run by one thread.
struct ExecutorInfo {
  api::ComponentId component;
  api::TaskId start;
  api::TaskId end;  // inclusive
  friend bool operator==(const ExecutorInfo&, const ExecutorInfo&) = default;
};

// Storm's task numbering (StormCommon.stormTaskInfo): all components,
// including the system acker component "__acker", sorted by id; tasks
// numbered consecutively from 1; each component's tasks split into
// min(parallelism, numTasks) executors of contiguous ranges, larger ranges
// first (Utils.partitionFixed). A plain immutable value; any thread.
//
//   auto layout = TaskLayout::Create(def, TaskLayout::AckerExecutors(config));
//   layout->TasksOf(ComponentId("split"))  // {3, 4, 5}
class TaskLayout {
 public:
  // `num_ackers` acker executors (one task each); 0 disables acking.
  static absl::StatusOr<TaskLayout> Create(const TopologyDef& def, int num_ackers);
  // topology.acker.executors, where null means one per worker
  // (topology.workers).
  static int AckerExecutors(const api::Config& config);

  // Sorted ascending; empty for an unknown component.
  const std::vector<api::TaskId>& TasksOf(const api::ComponentId& component) const;
  const api::ComponentId* ComponentOf(api::TaskId task) const;
  // Sorted by start task.
  const std::vector<ExecutorInfo>& executors() const { return executors_; }
  const std::map<api::ComponentId, std::vector<api::TaskId>>& component_tasks() const {
    return component_tasks_;
  }
  const std::map<api::TaskId, api::ComponentId>& task_to_component() const {
    return task_to_component_;
  }
  int num_tasks() const { return static_cast<int>(task_to_component_.size()); }

 private:
  std::map<api::ComponentId, std::vector<api::TaskId>> component_tasks_;
  std::map<api::TaskId, api::ComponentId> task_to_component_;
  std::vector<ExecutorInfo> executors_;
};

// The TopologyInfo shared by the TopologyContexts of a running topology.
// `config` is the effective topology config (defaults, then the topology's
// own config); per-component configs come from `def`.
std::shared_ptr<const api::TopologyInfo> MakeTopologyInfo(const TopologyDef& def,
                                                          const TaskLayout& layout,
                                                          const ComponentStreams& streams,
                                                          std::string topology_id,
                                                          api::Config config);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_TASK_LAYOUT_H_
