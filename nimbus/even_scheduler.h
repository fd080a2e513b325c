#ifndef TEMPEST_NIMBUS_EVEN_SCHEDULER_H_
#define TEMPEST_NIMBUS_EVEN_SCHEDULER_H_

#include <compare>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tempest::nimbus {

// A worker slot: one port of one supervisor.
struct WorkerSlot {
  std::string node;  // supervisor id
  int port = 0;
  friend auto operator<=>(const WorkerSlot&, const WorkerSlot&) = default;
};

// An executor as Storm names it: a contiguous, inclusive task range.
struct ExecutorId {
  int start = 0;
  int end = 0;
  friend auto operator<=>(const ExecutorId&, const ExecutorId&) = default;
};

using ExecutorSlots = std::map<ExecutorId, WorkerSlot>;

// Storm's EvenScheduler.sortSlots: slots grouped by node (node ids in
// order), ports ascending within a node, nodes with more free slots first
// (ties keep node order), then interleaved: the first slot of every node,
// then the second, and so on.
std::vector<WorkerSlot> SortSlots(std::vector<WorkerSlot> slots);

// Storm's EvenScheduler.scheduleTopology for one topology, as a pure
// function. `alive` is the part of the current assignment that is still on
// live slots; it is kept. The executors not in it, sorted by start task,
// are dealt round-robin over the first (min(num_workers, alive slots + free
// slots) - alive slots) slots of SortSlots(free). Returns the whole new
// assignment (alive entries included); executors stay unassigned when no
// slot is free.
ExecutorSlots ScheduleTopologyEvenly(const std::vector<ExecutorId>& executors, int num_workers,
                                     const ExecutorSlots& alive,
                                     const std::vector<WorkerSlot>& free_slots);

// What the cluster-wide pass needs to know about one topology.
struct TopologySchedulingInput {
  std::string id;
  std::vector<ExecutorId> executors;
  int num_workers = 1;
  ExecutorSlots current;  // the stored assignment (possibly on dead slots)
  // The leader applied a rebalance of it this round: `current` is the
  // placement before it, and PlanRebalance (rebalance_plan.h) places the
  // executors as a change of it instead of anew.
  bool rebalanced = false;
  // Its bolt executors (not spouts, not ackers): a rebalance onto new
  // workers moves these first (PlanRebalance).
  std::set<ExecutorId> bolts;
  // false (a KILLED topology): its live slots stay taken, but it is never
  // scheduled and never reported as changed.
  bool schedulable = true;
};

// A live supervisor and all its slot ports.
struct SupervisorSlots {
  std::string id;
  std::vector<int> ports;
};

// One scheduling round over the whole cluster (Storm's mkAssignments with
// the even scheduler): entries of current assignments on slots that no
// longer exist are dropped, slots still in use stay taken, and every
// topology that has unassigned executors or fewer workers than requested is
// scheduled in id order over the slots left free. A rebalanced topology (or
// one whose stored placement names ranges it no longer has: a rebalance
// applied by a leader that did not write its assignment) keeps its live
// slots and is placed by PlanRebalance. Returns only the topologies whose
// assignment changed, with their whole new assignment.
std::map<std::string, ExecutorSlots> ScheduleCluster(
    const std::vector<TopologySchedulingInput>& topologies,
    const std::vector<SupervisorSlots>& supervisors);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_EVEN_SCHEDULER_H_
