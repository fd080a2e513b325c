#include "nimbus/even_scheduler.h"

#include <algorithm>
#include <set>

#include "nimbus/rebalance_plan.h"

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

namespace {

// A stored placement that names ranges the topology no longer has was made
// before a rebalance that changed its executors (applied by a leader that
// did not live to write the assignment): it is planned as a rebalance too,
// or its new ranges would wait for a free slot.
bool PlannedAsRebalance(const TopologySchedulingInput& t, const std::set<ExecutorId>& known) {
  if (t.rebalanced) return true;
  return std::any_of(t.current.begin(), t.current.end(),
                     [&](const auto& entry) { return !known.contains(entry.first); });
}

}  // namespace

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

  // Alive part of each assignment: executors of the topology on live slots
  // (for a rebalance, the ranges before it: the planner needs them to keep
  // tasks in their worker).
  std::map<std::string, ExecutorSlots> alive;
  std::set<std::string> rebalanced;
  std::set<WorkerSlot> used;
  for (const auto* t : order) {
    const std::set<ExecutorId> known(t->executors.begin(), t->executors.end());
    const bool rebalance = t->schedulable && PlannedAsRebalance(*t, known);
    if (rebalance) rebalanced.insert(t->id);
    ExecutorSlots& a = alive[t->id];
    for (const auto& [executor, slot] : t->current) {
      if ((rebalance || known.contains(executor)) && all_slots.contains(slot)) {
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
    const bool rebalance = rebalanced.contains(t->id);
    const bool needs = rebalance || a.size() < t->executors.size() ||
                       static_cast<int>(slots_in_use.size()) < t->num_workers;
    ExecutorSlots next = a;
    if (needs) {
      std::vector<WorkerSlot> free;
      for (const WorkerSlot& slot : all_slots) {
        if (!used.contains(slot)) free.push_back(slot);
      }
      // The slots a rebalance gives up stay in `used` for this round: a
      // damaged record may name a slot another topology holds too, and
      // freeing it here would hand it out twice. The next round offers them.
      next = rebalance ? PlanRebalance(t->executors, t->num_workers, a, free, t->bolts)
                       : ScheduleTopologyEvenly(t->executors, t->num_workers, a, free);
      for (const auto& [executor, slot] : next) used.insert(slot);
    }
    if (next != t->current) changed[t->id] = std::move(next);
  }
  return changed;
}

}  // namespace tempest::nimbus
