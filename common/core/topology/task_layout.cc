#include "common/core/topology/task_layout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace tempest::core {
namespace {

struct Slot {
  api::ComponentId id;
  int tasks;
  int executors;
};

}  // namespace

int TaskLayout::AckerExecutors(const api::Config& config) {
  std::optional<int64_t> ackers = config.GetOptionalInt(api::kTopologyAckerExecutors);
  if (ackers) return static_cast<int>(std::max<int64_t>(*ackers, 0));
  return static_cast<int>(std::max<int64_t>(config.GetInt(api::kTopologyWorkers, 1), 1));
}

absl::StatusOr<TaskLayout> TaskLayout::Create(const TopologyDef& def, int num_ackers) {
  std::vector<Slot> slots;
  for (const ComponentDef* c : def.AllComponents()) {
    if (c->parallelism < 1 || c->NumTasks() < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("component '", c->id.value(), "' has no tasks or executors"));
    }
    slots.push_back({c->id, c->NumTasks(), c->NumExecutors()});
  }
  if (num_ackers > 0) {
    slots.push_back(
        {api::ComponentId(std::string(api::kAckerComponentName)), num_ackers, num_ackers});
  }
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) { return a.id < b.id; });
  for (size_t i = 1; i < slots.size(); ++i) {
    if (slots[i].id == slots[i - 1].id) {
      return absl::InvalidArgumentError(
          absl::StrCat("duplicate component id '", slots[i].id.value(), "'"));
    }
  }

  TaskLayout layout;
  int32_t next = 1;
  for (const Slot& s : slots) {
    std::vector<api::TaskId>& tasks = layout.component_tasks_[s.id];
    // Partition s.tasks into s.executors ranges; the first (tasks % executors)
    // ranges get one extra task.
    const int base = s.tasks / s.executors;
    const int extra = s.tasks % s.executors;
    for (int e = 0; e < s.executors; ++e) {
      const int size = base + (e < extra ? 1 : 0);
      const api::TaskId start(next);
      for (int k = 0; k < size; ++k) {
        tasks.emplace_back(next);
        layout.task_to_component_.emplace(api::TaskId(next), s.id);
        ++next;
      }
      layout.executors_.push_back({s.id, start, api::TaskId(next - 1)});
    }
  }
  return layout;
}

const std::vector<api::TaskId>& TaskLayout::TasksOf(const api::ComponentId& component) const {
  static const std::vector<api::TaskId>* const kEmpty = new std::vector<api::TaskId>();
  auto it = component_tasks_.find(component);
  return it == component_tasks_.end() ? *kEmpty : it->second;
}

const api::ComponentId* TaskLayout::ComponentOf(api::TaskId task) const {
  auto it = task_to_component_.find(task);
  return it == task_to_component_.end() ? nullptr : &it->second;
}

std::shared_ptr<const api::TopologyInfo> MakeTopologyInfo(const TopologyDef& def,
                                                          const TaskLayout& layout,
                                                          const ComponentStreams& streams,
                                                          std::string topology_id,
                                                          api::Config config) {
  auto info = std::make_shared<api::TopologyInfo>();
  info->topology_id = std::move(topology_id);
  info->topology_name = def.name;
  info->config = std::move(config);
  info->task_to_component = layout.task_to_component();
  info->component_tasks = layout.component_tasks();
  info->component_streams = streams;
  for (const ComponentDef* c : def.AllComponents()) {
    if (!c->config.empty()) info->component_config[c->id] = c->config;
  }
  for (const StreamDef& s : def.streams) {
    info->subscriptions.push_back({s.from, s.stream, s.to,
                                   std::string(GroupingTypeName(s.grouping.type)),
                                   s.grouping.fields});
  }
  return info;
}

}  // namespace tempest::core
