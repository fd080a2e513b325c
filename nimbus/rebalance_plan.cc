#include "nimbus/rebalance_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

namespace tempest::nimbus {
namespace {

// The executors one slot runs in the plan. Those that stayed from the
// previous placement are moved last by the balancing: a move of one of them
// stops an executor that would otherwise have run on untouched.
struct SlotLoad {
  std::set<ExecutorId> stayed;
  std::set<ExecutorId> placed;  // by this plan: new ranges and moved executors
  size_t size() const { return stayed.size() + placed.size(); }
};

// The plan's slots in preference order: kept slots in SortSlots order, then
// the free slots it took (SortSlots order too). Every choice that could tie
// is settled by this order, which makes the plan deterministic.
struct Plan {
  std::vector<WorkerSlot> order;
  size_t kept = 0;  // order[0, kept) are kept slots, the rest free slots taken
  std::map<WorkerSlot, SlotLoad> slots;
};

// The slots of `previous` the topology keeps, in SortSlots order: all of
// them unless it now has fewer workers, when the slots with the fewest
// executors are given up. Among equals the slot last in SortSlots order goes
// first: that order interleaves nodes, so its tail is on the node running
// most of the topology's workers, and the ones left stay spread.
std::vector<WorkerSlot> KeptSlots(const ExecutorSlots& previous, int num_workers) {
  std::map<WorkerSlot, int> count;
  for (const auto& [executor, slot] : previous) ++count[slot];
  std::vector<WorkerSlot> in_use;
  for (const auto& [slot, n] : count) in_use.push_back(slot);
  const std::vector<WorkerSlot> sorted = SortSlots(std::move(in_use));
  const size_t keep = std::min(sorted.size(), static_cast<size_t>(std::max(1, num_workers)));
  std::vector<size_t> by_count(sorted.size());
  std::iota(by_count.begin(), by_count.end(), 0);
  std::sort(by_count.begin(), by_count.end(), [&](size_t a, size_t b) {
    const int ca = count[sorted[a]], cb = count[sorted[b]];
    return ca != cb ? ca < cb : a > b;
  });
  const std::set<size_t> given_up(by_count.begin(), by_count.end() - keep);
  std::vector<WorkerSlot> kept;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (!given_up.contains(i)) kept.push_back(sorted[i]);
  }
  return kept;
}

// A slot with the fewest executors: among equals one the plan took from
// the free slots (an executor moving there starts a worker that starts
// anyway, not one more old worker), then the first in the plan's order.
const WorkerSlot& LeastLoaded(const Plan& plan) {
  const WorkerSlot* best = &plan.order.front();
  bool best_new = plan.kept == 0;
  for (size_t i = 0; i < plan.order.size(); ++i) {
    const WorkerSlot& slot = plan.order[i];
    const size_t size = plan.slots.at(slot).size();
    const size_t best_size = plan.slots.at(*best).size();
    const bool taken = i >= plan.kept;
    if (size < best_size || (size == best_size && taken && !best_new)) {
      best = &slot;
      best_new = taken;
    }
  }
  return *best;
}

// The first slot in the plan's order with the most executors.
const WorkerSlot& MostLoaded(const Plan& plan) {
  const WorkerSlot* best = &plan.order.front();
  for (const WorkerSlot& slot : plan.order) {
    if (plan.slots.at(slot).size() > plan.slots.at(*best).size()) best = &slot;
  }
  return *best;
}

// The kept slot that ran most of `executor`'s tasks before (ties: fewer
// executors, then the plan's order); nullopt when none ran any.
std::optional<WorkerSlot> SlotOfMostTasks(const ExecutorId& executor,
                                          const std::map<int, WorkerSlot>& task_slot,
                                          const Plan& plan) {
  std::map<WorkerSlot, int> tasks;
  for (auto it = task_slot.lower_bound(executor.start);
       it != task_slot.end() && it->first <= executor.end; ++it) {
    ++tasks[it->second];
  }
  std::optional<WorkerSlot> best;
  int best_tasks = 0;
  for (const WorkerSlot& slot : plan.order) {
    auto t = tasks.find(slot);
    if (t == tasks.end()) continue;
    if (t->second > best_tasks ||
        (t->second == best_tasks && plan.slots.at(slot).size() < plan.slots.at(*best).size())) {
      best = slot;
      best_tasks = t->second;
    }
  }
  return best;
}

// The executor a balancing move takes from `load`, of those in `allowed`
// (all when null): one placed by this plan before one that stayed, the
// highest start task first.
std::optional<ExecutorId> MoveCandidate(const SlotLoad& load,
                                        const std::set<ExecutorId>* allowed) {
  for (const std::set<ExecutorId>* source : {&load.placed, &load.stayed}) {
    for (auto it = source->rbegin(); it != source->rend(); ++it) {
      if (allowed == nullptr || allowed->contains(*it)) return *it;
    }
  }
  return std::nullopt;
}

// The next balancing move into a slot holding `to_size` executors: a bolt
// from the fullest slot that has one and can give (more than to_size + 1;
// ties: the plan's order), since a bolt leaves its worker in place (ADR
// 0035); only when no such slot has a bolt, any executor of the fullest slot.
std::optional<std::pair<WorkerSlot, ExecutorId>> NextMove(const Plan& plan, size_t to_size,
                                                          const std::set<ExecutorId>& bolts) {
  std::vector<WorkerSlot> by_size = plan.order;
  std::stable_sort(by_size.begin(), by_size.end(), [&](const WorkerSlot& a, const WorkerSlot& b) {
    return plan.slots.at(a).size() > plan.slots.at(b).size();
  });
  for (const WorkerSlot& slot : by_size) {
    const SlotLoad& load = plan.slots.at(slot);
    if (load.size() <= to_size + 1) break;
    if (std::optional<ExecutorId> e = MoveCandidate(load, &bolts)) return std::pair(slot, *e);
  }
  const WorkerSlot& fullest = MostLoaded(plan);
  if (plan.slots.at(fullest).size() <= to_size + 1) return std::nullopt;
  return std::pair(fullest, *MoveCandidate(plan.slots.at(fullest), nullptr));
}

// Takes the free slots the topology has room for, then moves executors to
// the least loaded slot until the counts differ by at most 1 (NextMove).
// Without bolts to prefer, each move goes from a fullest slot to an
// emptiest one: the fewest moves that balance, since each lowers the excess
// over the balanced counts by exactly one. Preferring bolts may take a move
// more, from a slot that is not the fullest; a bolt's move restarts no
// worker, a spout's or an acker's restarts the one it leaves.
void SpreadOverFreeSlots(int num_workers, const std::vector<WorkerSlot>& free_slots,
                         const std::set<ExecutorId>& bolts, Plan& plan) {
  const int room = num_workers - static_cast<int>(plan.order.size());
  const int take = std::min(room, static_cast<int>(free_slots.size()));
  if (take <= 0) return;
  const std::vector<WorkerSlot> sorted = SortSlots(free_slots);
  for (int i = 0; i < take; ++i) {
    plan.order.push_back(sorted[i]);
    plan.slots[sorted[i]];
  }
  for (;;) {
    SlotLoad& to = plan.slots.at(LeastLoaded(plan));
    const std::optional<std::pair<WorkerSlot, ExecutorId>> move = NextMove(plan, to.size(), bolts);
    if (!move.has_value()) return;
    SlotLoad& from = plan.slots.at(move->first);
    from.placed.erase(move->second);
    from.stayed.erase(move->second);
    to.placed.insert(move->second);
  }
}

}  // namespace

ExecutorSlots PlanRebalance(const std::vector<ExecutorId>& executors, int num_workers,
                            const ExecutorSlots& previous,
                            const std::vector<WorkerSlot>& free_slots,
                            const std::set<ExecutorId>& bolts) {
  if (previous.empty()) return ScheduleTopologyEvenly(executors, num_workers, {}, free_slots);
  Plan plan;
  plan.order = KeptSlots(previous, num_workers);
  plan.kept = plan.order.size();
  for (const WorkerSlot& slot : plan.order) plan.slots[slot];
  // Where each task ran before, on the slots that stay.
  std::map<int, WorkerSlot> task_slot;
  for (const auto& [executor, slot] : previous) {
    if (!plan.slots.contains(slot)) continue;
    for (int task = executor.start; task <= executor.end; ++task) task_slot[task] = slot;
  }
  std::vector<ExecutorId> sorted = executors;
  std::sort(sorted.begin(), sorted.end());
  std::vector<ExecutorId> pending;
  for (const ExecutorId& executor : sorted) {
    auto it = previous.find(executor);
    if (it != previous.end() && plan.slots.contains(it->second)) {
      plan.slots.at(it->second).stayed.insert(executor);
    } else {
      pending.push_back(executor);
    }
  }
  for (const ExecutorId& executor : pending) {
    const std::optional<WorkerSlot> home = SlotOfMostTasks(executor, task_slot, plan);
    plan.slots.at(home.value_or(LeastLoaded(plan))).placed.insert(executor);
  }
  SpreadOverFreeSlots(num_workers, free_slots, bolts, plan);
  ExecutorSlots placement;
  for (const auto& [slot, load] : plan.slots) {
    for (const ExecutorId& executor : load.stayed) placement[executor] = slot;
    for (const ExecutorId& executor : load.placed) placement[executor] = slot;
  }
  return placement;
}

PlacementDiff DiffPlacements(const ExecutorSlots& before, const ExecutorSlots& after) {
  PlacementDiff diff;
  for (const auto& [executor, slot] : after) {
    auto it = before.find(executor);
    if (it == before.end()) {
      ++diff.started;
    } else if (it->second == slot) {
      ++diff.kept;
    } else {
      ++diff.moved;
    }
  }
  for (const auto& [executor, slot] : before) {
    if (!after.contains(executor)) ++diff.stopped;
  }
  return diff;
}

}  // namespace tempest::nimbus
