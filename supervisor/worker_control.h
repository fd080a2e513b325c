#ifndef TEMPEST_SUPERVISOR_WORKER_CONTROL_H_
#define TEMPEST_SUPERVISOR_WORKER_CONTROL_H_

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/coord/serial_executor.h"
#include "common/core/metrics_registry.h"
#include "supervisor/metrics_view.h"
#include "supervisor/slot_plan.h"
#include "supervisor/supervisor_options.h"
#include "supervisor/worker_exit_record.h"

namespace tempest::supervisor {

// A worker as the supervisor sees it (Supervisor::Workers()).
struct WorkerSnapshot {
  int port = 0;
  pid_t pid = 0;
  std::string topology_id;
  bool adopted = false;
  bool stopping = false;
  bool has_heartbeat = false;
};

// The supervisor's worker side: launches, watches, restarts and stops the
// worker processes of this machine's slots (ADR 0011).
//
// Owns the control thread (a SerialExecutor), every worker it launched or
// adopted and their slot bookkeeping. Everything but UsedPorts() runs on the
// control thread: post to executor(). Every check_interval (StartTicking) it
// reaps exited workers (waitpid(pid, WNOHANG) per worker, never -1), checks
// adopted ones by their /proc start time, reads heartbeat files, runs
// PlanSlots and carries its actions out. It never calls ZooKeeper, so an
// outage does not delay restarts; the desired slots come in through
// SetDesired, and after a worker exits it calls `request_sync` (on the
// control thread) for a fresh assignment read. Launches, restarts and stops
// are counted in `metrics` (which must outlive it), and each check publishes
// the workers' latest heartbeats for /metrics (WorkerMetrics()).
//
// Each failed worker updates its slot's exit record, which goes to
// `publish_exit` as JSON (EncodeWorkerExitRecord) for the ZooKeeper thread to
// write; nullopt asks it to remove the record (the slot left the topology).
class WorkerControl {
 public:
  using PublishExitFn = std::function<void(const std::string& topology_id, int port,
                                           std::optional<std::string> record)>;
  WorkerControl(const SupervisorOptions& options, std::string supervisor_id,
                std::function<void()> request_sync, core::MetricsRegistry& metrics,
                PublishExitFn publish_exit = nullptr);
  WorkerControl(const WorkerControl&) = delete;
  WorkerControl& operator=(const WorkerControl&) = delete;

  coord::SerialExecutor& executor() { return *control_; }

  // Control thread. Start-up: takes the assignments, adopts the live
  // leftover workers of still-assigned slots, stops the others, and only
  // then allows launches.
  void AdoptLeftovers(const DesiredSlots& desired);
  // Control thread. A fresh assignment read (nullopt: it failed, so the
  // known slots are kept) ends the launch hold and plans at once.
  void SetDesired(std::optional<DesiredSlots> desired);
  // Control thread. One check of the workers and the plan it leads to.
  void CheckAndPlan();
  // Control thread. Runs CheckAndPlan every check_interval until BeginStop.
  void StartTicking();
  std::vector<WorkerSnapshot> Snapshot() const;
  // Control thread. SIGTERM to every worker, wait the shutdown wait, SIGKILL.
  void StopAllWorkers();

  // Any thread: no more launches or ticks (StopAllWorkers may still run).
  void BeginStop() { stopping_ = true; }
  // Any thread: stops the control thread (after BeginStop).
  void StopThread() { control_->Stop(); }

  // Any thread: the ports that have a worker, for SupervisorInfo.used_ports.
  std::vector<int> UsedPorts() const;
  // Any thread: each worker with its latest matching heartbeat, by port, as
  // of the last check (what /metrics serves; never waits on the control
  // thread).
  std::vector<WorkerMetricsSource> WorkerMetrics() const;

 private:
  int64_t NowMs() const;
  void CheckWorkers();
  // nullopt while the worker of `port` runs (its heartbeat read); once it
  // has exited, how (its wait status, or that an adopted one is gone).
  std::optional<std::string> ExitOf(int port, WorkerRecord& worker, int64_t now);
  // After the worker of `port` exited: kills what it left, updates the
  // slot's back-off and exit record, logs it and removes its launch record.
  void HandleExit(int port, SlotState& slot, const std::string& how, int64_t now);
  void ExecutePlan();
  void Launch(int port, const DesiredSlot& desired);
  void ReadHeartbeat(int port, WorkerRecord& worker);
  // Who the worker of `port` runs as (nullopt: as the supervisor).
  std::optional<os::UnixUser> SlotUser(int port) const;
  // With slot uids, SIGKILLs every process of the slot's uid (an error is
  // logged and returned).
  absl::Status KillSlotProcesses(int port);
  // The exit record of `port` after its worker `pid` of `topology` failed
  // (`how`: its wait status, with the stop reason when we stopped it).
  void RecordFailure(int port, const SlotState& slot, const std::string& topology, pid_t pid,
                     const std::string& how, int64_t now);
  // A failing slot's record says running once its new worker beat and ran
  // past the back-off cap (a later failure no longer counts as the same loop).
  void MarkRecovered(int port, const WorkerRecord& worker, int64_t now);
  // Records of slots no longer desired for their topology are removed.
  void DropStaleExitRecords();
  void PublishUsedPorts();
  void PublishWorkerMetrics();
  void TickLoop();
  // Start-up: one {local}/supervisor/workers/{port} directory; adopts its worker or
  // adds it to `to_kill` (pid, start time).
  void AdoptOrKillWorkerIn(const std::string& dir, int dir_port,
                           std::vector<std::pair<pid_t, uint64_t>>& to_kill);
  // Start-up: live workers of ours that no worker.json names.
  void KillUnnamedWorkers(std::vector<std::pair<pid_t, uint64_t>>& to_kill);

  const SupervisorOptions options_;
  const std::string id_;
  const std::function<void()> request_sync_;
  const PublishExitFn publish_exit_;
  PlanTimes times_;
  std::shared_ptr<coord::SerialExecutor> control_ = std::make_shared<coord::SerialExecutor>();
  std::atomic<bool> stopping_{false};

  // Written by the control thread, read by the ZooKeeper thread.
  mutable absl::Mutex used_mu_;
  std::vector<int> used_ports_ ABSL_GUARDED_BY(used_mu_);
  // Written by the control thread, read by the HTTP thread.
  mutable absl::Mutex metrics_mu_;
  std::vector<WorkerMetricsSource> worker_metrics_ ABSL_GUARDED_BY(metrics_mu_);

  core::MetricsRegistry& metrics_;
  core::Counter& launches_;
  core::Counter& restarts_;

  // Control-thread state.
  bool adoption_done_ = false;
  DesiredSlots desired_;
  std::map<int, SlotState> slots_;
  std::set<int> bad_beat_logged_;
  std::map<int, WorkerExitRecord> exit_records_;  // by port
  // Each worker's latest heartbeat that matched it, by port.
  std::map<int, std::shared_ptr<const v1::WorkerHeartbeat>> beats_;
  // After a worker exits, launches wait (at most until then) for a fresh
  // assignment sync: the worker probably left because its slot changed.
  int64_t launch_hold_until_ms_ = 0;
};

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_WORKER_CONTROL_H_
