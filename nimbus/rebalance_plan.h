#ifndef TEMPEST_NIMBUS_REBALANCE_PLAN_H_
#define TEMPEST_NIMBUS_REBALANCE_PLAN_H_

#include <set>
#include <vector>

#include "nimbus/even_scheduler.h"

namespace tempest::nimbus {

// Where a topology's executors run after a rebalance, planned as a change of
// the placement before it rather than a new one: a worker whose executors do
// not change is left alone, so as few executors as possible change slots.
// `previous` is the placement before the rebalance on live slots only (its
// ranges may be ones the rebalance split or merged); `free_slots` are the
// cluster's slots no topology uses. The rules, in order:
//  1. an executor whose [start, end] range existed before stays on its slot;
//  2. with fewer workers than slots in use, the slots with the fewest
//     executors are given up (ties: the slot last in SortSlots order, so the
//     node running most of the topology's workers gives one up first) and
//     their executors are placed as new ones;
//  3. a new range (task ids never change, only how they are grouped) goes to
//     the kept slot that ran most of its tasks, so the tasks stay in their
//     worker; otherwise, like an executor of a given-up slot, to the kept
//     slot with the fewest executors (ties: SortSlots order);
//  4. with more workers than kept slots, the first free slots in SortSlots
//     order are taken and executors move to the least loaded slot until the
//     counts differ by at most 1, executors placed by rule 3 before ones that
//     stayed, the highest start task first. Executors in `bolts` move first,
//     from the fullest slot that has one and can give: a worker that only
//     loses bolt executors lets them leave in place (ADR 0035), one that
//     loses a spout or an acker restarts. Only when no slot that can give
//     has a bolt does an other executor move, from a fullest slot. Without
//     `bolts` that is as few moves as balancing needs; with them it may be
//     a move more;
//  5. with no previous placement: ScheduleTopologyEvenly.
// Returns the whole placement. Pure and deterministic.
ExecutorSlots PlanRebalance(const std::vector<ExecutorId>& executors, int num_workers,
                            const ExecutorSlots& previous,
                            const std::vector<WorkerSlot>& free_slots,
                            const std::set<ExecutorId>& bolts = {});

// How one placement differs from the one before it, by executor range: kept
// on its slot, moved to another slot, started (a range `before` did not
// have) or stopped (a range `after` does not have).
struct PlacementDiff {
  int kept = 0;
  int moved = 0;
  int started = 0;
  int stopped = 0;
  friend bool operator==(const PlacementDiff&, const PlacementDiff&) = default;
};

// Pure.
PlacementDiff DiffPlacements(const ExecutorSlots& before, const ExecutorSlots& after);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_REBALANCE_PLAN_H_
