#include "common/api/topology_context.h"

#include <algorithm>

namespace tempest::api {

TopologyContext::TopologyContext(std::shared_ptr<const TopologyInfo> info, TaskId this_task)
    : info_(std::move(info)), this_task_(this_task) {
  if (const ComponentId* c = ComponentOf(this_task)) this_component_ = *c;
  const std::vector<TaskId>& tasks = ComponentTasks(this_component_);
  auto it = std::lower_bound(tasks.begin(), tasks.end(), this_task);
  if (it != tasks.end() && *it == this_task)
    this_task_index_ = static_cast<int>(it - tasks.begin());
  merged_config_ = info_->config;
  auto cc = info_->component_config.find(this_component_);
  if (cc != info_->component_config.end()) merged_config_.Merge(cc->second);
}

const std::vector<TaskId>& TopologyContext::ComponentTasks(const ComponentId& component) const {
  static const std::vector<TaskId>* const kEmpty = new std::vector<TaskId>();
  auto it = info_->component_tasks.find(component);
  return it == info_->component_tasks.end() ? *kEmpty : it->second;
}

const ComponentId* TopologyContext::ComponentOf(TaskId task) const {
  auto it = info_->task_to_component.find(task);
  return it == info_->task_to_component.end() ? nullptr : &it->second;
}

const Fields* TopologyContext::OutputFields(const ComponentId& component,
                                            const StreamId& stream) const {
  auto c = info_->component_streams.find(component);
  if (c == info_->component_streams.end()) return nullptr;
  auto s = c->second.find(stream);
  return s == c->second.end() ? nullptr : &s->second.fields;
}

}  // namespace tempest::api
