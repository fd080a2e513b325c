#include "supervisor/worker_control.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/os/child_process.h"
#include "spdlog/spdlog.h"
#include "supervisor/worker_files.h"
#include "supervisor/worker_launcher.h"
#include "supervisor/worker_sandbox.h"

namespace tempest::supervisor {

using std::chrono::milliseconds;

WorkerControl::WorkerControl(const SupervisorOptions& options, std::string supervisor_id,
                             std::function<void()> request_sync, core::MetricsRegistry& metrics,
                             PublishExitFn publish_exit)
    : options_(options),
      id_(std::move(supervisor_id)),
      request_sync_(std::move(request_sync)),
      publish_exit_(std::move(publish_exit)),
      metrics_(metrics),
      launches_(metrics.GetCounter("tempest_supervisor_worker_launches_total")),
      restarts_(metrics.GetCounter("tempest_supervisor_worker_restarts_total")) {
  times_.worker_timeout_ms = options_.worker_timeout.count();
  times_.worker_start_timeout_ms = options_.worker_start_timeout.count();
  times_.shutdown_wait_ms = options_.worker_shutdown_wait.count();
  times_.exit_grace_ms = options_.worker_exit_grace.count();
}

int64_t WorkerControl::NowMs() const { return options_.clock->WallMillis(); }

void WorkerControl::AdoptLeftovers(const DesiredSlots& desired) {
  desired_ = desired;
  const std::string workers_dir = options_.local_dir + "/supervisor/workers";
  std::error_code ec;
  std::vector<std::pair<pid_t, uint64_t>> to_kill;
  for (const auto& entry : std::filesystem::directory_iterator(workers_dir, ec)) {
    int dir_port = 0;
    if (!entry.is_directory(ec) || !absl::SimpleAtoi(entry.path().filename().string(), &dir_port)) {
      continue;
    }
    AdoptOrKillWorkerIn(entry.path().string(), dir_port, to_kill);
  }
  KillUnnamedWorkers(to_kill);
  // Not our children: watch them go by their start time.
  const auto deadline = std::chrono::steady_clock::now() + options_.worker_shutdown_wait;
  auto alive = [](const std::pair<pid_t, uint64_t>& p) {
    return ProcessStartTime(p.first) == std::optional<uint64_t>(p.second);
  };
  while (std::any_of(to_kill.begin(), to_kill.end(), alive) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  for (const auto& p : to_kill) {
    if (alive(p)) {
      spdlog::warn("supervisor {}: leftover worker pid {} ignored SIGTERM; SIGKILL", id_, p.first);
      SignalWorkerGroup(p.first, SIGKILL);
    }
  }
  adoption_done_ = true;
  PublishUsedPorts();
  PublishWorkerMetrics();
}

void WorkerControl::AdoptOrKillWorkerIn(const std::string& dir, int dir_port,
                                        std::vector<std::pair<pid_t, uint64_t>>& to_kill) {
  std::error_code ec;
  absl::StatusOr<std::string> text = ReadSmallFile(WorkerJsonPath(dir), 64 << 10);
  if (absl::IsNotFound(text.status())) return;
  if (!text.ok()) {
    spdlog::warn("supervisor {}: {}", id_, std::string(text.status().message()));
    return;
  }
  absl::StatusOr<WorkerLaunchRecord> record = ParseWorkerJson(*text);
  if (!record.ok()) {
    spdlog::warn("supervisor {}: {}: {}", id_, WorkerJsonPath(dir),
                 std::string(record.status().message()));
    return;
  }
  const std::optional<uint64_t> start_time = ProcessStartTime(record->pid);
  if (!start_time || !LooksLikeWorker(record->pid, record->port)) {
    spdlog::info("supervisor {}: worker of {} on port {} (pid {}) is gone", id_,
                 record->topology_id, record->port, record->pid);
    std::filesystem::remove(WorkerJsonPath(dir), ec);
    return;
  }
  auto desired = desired_.find(record->port);
  const bool ours =
      record->supervisor_id == id_ && record->port == dir_port &&
      std::count(options_.slot_ports.begin(), options_.slot_ports.end(), record->port) > 0 &&
      !(slots_.contains(record->port) && slots_[record->port].worker);
  if (ours && desired != desired_.end() && desired->second.topology_id == record->topology_id) {
    WorkerRecord w;
    w.pid = record->pid;
    w.topology_id = record->topology_id;
    w.adopted = true;
    w.start_time = *start_time;
    w.launched_at_ms = record->launched_at_secs * 1000;
    ReadHeartbeat(record->port, w);
    // A worker that has never beaten gets the start timeout from now.
    if (!w.last_beat_ms) w.launched_at_ms = std::max(w.launched_at_ms, NowMs());
    slots_[record->port].worker = std::move(w);
    spdlog::info("supervisor {}: adopted worker of {} on port {} (pid {})", id_,
                 record->topology_id, record->port, record->pid);
    return;
  }
  spdlog::warn("supervisor {}: killing leftover worker of {} on port {} (pid {}): {}", id_,
               record->topology_id, record->port, record->pid,
               StopReasonName(StopReason::kAdoptionRefused));
  SignalWorkerGroup(record->pid, SIGTERM);
  to_kill.emplace_back(record->pid, *start_time);
  std::filesystem::remove(WorkerJsonPath(dir), ec);
}

void WorkerControl::KillUnnamedWorkers(std::vector<std::pair<pid_t, uint64_t>>& to_kill) {
  // Workers of ours that no worker.json names (lost in a crash between a
  // launch and its write) would hold their port forever.
  for (pid_t pid : FindWorkersOf(id_)) {
    bool known = false;
    for (const auto& [port, slot] : slots_)
      known = known || (slot.worker && slot.worker->pid == pid);
    for (const auto& p : to_kill) known = known || p.first == pid;
    const std::optional<uint64_t> start_time = ProcessStartTime(pid);
    if (known || !start_time) continue;
    spdlog::warn("supervisor {}: killing worker pid {} that no worker.json names", id_, pid);
    SignalWorkerGroup(pid, SIGTERM);
    to_kill.emplace_back(pid, *start_time);
  }
}

void WorkerControl::SetDesired(std::optional<DesiredSlots> desired) {
  if (desired) {
    desired_ = *std::move(desired);
    DropStaleExitRecords();
  }
  launch_hold_until_ms_ = 0;
  ExecutePlan();
}

void WorkerControl::CheckAndPlan() {
  CheckWorkers();
  ExecutePlan();
}

void WorkerControl::StartTicking() {
  control_->Post([this] { TickLoop(); });
}

std::vector<WorkerSnapshot> WorkerControl::Snapshot() const {
  std::vector<WorkerSnapshot> out;
  for (const auto& [port, slot] : slots_) {
    if (!slot.worker) continue;
    const WorkerRecord& w = *slot.worker;
    out.push_back(WorkerSnapshot{port, w.pid, w.topology_id, w.adopted, w.stop_sent_ms.has_value(),
                                 w.last_beat_ms.has_value()});
  }
  return out;
}

std::vector<int> WorkerControl::UsedPorts() const {
  absl::MutexLock lock(&used_mu_);
  return used_ports_;
}

std::vector<WorkerMetricsSource> WorkerControl::WorkerMetrics() const {
  absl::MutexLock lock(&metrics_mu_);
  return worker_metrics_;
}

void WorkerControl::PublishWorkerMetrics() {
  std::vector<WorkerMetricsSource> workers;
  for (const auto& [port, slot] : slots_) {
    if (!slot.worker) continue;
    auto beat = beats_.find(port);
    workers.push_back(WorkerMetricsSource{port, slot.worker->topology_id,
                                          beat == beats_.end() ? nullptr : beat->second});
  }
  absl::MutexLock lock(&metrics_mu_);
  worker_metrics_ = std::move(workers);
}

void WorkerControl::ReadHeartbeat(int port, WorkerRecord& worker) {
  const std::string path = HeartbeatPath(WorkerDir(options_.local_dir, port));
  absl::StatusOr<std::string> bytes = ReadSlotHeartbeat(options_.local_dir, port);
  if (!bytes.ok()) {
    if (!absl::IsNotFound(bytes.status()) && bad_beat_logged_.insert(port).second) {
      spdlog::warn("supervisor {}: {}", id_, std::string(bytes.status().message()));
    }
    return;
  }
  absl::StatusOr<v1::WorkerHeartbeat> beat = ParseWorkerHeartbeat(*bytes);
  if (!beat.ok()) {
    if (bad_beat_logged_.insert(port).second) {
      spdlog::warn("supervisor {}: {}: {}", id_, path, std::string(beat.status().message()));
    }
    return;
  }
  if (!HeartbeatBelongsTo(*beat, worker.topology_id, port, worker.pid)) return;
  const int64_t beat_ms = beat->time_secs() * 1000;
  if (!worker.last_beat_ms || beat_ms > *worker.last_beat_ms) worker.last_beat_ms = beat_ms;
  // A worker changes its executors in place (docs/adr/0034-*, 0035-*) and
  // beats what it runs now: that, not what it was launched with, is what
  // the slot's assignment must match, or it would be stopped as unassigned
  // after the exit grace. An adopted worker stays matched to anything.
  if (worker.executors.has_value() && beat->executors_size() > 0) {
    std::vector<ExecutorSpan> runs;
    for (const v1::ExecutorRange& e : beat->executors()) {
      runs.emplace_back(e.start_task(), e.end_task());
    }
    std::sort(runs.begin(), runs.end());
    worker.executors = std::move(runs);
  }
  // Parsed anyway; kept whole for /metrics (the registry is in it).
  beats_[port] = std::make_shared<const v1::WorkerHeartbeat>(*std::move(beat));
}

std::optional<std::string> WorkerControl::ExitOf(int port, WorkerRecord& w, int64_t now) {
  std::string how;
  if (w.adopted) {
    if (ProcessStartTime(w.pid) == std::optional<uint64_t>(w.start_time)) {
      ReadHeartbeat(port, w);
      MarkRecovered(port, w, now);
      return std::nullopt;
    }
    how = "exited (adopted: status unknown)";
  } else {
    std::optional<int> status = ReapIfExited(w.pid);
    if (!status) {
      ReadHeartbeat(port, w);
      MarkRecovered(port, w, now);
      return std::nullopt;
    }
    how = os::DescribeWaitStatus(*status);
  }
  return how;
}

void WorkerControl::HandleExit(int port, SlotState& slot, const std::string& how, int64_t now) {
  const WorkerRecord& w = *slot.worker;
  // Members of its group that outlived it (its own children) go too.
  SignalWorkerGroup(w.pid, SIGKILL);
  const std::string topology = w.topology_id;
  const pid_t pid = w.pid;
  const bool stopped_by_us = w.stop_sent_ms.has_value();
  const StopReason reason = w.stop_reason;
  auto d = desired_.find(port);
  const bool failure = RecordWorkerExit(slot, d == desired_.end() ? nullptr : &d->second, now,
                                        options_.max_relaunch_delay.count());
  beats_.erase(port);
  if (failure) {
    restarts_.Add();
    RecordFailure(port, slot, topology, pid,
                  stopped_by_us ? absl::StrCat("stopped (", std::string(StopReasonName(reason)), "): ", how)
                                : how,
                  now);
  }
  if (stopped_by_us) {
    spdlog::info("supervisor {}: worker of {} on port {} (pid {}) stopped ({}): {}", id_,
                 topology, port, pid, StopReasonName(reason), how);
  } else if (failure) {
    spdlog::warn("supervisor {}: worker of {} on port {} (pid {}) died: {}; restart #{} in {} ms",
                 id_, topology, port, pid, how, slot.consecutive_failures,
                 std::max<int64_t>(0, slot.relaunch_not_before_ms - now));
  } else {
    spdlog::info("supervisor {}: worker of {} on port {} (pid {}) left its changed slot: {}", id_,
                 topology, port, pid, how);
  }
  RemoveLaunchRecord(options_.local_dir, port);
  // Whatever the topology left running under the slot's own uid goes
  // with its worker.
  (void)KillSlotProcesses(port);  // logged; the next launch tries again
}

void WorkerControl::CheckWorkers() {
  bool exited = false;
  const int64_t now = NowMs();
  for (auto& [port, slot] : slots_) {
    if (!slot.worker) continue;
    std::optional<std::string> how = ExitOf(port, *slot.worker, now);
    if (!how) continue;
    exited = true;
    HandleExit(port, slot, *how, now);
  }
  PublishWorkerMetrics();
  if (exited) {
    PublishUsedPorts();
    // A worker that exits by itself usually saw its assignment change: read
    // the assignments again before relaunching (briefly: a ZooKeeper outage
    // must not delay a restart for long).
    launch_hold_until_ms_ = now + 1000;
    request_sync_();
  }
}

void WorkerControl::RecordFailure(int port, const SlotState& slot, const std::string& topology,
                                  pid_t pid, const std::string& how, int64_t now) {
  WorkerExitRecord& r = exit_records_[port];
  if (r.topology_id != topology) {
    r = WorkerExitRecord{};
    r.topology_id = topology;
    r.port = port;
  }
  r.pid = pid;
  r.status = how;
  r.output = OutputTailLines(ReadWorkerLogTail(options_.local_dir, port, kExitLogTailBytes));
  ++r.restarts;
  r.consecutive_failures = slot.consecutive_failures;
  r.exit_time_ms = now;
  r.next_attempt_ms = std::max(now, slot.relaunch_not_before_ms);
  r.running = false;
  if (publish_exit_) publish_exit_(topology, port, EncodeWorkerExitRecord(r, id_, options_.hostname));
}

void WorkerControl::MarkRecovered(int port, const WorkerRecord& worker, int64_t now) {
  auto it = exit_records_.find(port);
  if (it == exit_records_.end() || it->second.running ||
      it->second.topology_id != worker.topology_id || !worker.last_beat_ms ||
      now - worker.launched_at_ms <= options_.max_relaunch_delay.count()) {
    return;
  }
  it->second.running = true;
  it->second.pid = worker.pid;
  if (publish_exit_) {
    publish_exit_(worker.topology_id, port,
                  EncodeWorkerExitRecord(it->second, id_, options_.hostname));
  }
}

void WorkerControl::DropStaleExitRecords() {
  for (auto it = exit_records_.begin(); it != exit_records_.end();) {
    auto d = desired_.find(it->first);
    if (d != desired_.end() && d->second.topology_id == it->second.topology_id) {
      ++it;
      continue;
    }
    if (publish_exit_) publish_exit_(it->second.topology_id, it->first, std::nullopt);
    it = exit_records_.erase(it);
  }
}

void WorkerControl::PublishUsedPorts() {
  std::vector<int> used;
  for (const auto& [port, slot] : slots_) {
    if (slot.worker) used.push_back(port);
  }
  absl::MutexLock lock(&used_mu_);
  used_ports_ = std::move(used);
}

void WorkerControl::ExecutePlan() {
  // Nothing is launched before leftover workers were adopted or killed: a
  // launch would overwrite the worker.json of a worker still to be adopted.
  if (stopping_ || !adoption_done_) return;
  const int64_t now = NowMs();
  bool launched = false;
  for (const SlotAction& action : PlanSlots(desired_, slots_, times_, now)) {
    SlotState& slot = slots_[action.port];
    switch (action.kind) {
      case SlotAction::Kind::kLaunch:
        if (now < launch_hold_until_ms_) break;  // a fresh sync is on its way
        Launch(action.port, action.desired);
        launched = true;
        break;
      case SlotAction::Kind::kStop: {
        WorkerRecord& w = *slot.worker;
        spdlog::warn("supervisor {}: stopping worker of {} on port {} (pid {}): {}", id_,
                     w.topology_id, action.port, w.pid, StopReasonName(action.reason));
        SignalWorkerGroup(w.pid, SIGTERM);
        w.stop_sent_ms = now;
        w.stop_reason = action.reason;
        metrics_
            .GetCounter("tempest_supervisor_worker_stops_total",
                        {{"reason", std::string(StopReasonName(action.reason))}})
            .Add();
        break;
      }
      case SlotAction::Kind::kForceKill: {
        WorkerRecord& w = *slot.worker;
        spdlog::warn(
            "supervisor {}: worker of {} on port {} (pid {}) still runs {} ms after "
            "SIGTERM; SIGKILL",
            id_, w.topology_id, action.port, w.pid, now - *w.stop_sent_ms);
        SignalWorkerGroup(w.pid, SIGKILL);
        w.force_killed = true;
        break;
      }
    }
  }
  if (launched) PublishUsedPorts();
}

void WorkerControl::Launch(int port, const DesiredSlot& desired) {
  SlotState& slot = slots_[port];
  const int64_t now = NowMs();
  auto fail = [&](const absl::Status& s) {
    ++slot.consecutive_failures;
    const int64_t delay = std::max<int64_t>(
        1000, RelaunchDelayMs(slot.consecutive_failures, options_.max_relaunch_delay.count()));
    slot.relaunch_not_before_ms = now + delay;
    spdlog::error("supervisor {}: cannot launch worker of {} on port {}: {}; retry in {} ms", id_,
                  desired.topology_id, port, std::string(s.message()), delay);
  };
  // Nothing of the slot's previous topology may outlive it (or watch the
  // new one's scratch directory being made).
  if (absl::Status s = KillSlotProcesses(port); !s.ok()) return fail(s);
  absl::StatusOr<PreparedSlot> prepared = PrepareSlot(options_.local_dir, port, SlotUser(port));
  if (!prepared.ok()) return fail(prepared.status());
  bad_beat_logged_.erase(port);

  std::vector<std::string> argv = options_.worker_command;
  for (std::string arg : {std::string("worker"), std::string("--topology-id"), desired.topology_id,
                          std::string("--supervisor-id"), id_, std::string("--port"),
                          absl::StrCat(port), std::string("--worker-dir"), prepared->scratch}) {
    argv.push_back(std::move(arg));
  }
  argv.insert(argv.end(), options_.worker_config_args.begin(), options_.worker_config_args.end());
  if (!desired.worker_handoff.empty()) argv.push_back("--zk-identity-stdin");
  absl::StatusOr<pid_t> pid = SpawnWorker(argv, prepared->log.get(), desired.worker_handoff);
  if (!pid.ok()) return fail(pid.status());

  WorkerRecord w;
  w.pid = *pid;
  w.topology_id = desired.topology_id;
  w.executors = desired.executors;
  w.launched_at_ms = now;
  w.start_time = ProcessStartTime(*pid).value_or(0);
  slot.worker = std::move(w);
  beats_.erase(port);
  launches_.Add();

  WorkerLaunchRecord record{*pid, desired.topology_id, port, id_, now / 1000};
  if (absl::Status s = os::WriteFileAtomicallyAt(prepared->records.get(), kWorkerJsonFile,
                                                 EncodeWorkerJson(record));
      !s.ok()) {
    // The worker runs; only adoption after a restart of ours will miss it.
    spdlog::error("supervisor {}: {}", id_, std::string(s.message()));
  }
  spdlog::info("supervisor {}: launched worker of {} on port {} (pid {}) executors {}", id_,
               desired.topology_id, port, *pid, SpansText(desired.executors));
}

std::optional<os::UnixUser> WorkerControl::SlotUser(int port) const {
  if (!options_.worker_account) return std::nullopt;
  return SlotAccount(*options_.worker_account, options_.slot_uid_base, port);
}

absl::Status WorkerControl::KillSlotProcesses(int port) {
  // Only a uid of the slot's own: the shared account's processes may be
  // other slots' workers.
  if (!options_.worker_account || !options_.slot_uid_base) return absl::OkStatus();
  absl::Status s = os::KillEveryProcessOf(SlotUser(port)->uid);
  if (!s.ok()) spdlog::error("supervisor {}: slot {}: {}", id_, port, std::string(s.message()));
  return s;
}

void WorkerControl::StopAllWorkers() {
  const auto started = std::chrono::steady_clock::now();
  for (auto& [port, slot] : slots_) {
    if (!slot.worker) continue;
    spdlog::info("supervisor {}: stopping worker of {} on port {} (pid {}): {}", id_,
                 slot.worker->topology_id, port, slot.worker->pid,
                 StopReasonName(StopReason::kShutdown));
    SignalWorkerGroup(slot.worker->pid, SIGTERM);
  }
  auto gone = [](const WorkerRecord& w) {
    if (w.adopted) return ProcessStartTime(w.pid) != std::optional<uint64_t>(w.start_time);
    return ReapIfExited(w.pid).has_value();
  };
  auto all_gone = [&] {
    bool all = true;
    for (auto& [port, slot] : slots_) {
      if (!slot.worker) continue;
      if (gone(*slot.worker)) {
        SignalWorkerGroup(slot.worker->pid, SIGKILL);
        slot.worker.reset();
        RemoveLaunchRecord(options_.local_dir, port);
      } else {
        all = false;
      }
    }
    return all;
  };
  while (!all_gone() &&
         std::chrono::steady_clock::now() - started < options_.worker_shutdown_wait) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  for (auto& [port, slot] : slots_) {
    if (!slot.worker) continue;
    spdlog::warn("supervisor {}: worker on port {} (pid {}) ignored SIGTERM; SIGKILL", id_, port,
                 slot.worker->pid);
    SignalWorkerGroup(slot.worker->pid, SIGKILL);
  }
  // SIGKILL cannot be ignored; reap what it killed (bounded all the same).
  const auto kill_deadline = std::chrono::steady_clock::now() + milliseconds(2000);
  while (!all_gone() && std::chrono::steady_clock::now() < kill_deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
}

void WorkerControl::TickLoop() {
  if (stopping_) return;
  CheckAndPlan();
  control_->PostAfter(options_.check_interval, [this] { TickLoop(); });
}

}  // namespace tempest::supervisor
