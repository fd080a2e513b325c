// Nimbus's scheduling round: Storm's liveness (HeartbeatCache) and even
// scheduler over the supervisors' slots, and the assignments it writes.
// Control thread only.

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api/ids.h"
#include "common/core/status_macros.h"
#include "common/net/transport_secret.h"
#include "nimbus/even_scheduler.h"
#include "nimbus/nimbus.h"
#include "nimbus/rebalance_plan.h"
#include "nimbus/transport_secrets.h"
#include "spdlog/spdlog.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// What a scheduling round reads before it places executors.
struct Nimbus::SchedulingRound {
  core::Clock::TimePoint now;
  int64_t now_secs = 0;
  // The stored assignment of each topology that has one.
  std::map<std::string, v1::Assignment> current;
  // Storm's dead ports: a slot with a dead executor is not offered to
  // anyone in this round, so its executors land on another slot.
  std::set<WorkerSlot> dead_slots;
};

namespace {

std::string SlotName(const WorkerSlot& slot) { return absl::StrCat(slot.node, ":", slot.port); }

// Where each executor of a stored assignment runs.
ExecutorSlots PlacementOf(const v1::Assignment& a) {
  ExecutorSlots placement;
  for (const v1::ExecutorAssignment& e : a.executors()) {
    placement[ExecutorId{e.start_task(), e.end_task()}] = WorkerSlot{e.node(), e.port()};
  }
  return placement;
}

// Why an assignment is written: "first" for a topology without one,
// "rebalance" when the leader applied a rebalance of it this round or the
// stored one names ranges the topology no longer has (a rebalance another
// leader applied but did not assign), otherwise "reassignment" (dead
// slots, vanished supervisors, slots that became free).
std::string ChangeReason(const StoredTopology& t, const v1::Assignment* stored,
                         bool rebalanced) {
  if (stored == nullptr) return "first";
  if (rebalanced) return "rebalance";
  std::set<ExecutorId> known;
  for (const v1::ExecutorRange& e : t.base.executors()) {
    known.insert(ExecutorId{e.start_task(), e.end_task()});
  }
  for (const v1::ExecutorAssignment& e : stored->executors()) {
    if (!known.contains(ExecutorId{e.start_task(), e.end_task()})) return "rebalance";
  }
  return "reassignment";
}

// The version and last_change of an assignment written over `stored`: one
// more than the stored version (one written before versions existed counts
// as 0), and the executors it keeps, moves, starts and stops.
void SetVersionAndChange(const v1::Assignment* stored, const ExecutorSlots& placed,
                         const std::string& reason, int64_t now_secs, v1::Assignment& next) {
  next.set_version((stored != nullptr ? stored->version() : 0) + 1);
  const PlacementDiff diff =
      DiffPlacements(stored != nullptr ? PlacementOf(*stored) : ExecutorSlots{}, placed);
  v1::AssignmentChange* change = next.mutable_last_change();
  change->set_time_secs(now_secs);
  change->set_reason(reason);
  change->set_kept(diff.kept);
  change->set_moved(diff.moved);
  change->set_started(diff.started);
  change->set_stopped(diff.stopped);
}

// The assignment of topology `id` the scheduler placed as `placed`:
// executors that stay on their slot keep their start time, and the secret
// is the one ReplacementTransportSecret settles on (kept by reassignment,
// rebalance and another leader); its version and last_change follow
// SetVersionAndChange.
absl::StatusOr<v1::Assignment> NextAssignment(const std::string& id,
                                              const std::string& cluster_secret,
                                              const ExecutorSlots& placed,
                                              const v1::Assignment* stored,
                                              const std::map<std::string, std::string>& hosts,
                                              const std::string& reason, int64_t now_secs) {
  std::map<std::pair<ExecutorId, WorkerSlot>, int64_t> started;
  if (stored != nullptr) {
    for (const v1::ExecutorAssignment& e : stored->executors()) {
      started[{ExecutorId{e.start_task(), e.end_task()}, WorkerSlot{e.node(), e.port()}}] =
          e.start_time_secs();
    }
  }
  v1::Assignment next;
  for (const auto& [executor, slot] : placed) {
    v1::ExecutorAssignment* e = next.add_executors();
    e->set_start_task(executor.start);
    e->set_end_task(executor.end);
    e->set_node(slot.node);
    e->set_port(slot.port);
    auto st = started.find({executor, slot});
    e->set_start_time_secs(st != started.end() ? st->second : now_secs);
    auto host = hosts.find(slot.node);
    (*next.mutable_node_host())[slot.node] = host != hosts.end() ? host->second : "";
  }
  if (stored != nullptr) next.set_transport_secret(stored->transport_secret());
  ASSIGN_OR_RETURN(const std::optional<std::string> secret,
                   ReplacementTransportSecret(cluster_secret, id, next.transport_secret()));
  if (secret.has_value()) next.set_transport_secret(*secret);
  SetVersionAndChange(stored, placed, reason, now_secs, next);
  return next;
}

// The slots of the live supervisors, less the dead ones.
std::vector<SupervisorSlots> OfferedSlots(const std::vector<v1::SupervisorInfo>& supervisors,
                                          const std::set<std::string>& alive_supervisors,
                                          const std::set<WorkerSlot>& dead_slots) {
  std::vector<SupervisorSlots> slots;
  for (const v1::SupervisorInfo& s : supervisors) {
    if (!alive_supervisors.contains(s.supervisor_id())) continue;
    SupervisorSlots ss{s.supervisor_id(), {}};
    for (int port : s.slot_ports()) {
      if (!dead_slots.contains(WorkerSlot{s.supervisor_id(), port})) ss.ports.push_back(port);
    }
    slots.push_back(std::move(ss));
  }
  return slots;
}

}  // namespace

absl::Status Nimbus::Schedule(const std::vector<StoredTopology>& topologies,
                              const std::set<std::string>& rebalanced,
                              std::map<std::string, v1::Assignment>* final_assignments,
                              std::map<std::string, std::vector<StoredBeat>>* beats_out) {
  ASSIGN_OR_RETURN(const std::vector<v1::SupervisorInfo> supervisors, store_->ListSupervisors());
  SchedulingRound round;
  round.now = options_.clock->Now();
  round.now_secs = options_.clock->WallMillis() / 1000;
  std::map<std::string, int64_t> present;
  for (const v1::SupervisorInfo& s : supervisors) present[s.supervisor_id()] = s.time_secs();
  const std::set<std::string> alive_supervisors = cache_.UpdateSupervisors(present, round.now);
  std::map<std::string, std::string> hosts;
  for (const v1::SupervisorInfo& s : supervisors) hosts[s.supervisor_id()] = s.hostname();

  std::vector<TopologySchedulingInput> inputs;
  for (const StoredTopology& t : topologies) {
    ASSIGN_OR_RETURN(TopologySchedulingInput in,
                     ReadSchedulingInput(t, rebalanced.contains(t.id), round, beats_out));
    inputs.push_back(std::move(in));
  }
  const std::vector<SupervisorSlots> slots =
      OfferedSlots(supervisors, alive_supervisors, round.dead_slots);
  for (const auto& [id, when] : present) {
    if (!alive_supervisors.contains(id)) {
      spdlog::warn("nimbus {}: supervisor {} has not beaten for {}s; its slots are freed", id_, id,
                   options_.liveness.supervisor_timeout.count());
    }
  }
  return WriteAssignments(topologies, round.current, ScheduleCluster(inputs, slots), rebalanced,
                          hosts, round.now_secs, final_assignments);
}

absl::StatusOr<TopologySchedulingInput> Nimbus::ReadSchedulingInput(
    const StoredTopology& t, bool rebalanced, SchedulingRound& round,
    std::map<std::string, std::vector<StoredBeat>>* beats_out) {
  TopologySchedulingInput in;
  in.id = t.id;
  in.num_workers = t.base.num_workers();
  in.schedulable = t.base.status() != v1::KILLED;
  in.rebalanced = rebalanced;
  std::set<std::string> spouts;
  for (const v1::ComponentSummary& c : t.base.components()) {
    if (c.spout()) spouts.insert(c.id());
  }
  for (const v1::ExecutorRange& e : t.base.executors()) {
    in.executors.push_back(ExecutorId{e.start_task(), e.end_task()});
    if (e.component() != api::kAckerComponentName && !spouts.contains(e.component())) {
      in.bolts.insert(in.executors.back());
    }
  }
  absl::StatusOr<std::optional<v1::Assignment>> a = store_->GetAssignment(t.id);
  if (absl::IsDataLoss(a.status())) {
    spdlog::warn("nimbus {}: {}; rescheduling it", id_, std::string(a.status().message()));
    a = std::optional<v1::Assignment>();
  }
  RETURN_IF_ERROR(a.status());
  ASSIGN_OR_RETURN(std::vector<StoredBeat> beats, store_->ListWorkerBeats(t.id));
  // A rebalanced topology's assignment is read as any other: the planner
  // places its executors around it, and its dead slots move as in a
  // reassignment.
  if (a->has_value()) {
    round.current[t.id] = **a;
    in.current = PlacementOf(**a);
    if (in.schedulable) {
      FindDeadSlots(t.id, **a, beats, round.now, round.now_secs, &round.dead_slots);
    }
  }
  (*beats_out)[t.id] = std::move(beats);
  return in;
}

void Nimbus::FindDeadSlots(const std::string& topology_id, const v1::Assignment& assignment,
                           const std::vector<StoredBeat>& beats, core::Clock::TimePoint now,
                           int64_t now_secs, std::set<WorkerSlot>* dead_slots) {
  std::vector<AssignedExecutor> assigned;
  for (const v1::ExecutorAssignment& e : assignment.executors()) {
    assigned.push_back(AssignedExecutor{ExecutorId{e.start_task(), e.end_task()},
                                        WorkerSlot{e.node(), e.port()}, e.start_time_secs()});
  }
  std::map<WorkerSlot, BeatView> views;
  for (const StoredBeat& b : beats) {
    if (!b.parsed || b.slot.port == 0) continue;
    BeatView& v = views[b.slot];
    v.content = b.data;
    for (const v1::ExecutorRange& r : b.beat.executors()) {
      v.executors.insert(ExecutorId{r.start_task(), r.end_task()});
    }
  }
  const std::set<ExecutorId> dead =
      cache_.UpdateTopology(topology_id, assigned, views, now, now_secs);
  for (const AssignedExecutor& e : assigned) {
    if (!dead.contains(e.executor)) continue;
    if (dead_slots->insert(e.slot).second) {
      spdlog::warn("nimbus {}: {} on {}: no heartbeat change for {}s; its executors are dead", id_,
                   topology_id, SlotName(e.slot), options_.liveness.task_timeout.count());
    }
  }
}

absl::Status Nimbus::WriteAssignments(const std::vector<StoredTopology>& topologies,
                                      const std::map<std::string, v1::Assignment>& current,
                                      const std::map<std::string, ExecutorSlots>& changed,
                                      const std::set<std::string>& rebalanced,
                                      const std::map<std::string, std::string>& hosts,
                                      int64_t now_secs,
                                      std::map<std::string, v1::Assignment>* final_assignments) {
  for (const StoredTopology& t : topologies) {
    auto it = current.find(t.id);
    const v1::Assignment* stored = it != current.end() ? &it->second : nullptr;
    auto ch = changed.find(t.id);
    if (ch == changed.end()) {
      if (stored == nullptr) continue;
      ASSIGN_OR_RETURN(v1::Assignment kept, KeepAssignment(t, *stored));
      (*final_assignments)[t.id] = std::move(kept);
      continue;
    }
    ASSIGN_OR_RETURN(
        v1::Assignment next,
        NextAssignment(t.id, options_.cluster_secret, ch->second, stored, hosts,
                       ChangeReason(t, stored, rebalanced.contains(t.id)), now_secs));
    RETURN_IF_ERROR(store_->PutAssignment(t.id, next));
    const v1::AssignmentChange& c = next.last_change();
    spdlog::info(
        "nimbus {}: assigned {} (version {}, {}): {} executors kept, {} moved, {} started, {} "
        "stopped; {} of {} placed",
        id_, t.id, next.version(), c.reason(), c.kept(), c.moved(), c.started(), c.stopped(),
        next.executors_size(), t.base.num_executors());
    (*final_assignments)[t.id] = std::move(next);
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Assignment> Nimbus::KeepAssignment(const StoredTopology& t,
                                                      const v1::Assignment& stored) {
  v1::Assignment kept = stored;
  ASSIGN_OR_RETURN(
      const std::optional<std::string> secret,
      ReplacementTransportSecret(options_.cluster_secret, t.id, kept.transport_secret()));
  if (secret.has_value() && t.base.status() != v1::KILLED) {
    // Written before secrets existed, or before the cluster secret file
    // was set: its workers restart with the new secret.
    if (!kept.transport_secret().empty()) {
      spdlog::warn("nimbus {}: {}'s transport secret now derives from {}", id_, t.id,
                   net::kClusterSecretFileKey);
    }
    kept.set_transport_secret(*secret);
    RETURN_IF_ERROR(store_->PutAssignment(t.id, kept));
  }
  return kept;
}

}  // namespace tempest::nimbus
