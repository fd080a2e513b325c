#ifndef TEMPEST_SUPERVISOR_SLOT_PLAN_H_
#define TEMPEST_SUPERVISOR_SLOT_PLAN_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tempest/v1/cluster.pb.h"

namespace tempest::supervisor {

// The supervisor's decisions, as pure functions over plain data: which
// topology and executors each local port should run (from the assignments in
// ZooKeeper), and what to do about the worker each port actually runs. No
// I/O, no clock: times come in as wall-clock milliseconds. Safe from any
// thread.

// An executor as a task range [start, end] (Storm's executor id).
using ExecutorSpan = std::pair<int, int>;

// "[1-2] [3-3]": executors as the supervisor's log lines spell them.
std::string SpansText(const std::vector<ExecutorSpan>& spans);

// What one port should run.
struct DesiredSlot {
  std::string topology_id;
  std::vector<ExecutorSpan> executors;  // sorted
  // What the worker gets on stdin: its topology's ZooKeeper identity
  // (coord::EncodeWorkerHandoff); empty without ZooKeeper auth. Secret: never
  // logged.
  std::string worker_handoff = {};
  friend bool operator==(const DesiredSlot&, const DesiredSlot&) = default;
};
using DesiredSlots = std::map<int, DesiredSlot>;  // port -> slot

// The slots `supervisor_id` should run according to `assignments`
// (topology id -> Assignment). Executors on ports outside `slot_ports`, and a
// port claimed by two topologies (the lower topology id wins), are reported
// in `problems` (one line each) rather than run.
DesiredSlots ComputeDesiredSlots(const std::map<std::string, v1::Assignment>& assignments,
                                 std::string_view supervisor_id, const std::vector<int>& slot_ports,
                                 std::vector<std::string>* problems = nullptr);

// Why a worker is being stopped.
enum class StopReason {
  kUnassigned,        // its slot is no longer assigned to it (exit grace over)
  kHeartbeatTimeout,  // supervisor.worker.timeout.secs without a heartbeat
  kStartTimeout,      // no first heartbeat within supervisor.worker.start.timeout.secs
  kAdoptionRefused,   // found at start-up, not (or no longer) assigned
  kShutdown,          // the supervisor stops
};
std::string_view StopReasonName(StopReason reason);
// Whether a stop for this reason counts as a failure of the worker (for the
// crash-loop back-off).
bool IsFailure(StopReason reason);

// A worker process on one port, as the supervisor tracks it.
struct WorkerRecord {
  pid_t pid = 0;
  std::string topology_id;
  // What it was launched with, then what its heartbeats say it runs (a
  // worker changes its executors in place); nullopt for a worker adopted
  // after a restart (its executors are whatever the assignment says).
  std::optional<std::vector<ExecutorSpan>> executors;
  bool adopted = false;
  // Linux start time of the process (ProcessStartTime), to tell an adopted
  // worker from a later process that got its pid.
  uint64_t start_time = 0;
  int64_t launched_at_ms = 0;
  // Wall-clock time of its latest heartbeat that matches it (topology, port,
  // pid); nullopt until it first beats.
  std::optional<int64_t> last_beat_ms;
  // Since when the port's desired slot differs from what the worker runs
  // (0: it matches).
  int64_t mismatch_since_ms = 0;
  // Set once SIGTERM went to its group, with the reason.
  std::optional<int64_t> stop_sent_ms;
  StopReason stop_reason = StopReason::kUnassigned;
  bool force_killed = false;  // SIGKILL sent
};

// One local port: its worker (if any) and its restart history.
struct SlotState {
  std::optional<WorkerRecord> worker;
  int consecutive_failures = 0;
  int64_t relaunch_not_before_ms = 0;
};

struct PlanTimes {
  int64_t worker_timeout_ms = 30'000;         // supervisor.worker.timeout.secs
  int64_t worker_start_timeout_ms = 120'000;  // supervisor.worker.start.timeout.secs
  int64_t shutdown_wait_ms = 3'000;           // supervisor.worker.shutdown.sleep.secs
  int64_t exit_grace_ms = 10'000;             // tempest.supervisor.worker.exit.grace.secs
};

struct SlotAction {
  enum class Kind {
    kLaunch,     // start a worker for `desired` on `port`
    kStop,       // SIGTERM the worker's group (reason)
    kForceKill,  // SIGKILL the worker's group: it outlived the shutdown wait
  };
  Kind kind = Kind::kLaunch;
  int port = 0;
  DesiredSlot desired;                          // kLaunch
  StopReason reason = StopReason::kUnassigned;  // kStop
  friend bool operator==(const SlotAction&, const SlotAction&) = default;
};

// Compares what should run with what runs, port by port (every port in
// `desired` or `slots`), at `now_ms`:
//   no worker, slot desired     -> kLaunch once relaunch_not_before_ms passed
//   worker does not match       -> after exit_grace_ms (the worker exits by
//                                  itself first) kStop(kUnassigned)
//   worker matches, has beaten  -> kStop(kHeartbeatTimeout) when the beat is
//                                  older than worker_timeout_ms
//   worker matches, never beat  -> kStop(kStartTimeout) after
//                                  worker_start_timeout_ms from its launch
//   worker stopping             -> kForceKill once shutdown_wait_ms passed
// Updates only the bookkeeping field WorkerRecord::mismatch_since_ms; the
// caller carries the actions out and records them (stop_sent_ms, ...).
std::vector<SlotAction> PlanSlots(const DesiredSlots& desired, std::map<int, SlotState>& slots,
                                  const PlanTimes& times, int64_t now_ms);

// Whether the worker runs what `desired` asks for (an adopted worker, whose
// executors are unknown, matches on the topology alone).
bool WorkerMatches(const WorkerRecord& worker, const DesiredSlot* desired);

// The crash-loop back-off: how long to wait before relaunching a worker
// after its n-th consecutive failure (n >= 1): 0 for the first, so a crash is
// repaired at once, then 1 s, 2 s, 4 s, ... capped at `max_ms`.
int64_t RelaunchDelayMs(int consecutive_failures, int64_t max_ms = 30'000);

// Records that the worker of `slot` is gone (reaped, or an adopted one
// vanished) at `now_ms`: clears `slot.worker` and updates the restart
// history. The exit is a failure when the worker was stopped for a failure
// (a heartbeat or start timeout) or exited by itself while its slot was
// still assigned to it; an exit after its assignment changed, or a stop we
// asked for, is not. A failure after a run longer than `max_backoff_ms`
// starts a new count. Returns whether it was a failure.
bool RecordWorkerExit(SlotState& slot, const DesiredSlot* desired, int64_t now_ms,
                      int64_t max_backoff_ms = 30'000);

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_SLOT_PLAN_H_
