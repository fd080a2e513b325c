// Nimbus's reconcile loop: every monitor interval, after each accepted
// write and when the supervisors change, the leader removes killed
// topologies whose wait is over, applies due rebalances, schedules, and
// cleans the nodes of what no longer exists. Control thread only.

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/core/status_macros.h"
#include "nimbus/nimbus.h"
#include "spdlog/spdlog.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

void Nimbus::ScheduleNextRound() {
  std::weak_ptr<coord::SerialExecutor> weak = control_;
  control_->PostAfter(options_.monitor_interval, [this, weak] {
    if (stopping_) return;
    if (absl::Status s = Reconcile(); !s.ok()) {
      spdlog::warn("nimbus {}: reconcile: {}", id_, std::string(s.message()));
    }
    if (weak.lock()) ScheduleNextRound();
  });
}

void Nimbus::ReconcileAfter(std::string_view event) {
  if (stopping_) return;
  // The event is handled by this round or, should it fail, by the next
  // periodic one; the failure is only reported.
  if (absl::Status s = Reconcile(); !s.ok()) {
    spdlog::warn("nimbus {}: reconcile after {}: {}", id_, event, std::string(s.message()));
  }
}

void Nimbus::WatchSupervisors() {
  if (supervisors_watched_.exchange(true)) return;
  std::weak_ptr<coord::SerialExecutor> weak = control_;
  // A supervisor that vanishes (or appears) is handled at once, not at the
  // next monitor round. The watch runs on the session's dispatcher thread,
  // so it only posts.
  absl::StatusOr<std::vector<std::string>> children = session_->ChildrenAndWatch(
      store_->paths().Supervisors(), [this, weak](const coord::ZkWatchEvent& event) {
        supervisors_watched_ = false;
        if (event.type == coord::ZkWatchEventType::kSessionLost) return;
        if (auto control = weak.lock()) {
          control->Post([this] { ReconcileAfter("a change of the supervisors"); });
        }
      });
  if (!children.ok()) supervisors_watched_ = false;
}

absl::Status Nimbus::Reconcile() {
  RETURN_IF_ERROR(Register());
  if (!IsLeader()) return absl::OkStatus();
  WatchSupervisors();
  ASSIGN_OR_RETURN(std::vector<StoredTopology> topologies, store_->List());
  const int64_t now_secs = options_.clock->WallMillis() / 1000;
  std::vector<StoredTopology> remaining;
  std::set<std::string> rebalanced;
  for (StoredTopology& t : topologies) {
    ASSIGN_OR_RETURN(const bool kept, ApplyDueTransition(t, now_secs, &rebalanced));
    if (kept) remaining.push_back(std::move(t));
  }
  std::map<std::string, v1::Assignment> assignments;
  std::map<std::string, std::vector<StoredBeat>> beats;
  absl::Status scheduled = Schedule(remaining, rebalanced, &assignments, &beats);
  if (scheduled.ok()) {
    if (absl::Status s = CleanWorkerBeats(remaining, assignments, beats); !s.ok()) {
      spdlog::warn("nimbus {}: cleaning workerbeats: {}", id_, std::string(s.message()));
    }
    RecordStatistics(remaining, assignments, beats);
  }
  PostDueRounds(remaining, now_secs);
  return scheduled;
}

absl::StatusOr<bool> Nimbus::ApplyDueTransition(StoredTopology& t, int64_t now_secs,
                                                std::set<std::string>* rebalanced) {
  if (t.base.status() == v1::KILLED && t.base.remove_at_secs() <= now_secs) {
    RETURN_IF_ERROR(store_->Remove(t.id));
    cache_.ForgetTopology(t.id);
    spdlog::info("nimbus {}: removed {}", id_, t.id);
    return false;
  }
  if (t.base.status() == v1::REBALANCING && t.base.rebalance_at_secs() <= now_secs) {
    return FinishDueRebalance(t, rebalanced);
  }
  return true;
}

absl::StatusOr<bool> Nimbus::FinishDueRebalance(StoredTopology& t,
                                                std::set<std::string>* rebalanced) {
  absl::StatusOr<v1::StormBase> done = FinishRebalance(t.base);
  if (!done.ok()) {
    // Validated when requested, so this means a damaged record: give
    // up the rebalance rather than retry it every round forever.
    spdlog::error("nimbus {}: cannot rebalance {}: {}; restoring its status", id_, t.id,
                  std::string(done.status().message()));
    v1::StormBase restored = t.base;
    restored.set_status(t.base.prev_status() == v1::INACTIVE ? v1::INACTIVE : v1::ACTIVE);
    restored.set_rebalance_at_secs(0);
    restored.set_rebalance_num_workers(0);
    done = restored;
  }
  absl::Status s = store_->Update(t.id, *done, t.version);
  if (s.ok()) {
    t.base = *std::move(done);
    rebalanced->insert(t.id);
    spdlog::info("nimbus {}: rebalanced {}: {} workers, {} executors", id_, t.id,
                 t.base.num_workers(), t.base.num_executors());
  } else if (absl::IsNotFound(s)) {
    return false;
  } else if (!absl::IsAborted(s)) {
    return s;
  }  // Aborted: changed meanwhile (e.g. killed); the next round decides.
  return true;
}

void Nimbus::RecordStatistics(const std::vector<StoredTopology>& topologies,
                              const std::map<std::string, v1::Assignment>& assignments,
                              const std::map<std::string, std::vector<StoredBeat>>& beats) {
  // Every round feeds the statistics windows, so they fill whether or not
  // anyone reads the REST pages.
  const int64_t now_secs = options_.clock->WallMillis() / 1000;
  std::vector<std::string> live;
  for (const StoredTopology& t : topologies) {
    live.push_back(t.id);
    auto a = assignments.find(t.id);
    auto b = beats.find(t.id);
    if (b == beats.end()) continue;
    stats_history_.RecordTopology(
        t, a != assignments.end() ? std::optional<v1::Assignment>(a->second) : std::nullopt,
        b->second, now_secs);
  }
  stats_history_.Retain(live);
}

void Nimbus::PostDueRounds(const std::vector<StoredTopology>& topologies, int64_t now_secs) {
  // A kill or rebalance whose wait ends before the next periodic round
  // gets its own.
  for (const StoredTopology& t : topologies) {
    int64_t due = 0;
    if (t.base.status() == v1::KILLED) {
      due = t.base.remove_at_secs();
    } else if (t.base.status() == v1::REBALANCING) {
      due = t.base.rebalance_at_secs();
    } else {
      continue;
    }
    const auto delay = std::chrono::seconds(std::max<int64_t>(0, due - now_secs));
    if (delay < options_.monitor_interval) {
      control_->PostAfter(std::chrono::duration_cast<std::chrono::milliseconds>(delay) +
                              std::chrono::milliseconds(50),
                          [this] { ReconcileAfter("a kill or rebalance wait ending"); });
    }
  }
}

absl::Status Nimbus::CleanWorkerBeats(const std::vector<StoredTopology>& topologies,
                                      const std::map<std::string, v1::Assignment>& assignments,
                                      const std::map<std::string, std::vector<StoredBeat>>& beats) {
  std::set<std::string> known;
  for (const StoredTopology& t : topologies) known.insert(t.id);
  RETURN_IF_ERROR(RemoveNodesOfGoneTopologies(known));
  // Beats of slots the topology no longer has.
  for (const auto& [id, list] : beats) {
    std::set<WorkerSlot> slots;
    if (auto a = assignments.find(id); a != assignments.end()) {
      for (const v1::ExecutorAssignment& e : a->second.executors()) {
        slots.insert(WorkerSlot{e.node(), e.port()});
      }
    }
    for (const StoredBeat& b : list) {
      if (b.slot.port != 0 && slots.contains(b.slot)) continue;
      RETURN_IF_ERROR(store_->DeleteWorkerBeat(id, b.name));
      spdlog::info("nimbus {}: removed the stale beat {} of {}", id_, b.name, id);
    }
  }
  return absl::OkStatus();
}

absl::Status Nimbus::RemoveNodesOfGoneTopologies(const std::set<std::string>& known) {
  // Beats of topologies that no longer exist (removed while a worker was
  // still writing, or by an older nimbus).
  ASSIGN_OR_RETURN(const std::vector<std::string> dirs, store_->WorkerBeatTopologies());
  for (const std::string& id : dirs) {
    if (known.contains(id)) continue;
    RETURN_IF_ERROR(store_->RemoveWorkerBeats(id));
    spdlog::info("nimbus {}: removed the workerbeats of {}", id_, id);
  }
  // The same for published errors (a worker may write one while its
  // topology is being removed).
  ASSIGN_OR_RETURN(const std::vector<std::string> error_dirs, store_->ErrorTopologies());
  for (const std::string& id : error_dirs) {
    if (known.contains(id)) continue;
    RETURN_IF_ERROR(store_->RemoveErrors(id));
    spdlog::info("nimbus {}: removed the errors of {}", id_, id);
  }
  // And the supervisors' records of failed workers.
  ASSIGN_OR_RETURN(const std::vector<std::string> failure_dirs, store_->WorkerFailureTopologies());
  for (const std::string& id : failure_dirs) {
    if (known.contains(id)) continue;
    RETURN_IF_ERROR(store_->RemoveWorkerFailures(id));
  }
  return absl::OkStatus();
}

}  // namespace tempest::nimbus
