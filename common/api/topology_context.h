#ifndef TEMPEST_COMMON_API_TOPOLOGY_CONTEXT_H_
#define TEMPEST_COMMON_API_TOPOLOGY_CONTEXT_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/api/config.h"
#include "common/api/fields.h"
#include "common/api/ids.h"
#include "common/api/output_fields_declarer.h"

namespace tempest::api {

// One subscription: `to` receives `stream` of `from`, grouped by `grouping`
// (Flux's name: SHUFFLE, FIELDS, ...; `fields` for FIELDS / PARTIAL_KEY).
struct StreamSubscription {
  ComponentId from;
  StreamId stream;
  ComponentId to;
  std::string grouping;
  std::vector<std::string> fields;
};

// Static facts about a running topology shared by every task of a worker:
// which task runs which component, each component's declared streams, and
// the topology configuration. Built once by the runtime
// (core::MakeTopologyInfo), immutable afterwards, shared as const.
struct TopologyInfo {
  std::string topology_id;
  std::string topology_name;
  Config config;
  std::map<TaskId, ComponentId> task_to_component;
  // Sorted ascending.
  std::map<ComponentId, std::vector<TaskId>> component_tasks;
  std::map<ComponentId, std::map<StreamId, StreamDeclaration>> component_streams;
  // Per-component config overrides (Flux `config:` of a spout/bolt).
  std::map<ComponentId, Config> component_config;
  // Every stream of the topology, in definition order.
  std::vector<StreamSubscription> subscriptions;
};

// What a component instance knows about its place in the topology: its task
// id, component, index among the component's tasks, and lookups over the
// whole topology. Cheap to copy (shares the TopologyInfo). Created by the
// worker per task and passed to Open/Prepare; valid for the task's lifetime.
// Read-only, so any thread may use it.
class TopologyContext {
 public:
  TopologyContext(std::shared_ptr<const TopologyInfo> info, TaskId this_task);

  TaskId ThisTaskId() const { return this_task_; }
  const ComponentId& ThisComponentId() const { return this_component_; }
  // 0-based position of this task among its component's sorted tasks.
  int ThisTaskIndex() const { return this_task_index_; }
  const std::string& TopologyId() const { return info_->topology_id; }
  const std::string& TopologyName() const { return info_->topology_name; }

  // All task ids of `component`, ascending (empty if unknown).
  const std::vector<TaskId>& ComponentTasks(const ComponentId& component) const;
  // The component running `task` (nullptr if unknown).
  const ComponentId* ComponentOf(TaskId task) const;
  // Declared fields of `stream` of `component` (nullptr if not declared).
  const Fields* OutputFields(const ComponentId& component, const StreamId& stream) const;
  const Fields* ThisOutputFields(const StreamId& stream) const {
    return OutputFields(this_component_, stream);
  }
  // The topology config with this component's overrides applied.
  const Config& config() const { return merged_config_; }
  const TopologyInfo& info() const { return *info_; }

 private:
  std::shared_ptr<const TopologyInfo> info_;
  TaskId this_task_;
  ComponentId this_component_;
  int this_task_index_ = 0;
  Config merged_config_;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_TOPOLOGY_CONTEXT_H_
