#include "supervisor/supervisor.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"
#include "common/coord/cluster_zk_config.h"
#include "common/os/child_process.h"
#include "spdlog/spdlog.h"
#include "supervisor/worker_files.h"
#include "supervisor/worker_process.h"

namespace tempest::supervisor {
namespace {

using api::Sv;
using std::chrono::milliseconds;

// supervisor.slots.ports: a list of ports (a single integer is accepted too).
absl::StatusOr<std::vector<int>> PortList(const api::Value& v) {
  std::vector<api::Value> items;
  if (const api::ValueList* list = v.TryList()) {
    items.assign(list->begin(), list->end());
  } else {
    items.push_back(v);
  }
  std::vector<int> out;
  for (const api::Value& item : items) {
    absl::StatusOr<int64_t> port = item.CoerceInt();
    if (!port.ok() || *port < 1 || *port > 65535) {
      return absl::InvalidArgumentError(
          "supervisor.slots.ports must be a list of ports in 1..65535");
    }
    out.push_back(static_cast<int>(*port));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::StatusOr<milliseconds> Seconds(const api::Config& config, std::string_view key,
                                     int64_t default_secs, bool allow_zero = false) {
  const int64_t secs = config.GetInt(key, default_secs);
  if (secs < 0 || (secs == 0 && !allow_zero) || secs > 86400 * 365) {
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(key), " must be a positive number of seconds, not ", secs));
  }
  return milliseconds(secs * 1000);
}

std::string Spans(const std::vector<ExecutorSpan>& spans) {
  return absl::StrJoin(spans, " ", [](std::string* out, const ExecutorSpan& s) {
    absl::StrAppend(out, "[", s.first, "-", s.second, "]");
  });
}

}  // namespace

absl::StatusOr<SupervisorOptions> SupervisorOptions::FromConfig(const api::Config& config) {
  SupervisorOptions o;
  absl::StatusOr<coord::ClusterZkConfig> zk = coord::ClusterZkConfig::FromConfig(config);
  if (!zk.ok()) return zk.status();
  o.zk_connect = zk->connect;
  o.root = zk->root;
  o.zk = zk->client;

  o.local_dir = config.GetString(api::kStormLocalDir, "tempest-local");
  if (o.local_dir.empty()) return absl::InvalidArgumentError("storm.local.dir is empty");
  o.hostname = config.GetString(api::kStormLocalHostname, "");
  if (const api::Value* v = config.Find(api::kSupervisorSlotsPorts); v != nullptr && !v->is_nil()) {
    absl::StatusOr<std::vector<int>> ports = PortList(*v);
    if (!ports.ok()) return ports.status();
    o.slot_ports = *ports;
  }
  struct Key {
    std::string_view key;
    int64_t default_secs;
    milliseconds* out;
    bool allow_zero;
  };
  for (const Key& k : {
           Key{api::kSupervisorHeartbeatFrequencySecs, 5, &o.heartbeat_interval, false},
           Key{api::kSupervisorMonitorFrequencySecs, 3, &o.monitor_interval, false},
           Key{api::kSupervisorWorkerTimeoutSecs, 30, &o.worker_timeout, false},
           Key{api::kSupervisorWorkerStartTimeoutSecs, 120, &o.worker_start_timeout, false},
           Key{api::kSupervisorWorkerShutdownSleepSecs, 3, &o.worker_shutdown_wait, true},
           Key{api::kTempestSupervisorWorkerExitGraceSecs, 10, &o.worker_exit_grace, true},
       }) {
    absl::StatusOr<milliseconds> v = Seconds(config, k.key, k.default_secs, k.allow_zero);
    if (!v.ok()) return v.status();
    *k.out = *v;
  }
  return o;
}

Supervisor::Supervisor(SupervisorOptions options) : options_(std::move(options)) {
  times_.worker_timeout_ms = options_.worker_timeout.count();
  times_.worker_start_timeout_ms = options_.worker_start_timeout.count();
  times_.shutdown_wait_ms = options_.worker_shutdown_wait.count();
  times_.exit_grace_ms = options_.worker_exit_grace.count();
}

absl::StatusOr<std::unique_ptr<Supervisor>> Supervisor::Create(SupervisorOptions options) {
  if (options.slot_ports.empty()) {
    return absl::InvalidArgumentError("supervisor.slots.ports is empty: no slot to offer");
  }
  if (options.worker_command.empty()) {
    return absl::InvalidArgumentError("the worker command is empty");
  }
  if (options.hostname.empty()) {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
      return absl::InternalError("gethostname failed; set storm.local.hostname");
    }
    options.hostname = name;
  }
  // Worker directories are handed to workers, which may run elsewhere than
  // our working directory: make the local dir absolute.
  std::error_code ec;
  std::filesystem::path local = std::filesystem::absolute(options.local_dir, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("storm.local.dir '", options.local_dir, "': ", ec.message()));
  }
  options.local_dir = local.lexically_normal().string();
  if (options.local_dir.size() > 1 && options.local_dir.back() == '/') options.local_dir.pop_back();
  std::unique_ptr<Supervisor> s(new Supervisor(std::move(options)));
  if (absl::Status st = s->Start(); !st.ok()) return st;
  return s;
}

absl::Status Supervisor::Start() {
  started_at_ms_ = NowMs();
  if (absl::Status s = MakeDirs(options_.local_dir + "/workers"); !s.ok()) return s;
  absl::StatusOr<std::string> id = LoadOrCreateSupervisorId(options_.local_dir);
  if (!id.ok()) return id.status();
  id_ = *id;

  coord::ZkSession::Options zo;
  zo.connect_string = options_.zk_connect;
  zo.config = options_.zk;
  zo.clock = options_.clock;
  zo.operation_timeout = options_.op_timeout;
  absl::StatusOr<std::unique_ptr<coord::ZkSession>> session =
      coord::ZkSession::Create(std::move(zo));
  if (!session.ok()) return session.status();
  session_ = *std::move(session);
  if (absl::Status s = session_->WaitConnected(options_.zk.connection_timeout); !s.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot reach ZooKeeper at ", options_.zk_connect, ": ", s.message()));
  }
  // From here on a new session (after an expiry) re-registers and re-arms
  // the watches.
  std::weak_ptr<coord::SerialExecutor> weak = zk_;
  listener_ = session_->Subscribe([this, weak](const coord::ZkSessionEvent& event) {
    if (auto zk = weak.lock()) {
      zk->Post([this, event] {
        if (!stopping_) OnSessionEvent(event);
      });
    }
  });
  for (const std::string& path : {SupervisorsPath(), AssignmentsPath()}) {
    if (absl::Status s = session_->EnsurePath(path); !s.ok()) return s;
  }
  // The assignments decide which leftover workers to adopt, so they must be
  // known first; registration then reports the adopted ports as used.
  absl::StatusOr<DesiredSlots> desired =
      RunOn<DesiredSlots>(*zk_, [this] { return SyncAssignments(); });
  if (!desired.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot read assignments: ", desired.status().message()));
  }
  absl::StatusOr<bool> adopted =
      RunOn<bool>(*control_, [this, d = *desired]() -> absl::StatusOr<bool> {
        desired_ = d;
        AdoptOrKillLeftovers();
        adoption_done_ = true;
        PublishUsedPorts();
        return true;
      });
  if (!adopted.ok()) return adopted.status();
  absl::StatusOr<bool> registered = RunOn<bool>(*zk_, [this]() -> absl::StatusOr<bool> {
    if (absl::Status s = Register(); !s.ok()) return s;
    return true;
  });
  if (!registered.ok()) {
    return absl::UnavailableError(
        absl::StrCat("cannot register ", NodePath(), ": ", registered.status().message()));
  }
  spdlog::info("supervisor {}: registered on {} with slots {}", id_, options_.hostname,
               absl::StrJoin(options_.slot_ports, ","));

  control_->Post([this] { TickLoop(); });
  zk_->PostAfter(options_.heartbeat_interval, [this] { HeartbeatLoop(); });
  zk_->PostAfter(options_.monitor_interval, [this] { MonitorLoop(); });
  return absl::OkStatus();
}

Supervisor::~Supervisor() {
  stopping_ = true;
  // No more syncs or registrations; then the workers, on the thread that
  // owns them (bounded: the shutdown wait plus the SIGKILL reap).
  zk_->Stop();
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  control_->Post([this, done] {
    if (!leave_workers_running_) StopAllWorkers();
    done->set_value();
  });
  (void)finished.wait_for(options_.worker_shutdown_wait + milliseconds(10000));
  control_->Stop();
  if (session_ != nullptr) {
    if (listener_ != 0) session_->Unsubscribe(listener_);
    if (!leave_workers_running_ && session_->IsConnected()) {
      (void)session_->Delete(NodePath(), -1, coord::ZkCall{milliseconds(2000), 0});
    }
    session_->Close();
  }
}

template <typename T>
absl::StatusOr<T> Supervisor::RunOn(coord::SerialExecutor& executor,
                                    std::function<absl::StatusOr<T>()> fn) {
  auto promise = std::make_shared<std::promise<absl::StatusOr<T>>>();
  std::future<absl::StatusOr<T>> result = promise->get_future();
  executor.Post([promise, fn = std::move(fn)] { promise->set_value(fn()); });
  // Start-up may stop leftover workers, which takes up to the shutdown wait.
  if (result.wait_for(options_.op_timeout + options_.worker_shutdown_wait) !=
      std::future_status::ready) {
    return absl::DeadlineExceededError("the supervisor did not complete the request in time");
  }
  return result.get();
}

absl::StatusOr<std::vector<WorkerSnapshot>> Supervisor::Workers() {
  return RunOn<std::vector<WorkerSnapshot>>(
      *control_, [this]() -> absl::StatusOr<std::vector<WorkerSnapshot>> {
        std::vector<WorkerSnapshot> out;
        for (const auto& [port, slot] : slots_) {
          if (!slot.worker) continue;
          const WorkerRecord& w = *slot.worker;
          out.push_back(WorkerSnapshot{port, w.pid, w.topology_id, w.adopted,
                                       w.stop_sent_ms.has_value(), w.last_beat_ms.has_value()});
        }
        return out;
      });
}

absl::Status Supervisor::SyncNow() {
  absl::StatusOr<bool> synced = RunOn<bool>(*zk_, [this]() -> absl::StatusOr<bool> {
    if (absl::Status s = SyncAndPublish(); !s.ok()) return s;
    return true;
  });
  if (!synced.ok()) return synced.status();
  // The published result is queued before this, so the check sees it.
  return RunOn<bool>(*control_,
                     [this]() -> absl::StatusOr<bool> {
                       CheckWorkers();
                       ExecutePlan();
                       return true;
                     })
      .status();
}

int64_t Supervisor::NowMs() const { return options_.clock->WallMillis(); }

coord::ZkWatchFn Supervisor::PostingWatch(std::function<void(const coord::ZkWatchEvent&)> on_zk) {
  std::weak_ptr<coord::SerialExecutor> weak = zk_;
  return [this, weak, on_zk = std::move(on_zk)](const coord::ZkWatchEvent& event) {
    // The watch died with its session; OnSessionEvent clears every armed flag
    // and re-arms once the next session is up (re-arming here would only
    // duplicate those watches).
    if (event.type == coord::ZkWatchEventType::kSessionLost) return;
    if (auto zk = weak.lock()) {
      zk->Post([this, on_zk, event] {
        if (!stopping_) on_zk(event);
      });
    }
  };
}

void Supervisor::OnSessionEvent(const coord::ZkSessionEvent& event) {
  if (event.state == coord::ZkSessionState::kLost) {
    // Workers keep running (as in Storm); nimbus may reassign their slots
    // meanwhile, which the next sync shows.
    spdlog::warn("supervisor {}: ZooKeeper session lost; workers keep running", id_);
    return;
  }
  if (event.state != coord::ZkSessionState::kConnected) return;
  // Start() registers the first time (after adoption); a late event about
  // the session it connected with must not register before that.
  if (registered_session_ == 0) return;
  if (event.session_id != registered_session_) {
    // A new session: every watch and our ephemeral node went with the old one.
    children_watch_armed_ = false;
    data_watches_armed_.clear();
    node_watch_armed_ = false;
    spdlog::info("supervisor {}: new ZooKeeper session {:x}; registering again", id_,
                 event.session_id);
  }
  if (absl::Status s = Register(); !s.ok()) {
    spdlog::warn("supervisor {}: register: {}", id_, std::string(s.message()));
  }
  if (absl::Status s = SyncAndPublish(); !s.ok()) {
    spdlog::warn("supervisor {}: assignments: {}", id_, std::string(s.message()));
  }
}

absl::Status Supervisor::SyncAndPublish() {
  absl::StatusOr<DesiredSlots> desired = SyncAssignments();
  std::optional<DesiredSlots> result;
  if (desired.ok()) result = *std::move(desired);
  // On failure the control thread keeps the slots it knew (workers keep
  // running while ZooKeeper is away) but stops holding launches back.
  control_->Post([this, result = std::move(result)] {
    if (result) desired_ = *result;
    launch_hold_until_ms_ = 0;
    ExecutePlan();
  });
  return desired.status();
}

absl::StatusOr<DesiredSlots> Supervisor::SyncAssignments() {
  const std::string parent = AssignmentsPath();
  auto resync = [this](const coord::ZkWatchEvent&) {
    if (absl::Status s = SyncAndPublish(); !s.ok()) {
      spdlog::warn("supervisor {}: assignments: {}", id_, std::string(s.message()));
    }
  };
  absl::StatusOr<std::vector<std::string>> ids;
  if (children_watch_armed_) {
    ids = session_->Children(parent);
  } else {
    ids = session_->ChildrenAndWatch(parent,
                                     PostingWatch([this, resync](const coord::ZkWatchEvent& e) {
                                       children_watch_armed_ = false;
                                       resync(e);
                                     }));
    if (ids.ok()) children_watch_armed_ = true;
  }
  if (absl::IsNotFound(ids.status())) {
    // Nobody created the parent yet (or it was removed): nothing assigned.
    children_watch_armed_ = false;
    ids = std::vector<std::string>{};
  }
  if (!ids.ok()) return ids.status();

  std::map<std::string, v1::Assignment> assignments;
  for (const std::string& topology_id : *ids) {
    const std::string path = absl::StrCat(parent, "/", topology_id);
    absl::StatusOr<coord::ZkNode> node;
    if (data_watches_armed_.contains(topology_id)) {
      node = session_->Get(path);
    } else {
      node = session_->GetAndWatch(
          path, PostingWatch([this, topology_id, resync](const coord::ZkWatchEvent& e) {
            data_watches_armed_.erase(topology_id);
            resync(e);
          }));
      if (node.ok()) data_watches_armed_.insert(topology_id);
    }
    if (absl::IsNotFound(node.status())) continue;  // removed meanwhile
    if (!node.ok()) return node.status();
    v1::Assignment a;
    if (a.ParseFromString(node->data)) {
      assignments[topology_id] = a;
      last_good_[topology_id] = std::move(a);
      continue;
    }
    const std::string problem =
        absl::StrCat("assignment ", path, " does not parse as an Assignment; ",
                     last_good_.contains(topology_id) ? "keeping the previous one" : "ignoring it");
    if (reported_problems_.insert(problem).second) spdlog::error("supervisor {}: {}", id_, problem);
    if (auto it = last_good_.find(topology_id); it != last_good_.end()) {
      assignments[topology_id] = it->second;
    }
  }
  for (auto it = last_good_.begin(); it != last_good_.end();) {
    it = assignments.contains(it->first) ? std::next(it) : last_good_.erase(it);
  }
  std::vector<std::string> problems;
  DesiredSlots desired = ComputeDesiredSlots(assignments, id_, options_.slot_ports, &problems);
  for (const std::string& p : problems) {
    if (reported_problems_.insert(p).second) spdlog::warn("supervisor {}: {}", id_, p);
  }
  if (desired != last_logged_) {
    for (const auto& [port, slot] : desired) {
      auto old = last_logged_.find(port);
      if (old == last_logged_.end() || old->second != slot) {
        spdlog::info("supervisor {}: port {} assigned to {} executors {}", id_, port,
                     slot.topology_id, Spans(slot.executors));
      }
    }
    for (const auto& [port, slot] : last_logged_) {
      if (!desired.contains(port)) {
        spdlog::info("supervisor {}: port {} no longer assigned ({})", id_, port, slot.topology_id);
      }
    }
    last_logged_ = desired;
  }
  return desired;
}

absl::Status Supervisor::Register() {
  v1::SupervisorInfo info;
  info.set_supervisor_id(id_);
  info.set_hostname(options_.hostname);
  for (int port : options_.slot_ports) info.add_slot_ports(port);
  {
    std::lock_guard<std::mutex> lock(used_mu_);
    for (int port : used_ports_) info.add_used_ports(port);
  }
  const int64_t now = NowMs();
  info.set_time_secs(now / 1000);
  info.set_uptime_secs((now - started_at_ms_) / 1000);
  info.set_version(options_.version);
  const std::string data = info.SerializeAsString();
  const std::string path = NodePath();

  const int64_t session_id = session_->session_id();
  absl::StatusOr<coord::ZkStat> set = session_->Set(path, data, -1);
  if (!set.ok()) {
    if (!absl::IsNotFound(set.status())) return set.status();
    coord::ZkCreateOptions create;
    create.mode = coord::ZkCreateMode::kEphemeral;
    create.create_parents = true;
    absl::StatusOr<std::string> created = session_->Create(path, data, create);
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) return created.status();
  }
  registered_session_ = session_id;
  // Armed after our own write, which would fire it otherwise.
  return ArmNodeWatch();
}

absl::Status Supervisor::ArmNodeWatch() {
  if (node_watch_armed_) return absl::OkStatus();
  // A node left by an earlier session of ours (a restart within the session
  // timeout) is overwritten by Register and re-created as soon as it goes.
  // The watch also fires on our own heartbeat writes; those only re-arm it.
  absl::StatusOr<std::optional<coord::ZkStat>> exists = session_->ExistsAndWatch(
      NodePath(), PostingWatch([this](const coord::ZkWatchEvent& event) {
        node_watch_armed_ = false;
        absl::Status s =
            event.type == coord::ZkWatchEventType::kDeleted ? Register() : ArmNodeWatch();
        if (!s.ok()) spdlog::warn("supervisor {}: register: {}", id_, std::string(s.message()));
      }));
  if (!exists.ok()) return exists.status();
  node_watch_armed_ = true;
  if (!exists->has_value()) return Register();  // deleted between our write and the watch
  return absl::OkStatus();
}

void Supervisor::AdoptOrKillLeftovers() {
  const std::string workers_dir = options_.local_dir + "/workers";
  std::error_code ec;
  std::vector<std::pair<pid_t, uint64_t>> to_kill;
  for (const auto& entry : std::filesystem::directory_iterator(workers_dir, ec)) {
    int dir_port = 0;
    if (!entry.is_directory(ec) || !absl::SimpleAtoi(entry.path().filename().string(), &dir_port)) {
      continue;
    }
    const std::string dir = entry.path().string();
    absl::StatusOr<std::string> text = ReadSmallFile(WorkerJsonPath(dir), 64 << 10);
    if (absl::IsNotFound(text.status())) continue;
    if (!text.ok()) {
      spdlog::warn("supervisor {}: {}", id_, std::string(text.status().message()));
      continue;
    }
    absl::StatusOr<WorkerLaunchRecord> record = ParseWorkerJson(*text);
    if (!record.ok()) {
      spdlog::warn("supervisor {}: {}: {}", id_, WorkerJsonPath(dir),
                   std::string(record.status().message()));
      continue;
    }
    const std::optional<uint64_t> start_time = ProcessStartTime(record->pid);
    if (!start_time || !LooksLikeWorker(record->pid, record->port)) {
      spdlog::info("supervisor {}: worker of {} on port {} (pid {}) is gone", id_,
                   record->topology_id, record->port, record->pid);
      std::filesystem::remove(WorkerJsonPath(dir), ec);
      continue;
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
      continue;
    }
    spdlog::warn("supervisor {}: killing leftover worker of {} on port {} (pid {}): {}", id_,
                 record->topology_id, record->port, record->pid,
                 StopReasonName(StopReason::kAdoptionRefused));
    SignalWorkerGroup(record->pid, SIGTERM);
    to_kill.emplace_back(record->pid, *start_time);
    std::filesystem::remove(WorkerJsonPath(dir), ec);
  }
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
}

void Supervisor::ReadHeartbeat(int port, WorkerRecord& worker) {
  const std::string path = HeartbeatPath(WorkerDir(options_.local_dir, port));
  absl::StatusOr<std::string> bytes = ReadSmallFile(path, 1 << 20);
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
}

void Supervisor::CheckWorkers() {
  bool exited = false;
  const int64_t now = NowMs();
  for (auto& [port, slot] : slots_) {
    if (!slot.worker) continue;
    WorkerRecord& w = *slot.worker;
    std::string how;
    if (w.adopted) {
      if (ProcessStartTime(w.pid) == std::optional<uint64_t>(w.start_time)) {
        ReadHeartbeat(port, w);
        continue;
      }
      how = "exited (adopted: status unknown)";
    } else {
      std::optional<int> status = ReapIfExited(w.pid);
      if (!status) {
        ReadHeartbeat(port, w);
        continue;
      }
      how = os::DescribeWaitStatus(*status);
    }
    // Members of its group that outlived it (its own children) go too.
    SignalWorkerGroup(w.pid, SIGKILL);
    exited = true;
    const std::string topology = w.topology_id;
    const pid_t pid = w.pid;
    const bool stopped_by_us = w.stop_sent_ms.has_value();
    const StopReason reason = w.stop_reason;
    auto d = desired_.find(port);
    const bool failure = RecordWorkerExit(slot, d == desired_.end() ? nullptr : &d->second, now,
                                          options_.max_relaunch_delay.count());
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
    std::error_code ec;
    std::filesystem::remove(WorkerJsonPath(WorkerDir(options_.local_dir, port)), ec);
  }
  if (exited) {
    PublishUsedPorts();
    // A worker that exits by itself usually saw its assignment change: read
    // the assignments again before relaunching (briefly: a ZooKeeper outage
    // must not delay a restart for long).
    launch_hold_until_ms_ = now + 1000;
    zk_->Post([this] {
      if (stopping_) return;
      if (absl::Status s = SyncAndPublish(); !s.ok()) {
        spdlog::warn("supervisor {}: assignments: {}", id_, std::string(s.message()));
      }
    });
  }
}

void Supervisor::PublishUsedPorts() {
  std::vector<int> used;
  for (const auto& [port, slot] : slots_) {
    if (slot.worker) used.push_back(port);
  }
  std::lock_guard<std::mutex> lock(used_mu_);
  used_ports_ = std::move(used);
}

void Supervisor::ExecutePlan() {
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

void Supervisor::Launch(int port, const DesiredSlot& desired) {
  SlotState& slot = slots_[port];
  const int64_t now = NowMs();
  const std::string dir = WorkerDir(options_.local_dir, port);
  auto fail = [&](const absl::Status& s) {
    ++slot.consecutive_failures;
    const int64_t delay = std::max<int64_t>(
        1000, RelaunchDelayMs(slot.consecutive_failures, options_.max_relaunch_delay.count()));
    slot.relaunch_not_before_ms = now + delay;
    spdlog::error("supervisor {}: cannot launch worker of {} on port {}: {}; retry in {} ms", id_,
                  desired.topology_id, port, std::string(s.message()), delay);
  };
  if (absl::Status s = MakeDirs(dir); !s.ok()) return fail(s);
  // The last beat of an earlier worker must not vouch for this one.
  std::error_code ec;
  std::filesystem::remove(HeartbeatPath(dir), ec);
  bad_beat_logged_.erase(port);

  std::vector<std::string> argv = options_.worker_command;
  for (std::string arg : {std::string("worker"), std::string("--topology-id"), desired.topology_id,
                          std::string("--supervisor-id"), id_, std::string("--port"),
                          absl::StrCat(port), std::string("--worker-dir"), dir}) {
    argv.push_back(std::move(arg));
  }
  argv.insert(argv.end(), options_.worker_config_args.begin(), options_.worker_config_args.end());
  absl::StatusOr<pid_t> pid = SpawnWorker(argv, WorkerLogPath(dir));
  if (!pid.ok()) return fail(pid.status());

  WorkerRecord w;
  w.pid = *pid;
  w.topology_id = desired.topology_id;
  w.executors = desired.executors;
  w.launched_at_ms = now;
  w.start_time = ProcessStartTime(*pid).value_or(0);
  slot.worker = std::move(w);

  WorkerLaunchRecord record{*pid, desired.topology_id, port, id_, now / 1000};
  if (absl::Status s = WriteFileAtomically(WorkerJsonPath(dir), EncodeWorkerJson(record));
      !s.ok()) {
    // The worker runs; only adoption after a restart of ours will miss it.
    spdlog::error("supervisor {}: {}", id_, std::string(s.message()));
  }
  spdlog::info("supervisor {}: launched worker of {} on port {} (pid {}) executors {}", id_,
               desired.topology_id, port, *pid, Spans(desired.executors));
}

void Supervisor::StopAllWorkers() {
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
        std::error_code ec;
        std::filesystem::remove(WorkerJsonPath(WorkerDir(options_.local_dir, port)), ec);
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

void Supervisor::TickLoop() {
  if (stopping_) return;
  CheckWorkers();
  ExecutePlan();
  control_->PostAfter(options_.check_interval, [this] { TickLoop(); });
}

void Supervisor::HeartbeatLoop() {
  if (stopping_) return;
  if (absl::Status s = Register(); !s.ok()) {
    spdlog::warn("supervisor {}: heartbeat: {}", id_, std::string(s.message()));
  }
  zk_->PostAfter(options_.heartbeat_interval, [this] { HeartbeatLoop(); });
}

void Supervisor::MonitorLoop() {
  if (stopping_) return;
  if (absl::Status s = SyncAndPublish(); !s.ok()) {
    spdlog::warn("supervisor {}: assignments: {}", id_, std::string(s.message()));
  }
  zk_->PostAfter(options_.monitor_interval, [this] { MonitorLoop(); });
}

}  // namespace tempest::supervisor
