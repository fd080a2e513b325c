#include "supervisor/slot_plan.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"

namespace tempest::supervisor {

std::string SpansText(const std::vector<ExecutorSpan>& spans) {
  return absl::StrJoin(spans, " ", [](std::string* out, const ExecutorSpan& s) {
    absl::StrAppend(out, "[", s.first, "-", s.second, "]");
  });
}

DesiredSlots ComputeDesiredSlots(const std::map<std::string, v1::Assignment>& assignments,
                                 std::string_view supervisor_id, const std::vector<int>& slot_ports,
                                 std::vector<std::string>* problems) {
  const std::set<int> ports(slot_ports.begin(), slot_ports.end());
  auto problem = [problems](std::string line) {
    if (problems != nullptr) problems->push_back(std::move(line));
  };
  DesiredSlots out;
  std::set<int> conflicted;
  // std::map iterates topology ids in order, so on a conflict the lower id
  // has already claimed the port.
  for (const auto& [topology_id, assignment] : assignments) {
    std::set<int> reported;
    for (const v1::ExecutorAssignment& e : assignment.executors()) {
      if (e.node() != supervisor_id) continue;
      const int port = e.port();
      if (!ports.contains(port)) {
        if (reported.insert(port).second) {
          problem(absl::StrCat("topology ", topology_id, " has executors on port ", port,
                               ", which is not one of this supervisor's slots"));
        }
        continue;
      }
      auto [it, inserted] = out.try_emplace(port, DesiredSlot{topology_id, {}});
      if (!inserted && it->second.topology_id != topology_id) {
        if (conflicted.insert(port).second) {
          problem(absl::StrCat("port ", port, " is assigned to both ", it->second.topology_id,
                               " and ", topology_id, "; running ", it->second.topology_id));
        }
        continue;
      }
      it->second.executors.emplace_back(e.start_task(), e.end_task());
    }
  }
  for (auto& [port, slot] : out) {
    std::sort(slot.executors.begin(), slot.executors.end());
    slot.executors.erase(std::unique(slot.executors.begin(), slot.executors.end()),
                         slot.executors.end());
  }
  return out;
}

std::string_view StopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::kUnassigned:
      return "its slot is no longer assigned to it";
    case StopReason::kHeartbeatTimeout:
      return "heartbeat timed out";
    case StopReason::kStartTimeout:
      return "no heartbeat since launch (start timeout)";
    case StopReason::kAdoptionRefused:
      return "found at start-up but not assigned";
    case StopReason::kShutdown:
      return "supervisor shutdown";
  }
  return "unknown";
}

bool IsFailure(StopReason reason) {
  return reason == StopReason::kHeartbeatTimeout || reason == StopReason::kStartTimeout;
}

bool WorkerMatches(const WorkerRecord& worker, const DesiredSlot* desired) {
  if (desired == nullptr || desired->topology_id != worker.topology_id) return false;
  return !worker.executors.has_value() || *worker.executors == desired->executors;
}

std::vector<SlotAction> PlanSlots(const DesiredSlots& desired, std::map<int, SlotState>& slots,
                                  const PlanTimes& times, int64_t now_ms) {
  std::set<int> ports;
  for (const auto& [port, _] : desired) ports.insert(port);
  for (const auto& [port, _] : slots) ports.insert(port);

  std::vector<SlotAction> actions;
  for (int port : ports) {
    auto d = desired.find(port);
    const DesiredSlot* want = d == desired.end() ? nullptr : &d->second;
    SlotState& slot = slots[port];
    if (!slot.worker.has_value()) {
      if (want != nullptr && now_ms >= slot.relaunch_not_before_ms) {
        actions.push_back(SlotAction{SlotAction::Kind::kLaunch, port, *want, {}});
      }
      continue;
    }
    WorkerRecord& w = *slot.worker;
    if (w.stop_sent_ms.has_value()) {
      if (!w.force_killed && now_ms - *w.stop_sent_ms >= times.shutdown_wait_ms) {
        actions.push_back(SlotAction{SlotAction::Kind::kForceKill, port, {}, w.stop_reason});
      }
      continue;
    }
    if (!WorkerMatches(w, want)) {
      if (w.mismatch_since_ms == 0) w.mismatch_since_ms = now_ms;
      if (now_ms - w.mismatch_since_ms >= times.exit_grace_ms) {
        actions.push_back(SlotAction{SlotAction::Kind::kStop, port, {}, StopReason::kUnassigned});
      }
      continue;
    }
    w.mismatch_since_ms = 0;
    if (w.last_beat_ms.has_value()) {
      if (now_ms - *w.last_beat_ms > times.worker_timeout_ms) {
        actions.push_back(
            SlotAction{SlotAction::Kind::kStop, port, {}, StopReason::kHeartbeatTimeout});
      }
    } else if (now_ms - w.launched_at_ms > times.worker_start_timeout_ms) {
      actions.push_back(SlotAction{SlotAction::Kind::kStop, port, {}, StopReason::kStartTimeout});
    }
  }
  return actions;
}

int64_t RelaunchDelayMs(int consecutive_failures, int64_t max_ms) {
  if (consecutive_failures <= 1) return 0;
  int64_t delay = 1000;
  for (int i = 2; i < consecutive_failures && delay < max_ms; ++i) delay *= 2;
  return std::min(delay, max_ms);
}

bool RecordWorkerExit(SlotState& slot, const DesiredSlot* desired, int64_t now_ms,
                      int64_t max_backoff_ms) {
  if (!slot.worker.has_value()) return false;
  const WorkerRecord& w = *slot.worker;
  const bool failure =
      w.stop_sent_ms.has_value() ? IsFailure(w.stop_reason) : WorkerMatches(w, desired);
  if (failure) {
    // A worker that ran for a good while before failing is not in a loop.
    const bool long_run = now_ms - w.launched_at_ms > max_backoff_ms;
    slot.consecutive_failures = long_run ? 1 : slot.consecutive_failures + 1;
    slot.relaunch_not_before_ms =
        now_ms + RelaunchDelayMs(slot.consecutive_failures, max_backoff_ms);
  } else {
    slot.consecutive_failures = 0;
    slot.relaunch_not_before_ms = 0;
  }
  slot.worker.reset();
  return failure;
}

}  // namespace tempest::supervisor
