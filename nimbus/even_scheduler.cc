#include "nimbus/even_scheduler.h"

#include <algorithm>
#include <set>

namespace tempest::nimbus {

std::vector<WorkerSlot> SortSlots(std::vector<WorkerSlot> slots) {
  std::map<std::string, std::vector<WorkerSlot>> by_node;
  for (WorkerSlot& slot : slots) by_node[slot.node].push_back(std::move(slot));
  std::vector<std::vector<WorkerSlot>> groups;
  for (auto& [node, group] : by_node) {
    std::sort(group.begin(), group.end(),
              [](const WorkerSlot& a, const WorkerSlot& b) { return a.port < b.port; });
    groups.push_back(std::move(group));
  }
  // Stable like Java's Collections.sort: equal sizes keep node-id order.
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::vector<WorkerSlot> out;
  for (size_t i = 0;; ++i) {
    bool any = false;
    for (const auto& group : groups) {
      if (i < group.size()) {
        out.push_back(group[i]);
        any = true;
      }
    }
    if (!any) break;
  }
  return out;
}

ExecutorSlots ScheduleTopologyEvenly(const std::vector<ExecutorId>& executors, int num_workers,
                                     const ExecutorSlots& alive,
                                     const std::vector<WorkerSlot>& free_slots) {
  ExecutorSlots result = alive;
  std::set<WorkerSlot> alive_slots;
  for (const auto& [executor, slot] : alive) alive_slots.insert(slot);
  const int alive_count = static_cast<int>(alive_slots.size());
  const int total_to_use =
      std::min(num_workers, static_cast<int>(free_slots.size()) + alive_count);
  const std::vector<WorkerSlot> sorted = SortSlots(free_slots);
  const int take =
      std::clamp(total_to_use - alive_count, 0, static_cast<int>(sorted.size()));
  std::vector<ExecutorId> unassigned;
  for (const ExecutorId& e : executors) {
    if (!alive.contains(e)) unassigned.push_back(e);
  }
  std::sort(unassigned.begin(), unassigned.end());
  // Storm deals only onto newly taken slots; with none to take, the
  // unassigned executors wait for a later round.
  if (take == 0) return result;
  for (size_t i = 0; i < unassigned.size(); ++i) {
    result[unassigned[i]] = sorted[i % static_cast<size_t>(take)];
  }
  return result;
}

std::map<std::string, ExecutorSlots> ScheduleCluster(
    const std::vector<TopologySchedulingInput>& topologies,
    const std::vector<SupervisorSlots>& supervisors) {
  std::set<WorkerSlot> all_slots;
  for (const SupervisorSlots& s : supervisors) {
    for (int port : s.ports) all_slots.insert(WorkerSlot{s.id, port});
  }
  std::vector<const TopologySchedulingInput*> order;
  for (const auto& t : topologies) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->id < b->id; });

  // Alive part of each assignment: executors of the topology on live slots.
  std::map<std::string, ExecutorSlots> alive;
  std::set<WorkerSlot> used;
  for (const auto* t : order) {
    const std::set<ExecutorId> known(t->executors.begin(), t->executors.end());
    ExecutorSlots& a = alive[t->id];
    for (const auto& [executor, slot] : t->current) {
      if (known.contains(executor) && all_slots.contains(slot)) {
        a[executor] = slot;
        used.insert(slot);
      }
    }
  }

  std::map<std::string, ExecutorSlots> changed;
  for (const auto* t : order) {
    if (!t->schedulable) continue;
    const ExecutorSlots& a = alive[t->id];
    std::set<WorkerSlot> slots_in_use;
    for (const auto& [executor, slot] : a) slots_in_use.insert(slot);
    const bool needs = a.size() < t->executors.size() ||
                       static_cast<int>(slots_in_use.size()) < t->num_workers;
    ExecutorSlots next = a;
    if (needs) {
      std::vector<WorkerSlot> free;
      for (const WorkerSlot& slot : all_slots) {
        if (!used.contains(slot)) free.push_back(slot);
      }
      next = ScheduleTopologyEvenly(t->executors, t->num_workers, a, free);
      for (const auto& [executor, slot] : next) used.insert(slot);
    }
    if (next != t->current) changed[t->id] = std::move(next);
  }
  return changed;
}

}  // namespace tempest::nimbus
