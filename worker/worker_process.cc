#include "worker/worker_process.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/coord/chunked_blob.h"
#include "common/coord/cluster_paths.h"
#include "common/core/config/secret_config.h"
#include "common/core/flux/stored_topology.h"
#include "common/core/kafka_spout_metric_names.h"
#include "common/core/status_macros.h"
#include "common/core/topology/topology_resources.h"
#include "common/os/dir_files.h"
#include "common/os/files.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"
#include "worker/executor_stats.h"

namespace tempest::worker {

// The part of an assignment one worker's plan is built from, in a canonical
// text form: comparing two of them tells whether anything changed for the
// worker, and comparing the local keys whether it must restart (its own
// executors, its address or its secret changed) or can take the new routes
// to the other workers in place; else the addresses and tasks tell whether
// tasks were only regrouped or only left (in place: RegroupExecutors).
struct SlotPlan {
  std::vector<std::pair<int32_t, int32_t>> local;
  std::map<std::pair<std::string, int>, RemoteWorker> remote;  // (host, port)
  std::string bind_host;
  std::string secret;
  std::string local_key;
  std::string address_key;  // bind host and secret: a change restarts the worker
  std::set<int32_t> tasks;  // the tasks run here
  std::string key;
  int64_t version = 0;  // Assignment.version
};

namespace {

// The deadline of Sync's reads (see there).
constexpr std::chrono::milliseconds kReadTimeout{2000};

// Storm keeps each component's newest 10 errors in ZooKeeper.
constexpr size_t kErrorsKeptPerComponent = 10;
constexpr size_t kMaxErrorMessageBytes = 4096;

using api::Sv;

int64_t WallSecs() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

absl::StatusOr<SlotPlan> PlanFromAssignment(const v1::Assignment& assignment,
                                            const std::string& supervisor_id, int port) {
  SlotPlan plan;
  auto host_of = [&](const std::string& node) -> absl::StatusOr<std::string> {
    auto it = assignment.node_host().find(node);
    if (it == assignment.node_host().end() || it->second.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the assignment has no host for supervisor '", node, "'"));
    }
    return it->second;
  };
  for (const v1::ExecutorAssignment& e : assignment.executors()) {
    if (e.start_task() < 1 || e.end_task() < e.start_task() || e.port() <= 0 ||
        e.port() > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("the assignment has a malformed executor [",
                                                     e.start_task(), "-", e.end_task(), "] on ",
                                                     e.node(), ":", e.port()));
    }
    if (e.node() == supervisor_id && e.port() == port) {
      plan.local.emplace_back(e.start_task(), e.end_task());
      continue;
    }
    ASSIGN_OR_RETURN(const std::string host, host_of(e.node()));
    RemoteWorker& remote = plan.remote[{host, e.port()}];
    remote.host = host;
    remote.port = e.port();
    remote.executors.emplace_back(e.start_task(), e.end_task());
  }
  if (!plan.local.empty()) {
    ASSIGN_OR_RETURN(plan.bind_host, host_of(supervisor_id));
  }
  plan.secret = assignment.transport_secret();
  plan.version = assignment.version();
  plan.address_key = absl::StrCat("bind=", plan.bind_host, ";secret=", plan.secret);
  plan.local_key = absl::StrCat(plan.address_key, ";local=");
  for (const auto& [s, e] : plan.local) {
    absl::StrAppend(&plan.local_key, s, "-", e, ",");
    for (int32_t t = s; t <= e; ++t) plan.tasks.insert(t);
  }
  plan.key = plan.local_key;
  for (const auto& [where, remote] : plan.remote) {
    absl::StrAppend(&plan.key, ";", where.first, ":", where.second, "=");
    for (const auto& [s, e] : remote.executors) absl::StrAppend(&plan.key, s, "-", e, ",");
  }
  return plan;
}

// The worker's plan: the topology `def` with the slot's share of the
// assignment.
WorkerPlan MakeWorkerPlan(const WorkerProcessOptions& options, core::TopologyDef def,
                          const SlotPlan& slot) {
  WorkerPlan plan;
  plan.topology_id = options.topology_id;
  plan.def = std::move(def);
  plan.local_executors = slot.local;
  for (const auto& [where, remote] : slot.remote) plan.remote_workers.push_back(remote);
  plan.bind_host = slot.bind_host;
  plan.port = options.port;
  plan.secret = slot.secret;
  return plan;
}

// Every series of the worker's registry and, if that is another one, of the
// process-wide registry.
std::vector<core::MetricSample> SnapshotMetrics(core::MetricsRegistry& worker_metrics) {
  std::vector<core::MetricSample> samples = worker_metrics.Snapshot();
  if (&worker_metrics != &core::MetricsRegistry::Global()) {
    std::vector<core::MetricSample> global = core::MetricsRegistry::Global().Snapshot();
    samples.insert(samples.end(), std::make_move_iterator(global.begin()),
                   std::make_move_iterator(global.end()));
  }
  return samples;
}

}  // namespace

std::string_view WorkerExitName(WorkerExit exit) {
  switch (exit) {
    case WorkerExit::kStopRequested:
      return "stop requested";
    case WorkerExit::kAssignmentChanged:
      return "assignment changed";
    case WorkerExit::kTopologyRemoved:
      return "topology removed";
  }
  return "unknown";
}

std::vector<std::string> WorkerProcessTitle(const std::string& topology_id,
                                            const std::string& supervisor_id, int port) {
  return {"tempest",          "worker",      absl::StrCat(topology_id, ":", port),
          "--supervisor-id", supervisor_id, "--port",
          absl::StrCat(port)};
}

// ps shows two things. The name (comm: `ps -e`, top) is at most 15 bytes and
// is what exec gave, "exe" for a worker started through /proc/self/exe;
// prctl(PR_SET_NAME) sets it for this thread and the threads started after
// it. The command line (`ps -ef`, `ps aux`) is read by the kernel straight
// from the memory of main's argv strings, so the portable way to change it
// is to overwrite that memory in place: only the area the strings occupy
// (contiguous, as the kernel laid them out) is used, never the environment
// after it, and the rest of the area is zeroed so the last byte stays the
// terminating NUL (the kernel then reports the area as is).
void SetProcessTitle(int argc, char** argv, const std::vector<std::string>& words) {
  ::prctl(PR_SET_NAME, "tempest worker", 0, 0, 0);
  if (argc <= 0 || argv == nullptr || argv[0] == nullptr) return;
  char* const begin = argv[0];
  char* end = begin + std::strlen(begin) + 1;
  for (int i = 1; i < argc && argv[i] == end; ++i) end += std::strlen(argv[i]) + 1;
  const size_t capacity = static_cast<size_t>(end - begin);
  std::string title;
  for (const std::string& w : words) {
    title += w;
    title += '\0';
  }
  if (title.size() > capacity) title.resize(capacity);
  std::memset(begin, 0, capacity);
  std::memcpy(begin, title.data(), title.size());
  begin[capacity - 1] = '\0';
  // argv[i] now point into the new words or at NULs; nobody reads them.
}

namespace {

// As Storm's topology configuration lies over the cluster's storm.yaml: the
// ZooKeeper session timeout a component's own sessions use (the KafkaSpout's
// offset store) and the host this worker runs on, unless the topology sets
// them itself.
void AddClusterDefaults(const WorkerProcessOptions& options, api::Config& config) {
  if (!config.Has(api::kStormZookeeperSessionTimeout)) {
    config.Set(api::kStormZookeeperSessionTimeout,
               static_cast<int64_t>(options.zk.client.session_timeout.count()));
  }
  if (!options.local_hostname.empty() && !config.Has(api::kStormLocalHostname)) {
    config.Set(api::kStormLocalHostname, options.local_hostname);
  }
}

}  // namespace

absl::StatusOr<WorkerProcessOptions> WorkerProcessOptions::FromConfig(const api::Config& config) {
  WorkerProcessOptions o;
  ASSIGN_OR_RETURN(o.zk, coord::ClusterZkConfig::FromConfig(config));
  o.local_hostname = config.GetString(api::kStormLocalHostname, "");
  const int64_t beat = config.GetInt("worker.heartbeat.frequency.secs", 1);
  if (beat < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker.heartbeat.frequency.secs must be at least 1, not ", beat));
  }
  o.heartbeat_interval = std::chrono::seconds(beat);
  const int64_t shutdown = config.GetInt("supervisor.worker.shutdown.sleep.secs", 3);
  o.shutdown_wait = std::chrono::milliseconds(std::max<int64_t>(0, shutdown - 1) * 1000);
  return o;
}

absl::StatusOr<std::string> WorkerProcess::FetchResources(const v1::StormBase& base) {
  const std::string blob_dir = coord::ClusterPaths(options_.zk.root).Blob(base.resources_key());
  ASSIGN_OR_RETURN(
      const std::string blob,
      coord::ReadChunkedBlob(*session_, blob_dir, base.resources_chunks(), base.resources_bytes()));
  v1::TopologyResources resources;
  if (!resources.ParseFromString(blob)) {
    return absl::DataLossError(absl::StrCat("the resources of ", options_.topology_id,
                                            " do not parse"));
  }
  const std::string base_dir =
      options_.worker_dir.empty() ? std::filesystem::temp_directory_path().string()
                                  : options_.worker_dir;
  const std::string dir = (std::filesystem::path(base_dir) / "resources").string();
  // A previous topology's files, if any: removed without following links.
  if (absl::StatusOr<os::UniqueFd> base = os::OpenDirectory(base_dir); base.ok()) {
    RETURN_IF_ERROR(os::RemoveTreeAt(base->get(), "resources"));
  }
  RETURN_IF_ERROR(core::MaterializeResources(resources, dir));
  spdlog::info("worker {}: {} resource files in {}", options_.topology_id, resources.files_size(),
               dir);
  return dir;
}

std::string WorkerProcess::StormPath() const {
  return coord::ClusterPaths(options_.zk.root).Storm(options_.topology_id);
}
std::string WorkerProcess::AssignmentPath() const {
  return coord::ClusterPaths(options_.zk.root).Assignment(options_.topology_id);
}
std::string WorkerProcess::BeatPath() const {
  return coord::ClusterPaths(options_.zk.root)
      .WorkerBeat(options_.topology_id, options_.supervisor_id, options_.port);
}

absl::StatusOr<std::unique_ptr<WorkerProcess>> WorkerProcess::Start(WorkerProcessOptions options) {
  if (options.topology_id.empty() || options.supervisor_id.empty() || options.port <= 0 ||
      options.port > 65535) {
    return absl::InvalidArgumentError("a worker needs a topology id, a supervisor id and a port");
  }
  if (options.registry == nullptr) return absl::InvalidArgumentError("no component registry");
  std::unique_ptr<WorkerProcess> process(new WorkerProcess(std::move(options)));
  RETURN_IF_ERROR(process->Launch());
  return process;
}

absl::Status WorkerProcess::Launch() {
  if (!options_.worker_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options_.worker_dir, ec);
    CarryPreviousTotals();
  }
  RETURN_IF_ERROR(OpenSession());
  ASSIGN_OR_RETURN(ClusterState state, ReadClusterState());
  ASSIGN_OR_RETURN(const SlotPlan slot,
                   PlanFromAssignment(state.assignment, options_.supervisor_id, options_.port));
  if (slot.local.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("slot ", options_.supervisor_id, ":",
                                                      options_.port, " runs nothing of ",
                                                      options_.topology_id));
  }
  ASSIGN_OR_RETURN(core::TopologyDef def, LoadTopology(state.base));
  spout_ids_.clear();
  for (const core::ComponentDef& spout : def.spouts) spout_ids_.insert(spout.id.value());
  plan_key_ = slot.key;
  local_key_ = slot.local_key;
  address_key_ = slot.address_key;
  tasks_ = slot.tasks;
  assignment_version_ = slot.version;
  RETURN_IF_ERROR(StartWorker(MakeWorkerPlan(options_, std::move(def), slot),
                              state.base.status() == v1::ACTIVE));
  Heartbeat();
  return absl::OkStatus();
}

coord::ZkWatchFn WorkerProcess::RaiseChanged() const {
  auto flag = changed_;
  return [flag](const coord::ZkWatchEvent&) { flag->store(true); };
}

absl::Status WorkerProcess::OpenSession() {
  coord::ZkSession::Options zo;
  zo.connect_string = options_.zk.connect;
  zo.config = options_.zk.client;
  ASSIGN_OR_RETURN(session_, coord::ZkSession::Create(zo));
  // A loss stops the spouts at once, here on the session's dispatcher: Run
  // may be waiting out a read's deadline, and a fence that waits for it
  // could come after the ensemble has handed this worker's partitions to
  // another (Deactivate only sets a flag and wakes the executors). Run does
  // the bookkeeping (see Fence); a new connection asks for the re-read that
  // can lift a fence. The session is closed before this object goes, so the
  // listener never outlives it.
  auto losses = losses_;
  auto reconnected = changed_;
  session_->Subscribe([this, losses, reconnected](const coord::ZkSessionEvent& e) {
    if (e.state == coord::ZkSessionState::kLost) {
      losses->fetch_add(1);
      if (Worker* w = fence_target_.load()) w->Deactivate();
      if (!fence_announced_.exchange(true)) {
        spdlog::warn(
            "worker fenced: ZooKeeper session lost; spouts stopped until the assignment is read "
            "again (topology {}, port {})",
            options_.topology_id, options_.port);
      }
    }
    if (e.state == coord::ZkSessionState::kConnected) reconnected->store(true);
  });
  return absl::OkStatus();
}

absl::StatusOr<WorkerProcess::ClusterState> WorkerProcess::ReadClusterState() {
  // The watches only raise a flag: Run re-reads on its own thread.
  absl::StatusOr<coord::ZkNode> storm = session_->GetAndWatch(StormPath(), RaiseChanged());
  if (!storm.ok()) {
    return absl::Status(storm.status().code(),
                        absl::StrCat("reading topology ", options_.topology_id, ": ",
                                     storm.status().message()));
  }
  absl::StatusOr<coord::ZkNode> assigned = session_->GetAndWatch(AssignmentPath(), RaiseChanged());
  if (!assigned.ok()) {
    return absl::Status(assigned.status().code(),
                        absl::StrCat("reading the assignment of ", options_.topology_id, ": ",
                                     assigned.status().message()));
  }
  ClusterState state;
  if (!state.base.ParseFromString(storm->data)) {
    return absl::DataLossError(absl::StrCat(StormPath(), " does not hold a StormBase"));
  }
  if (!state.assignment.ParseFromString(assigned->data)) {
    return absl::DataLossError(absl::StrCat(AssignmentPath(), " does not hold an Assignment"));
  }
  return state;
}

absl::StatusOr<core::TopologyDef> WorkerProcess::LoadTopology(const v1::StormBase& base) {
  ASSIGN_OR_RETURN(core::TopologyDef def, core::LoadStoredTopology(base));
  // No component sees a credential: the topology's own identity (and
  // anything named *.password, *.secret, ...) leaves its config here, and
  // components that open ZooKeeper sessions of their own (the KafkaSpout)
  // take this worker's identity from coord::ProcessTopologyZkAuth.
  def.config = core::WithoutSecrets(def.config);
  coord::SetProcessTopologyZkAuth(options_.zk.client.auth);
  AddClusterDefaults(options_, def.config);
  def.config.Set(api::kTempestClusterZookeeperConnect, options_.zk.connect);
  if (!base.resources_key().empty()) {
    ASSIGN_OR_RETURN(const std::string dir, FetchResources(base));
    def.config.Set(api::kTempestResourcesDir, dir);
  }
  return def;
}

absl::Status WorkerProcess::StartWorker(WorkerPlan plan, bool active) {
  const size_t executors = plan.local_executors.size();
  WorkerOptions wo;
  wo.registry = options_.registry;
  ASSIGN_OR_RETURN(worker_, Worker::Create(std::move(plan), std::move(wo)));
  fence_target_.store(worker_.get());
  const core::MetricLabels labels{{"topology", options_.topology_id}};
  fenced_gauge_ = &worker_->metrics().GetGauge("tempest_worker_fenced", labels);
  fences_total_ = &worker_->metrics().GetCounter("tempest_worker_fences_total", labels);
  applied_in_place_ =
      &worker_->metrics().GetCounter("tempest_worker_assignments_applied_in_place_total", labels);
  regrouped_in_place_ =
      &worker_->metrics().GetCounter("tempest_worker_executors_regrouped_in_place_total", labels);
  left_in_place_ =
      &worker_->metrics().GetCounter("tempest_worker_executors_left_in_place_total", labels);
  active_ = active;
  spouts_running_ = active_;
  RETURN_IF_ERROR(worker_->Start(active_));
  spdlog::info("worker {} {}:{} started with {} executors, {}", options_.topology_id,
               options_.supervisor_id, options_.port, executors, active_ ? "active" : "inactive");
  return absl::OkStatus();
}

std::optional<WorkerExit> WorkerProcess::Sync() {
  // Bounded like the heartbeat's writes: a read that waits for a session
  // holds up Run, and with it fencing.
  coord::ZkCall call;
  call.timeout = kReadTimeout;
  // Only reads made on a connected session with no loss since the fence
  // began show that the slot is still ours (Run checks losses before Sync).
  const bool connected = session_->IsConnected();
  const PlanCheck plan = CheckAssignment(call);
  if (plan == PlanCheck::kRemoved) return WorkerExit::kTopologyRemoved;
  if (plan == PlanCheck::kChanged) return WorkerExit::kAssignmentChanged;
  absl::StatusOr<coord::ZkNode> storm = session_->GetAndWatch(StormPath(), RaiseChanged(), call);
  if (absl::IsNotFound(storm.status())) return WorkerExit::kTopologyRemoved;
  if (!storm.ok()) {
    spdlog::warn("cannot read {}: {}", StormPath(), storm.status().ToString());
    changed_->store(true);
    return std::nullopt;
  }
  v1::StormBase base;
  if (!base.ParseFromString(storm->data)) {
    spdlog::error("{} does not hold a StormBase; keeping the current state", StormPath());
    return std::nullopt;
  }
  FollowTopologyStatus(base, /*unfence=*/fenced_ && connected && plan == PlanCheck::kConfirmed &&
                                 losses_->load() == losses_seen_);
  return std::nullopt;
}

WorkerProcess::PlanCheck WorkerProcess::CheckAssignment(const coord::ZkCall& call) {
  absl::StatusOr<coord::ZkNode> assigned =
      session_->GetAndWatch(AssignmentPath(), RaiseChanged(), call);
  if (absl::IsNotFound(assigned.status())) return PlanCheck::kRemoved;
  if (!assigned.ok()) {
    spdlog::warn("cannot read {}: {}", AssignmentPath(), assigned.status().ToString());
    changed_->store(true);  // try again on the next pass
    return PlanCheck::kUnconfirmed;
  }
  v1::Assignment assignment;
  if (!assignment.ParseFromString(assigned->data)) {
    spdlog::error("{} does not hold an Assignment; keeping the current plan", AssignmentPath());
    return PlanCheck::kUnconfirmed;
  }
  absl::StatusOr<SlotPlan> slot =
      PlanFromAssignment(assignment, options_.supervisor_id, options_.port);
  if (!slot.ok()) {
    spdlog::error("ignoring an unusable assignment: {}", slot.status().ToString());
    return PlanCheck::kUnconfirmed;
  }
  if (slot->key == plan_key_) return PlanCheck::kConfirmed;
  return ApplyInPlace(*slot) ? PlanCheck::kConfirmed : PlanCheck::kChanged;
}

bool WorkerProcess::ApplyInPlace(const SlotPlan& slot) {
  if (slot.local_key != local_key_) {
    // The same tasks regrouped (ADR 0034), or some leaving and none
    // arriving (ADR 0035); the worker refuses the rest and this one restarts.
    return slot.address_key == address_key_ &&
           std::includes(tasks_.begin(), tasks_.end(), slot.tasks.begin(), slot.tasks.end()) &&
           RegroupInPlace(slot);
  }
  std::vector<RemoteWorker> remote;
  for (const auto& [where, worker] : slot.remote) remote.push_back(worker);
  const auto began = std::chrono::steady_clock::now();
  if (absl::Status s = worker_->UpdateRemoteWorkers(remote); !s.ok()) {
    spdlog::warn("worker {}:{} cannot take assignment version {} in place ({}); restarting",
                 options_.supervisor_id, options_.port, slot.version, s.ToString());
    return false;
  }
  spdlog::info("worker {}:{} applied assignment version {} in place in {} us: its executors stay",
               options_.supervisor_id, options_.port, slot.version,
               std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now() - began)
                   .count());
  plan_key_ = slot.key;
  assignment_version_ = slot.version;
  applied_in_place_->Add();
  return true;
}

bool WorkerProcess::RegroupInPlace(const SlotPlan& slot) {
  std::vector<RemoteWorker> remote;
  for (const auto& [where, worker] : slot.remote) remote.push_back(worker);
  const size_t executors_before = worker_->Executors().size();
  const auto began = std::chrono::steady_clock::now();
  if (absl::Status s = worker_->RegroupExecutors(slot.local, remote); !s.ok()) {
    spdlog::warn("worker {}:{} cannot regroup its executors in place for assignment version {} "
                 "({}); restarting", options_.supervisor_id, options_.port, slot.version,
                 s.ToString());
    return false;
  }
  const auto ms = (std::chrono::steady_clock::now() - began) / std::chrono::milliseconds(1);
  const bool leave = slot.tasks != tasks_;  // counted by tasks: the rest may be regrouped too
  const std::string what = leave ? absl::StrCat("let ", tasks_.size() - slot.tasks.size(),
                                                " task(s) leave (", executors_before, " -> ",
                                                slot.local.size(), " executors)")
                                 : "regrouped executors";
  spdlog::info("worker {}:{} {} in place for assignment version {} in {} ms: {} executor(s), {}",
               options_.supervisor_id, options_.port, what, slot.version, ms, slot.local.size(),
               leave ? "the tasks that left run elsewhere" : "the same tasks and bolt objects");
  (leave ? left_in_place_ : regrouped_in_place_)->Add();
  plan_key_ = slot.key;
  local_key_ = slot.local_key;
  tasks_ = slot.tasks;
  assignment_version_ = slot.version;
  return true;
}

void WorkerProcess::FollowTopologyStatus(const v1::StormBase& base, bool unfence) {
  const bool active = base.status() == v1::ACTIVE;
  if (unfence) {
    fenced_ = false;
    fence_announced_.store(false);
    fenced_gauge_->Set(0);
    active_ = active;
    ApplySpoutState();
    const std::string spouts =
        active ? "resumed"
               : "stay stopped: the topology is " + v1::TopologyStatus_Name(base.status());
    spdlog::info("worker unfenced: the assignment is unchanged; spouts {} (topology {}, port {})",
                 spouts, options_.topology_id, options_.port);
  } else if (active != active_) {
    active_ = active;
    ApplySpoutState();
    const char* spouts = active ? "activated" : "deactivated";
    if (fenced_) spouts = "stay stopped while fenced";
    spdlog::info("topology {} is {}: spouts {}", options_.topology_id,
                 v1::TopologyStatus_Name(base.status()), spouts);
  }
}

void WorkerProcess::Fence() {
  if (fenced_) return;
  // The listener has stopped the spouts and said so already.
  fenced_ = true;
  fenced_gauge_->Set(1);
  fences_total_->Add();
  ApplySpoutState();
}

void WorkerProcess::ApplySpoutState() {
  // A loss Run has not handled yet fences too: the listener has stopped the
  // spouts, and nothing here may start them again before Run has seen it.
  const bool run = active_ && !fenced_ && losses_->load() == losses_seen_;
  if (run == spouts_running_) return;
  spouts_running_ = run;
  if (run) {
    worker_->Activate();
  } else {
    worker_->Deactivate();
  }
}

void WorkerProcess::SetTotals(const LocalClusterStats& stats) {
  beat_.set_emitted(carried_.emitted + stats.emitted);
  beat_.set_transferred(carried_.transferred + stats.transferred);
  beat_.set_acked(carried_.acked + stats.acked);
  beat_.set_failed(carried_.failed + stats.failed);
  beat_.set_restarts(restarts_);
}

void WorkerProcess::CarryPreviousTotals() {
  // The supervisor keeps the previous worker's last local beat under this
  // name (supervisor/worker_files.h, PreviousHeartbeatPath).
  absl::StatusOr<os::UniqueFd> dir = os::OpenDirectory(options_.worker_dir);
  if (!dir.ok()) return;
  // Not through a link, and only a regular file: topology code shares the
  // directory.
  absl::StatusOr<std::string> bytes =
      os::ReadSmallFileAt(dir->get(), "heartbeat.previous", 1 << 20);
  if (!bytes.ok()) return;
  v1::WorkerHeartbeat previous;
  // Only the same topology on the same slot continues its totals; anything
  // else (another topology, a file that does not parse) starts from zero.
  if (!previous.ParseFromString(*bytes) ||
      previous.topology_id() != options_.topology_id ||
      previous.supervisor_id() != options_.supervisor_id || previous.port() != options_.port) {
    return;
  }
  carried_.emitted = std::max<int64_t>(0, previous.emitted());
  carried_.transferred = std::max<int64_t>(0, previous.transferred());
  carried_.acked = std::max<int64_t>(0, previous.acked());
  carried_.failed = std::max<int64_t>(0, previous.failed());
  carried_executor_stats_ = previous.executor_stats();
  restarts_ = std::max<int64_t>(0, previous.restarts()) + (previous.stopped_cleanly() ? 0 : 1);
  spdlog::info("worker {} {}:{}: continuing the slot's totals (acked {}), restarts {}",
               options_.topology_id, options_.supervisor_id, options_.port, carried_.acked,
               restarts_);
}

void WorkerProcess::Heartbeat() {
  const LocalClusterStats stats = worker_->Stats();
  beat_.set_topology_id(options_.topology_id);
  beat_.set_supervisor_id(options_.supervisor_id);
  beat_.set_port(options_.port);
  beat_.set_time_secs(WallSecs());
  beat_.set_uptime_secs(std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now() - started_)
                            .count());
  beat_.set_pid(static_cast<int32_t>(::getpid()));
  beat_.set_assignment_version(assignment_version_);
  const std::vector<core::ExecutorInfo> local = DescribeLocalExecutors();
  SetTotals(stats);
  beat_.set_complete_latency_p99_us(stats.complete_latency_p99_us);
  const std::vector<core::MetricSample> samples = SnapshotMetrics(worker_->metrics());
  std::vector<v1::ExecutorStats> executor_stats =
      CollectExecutorStats(samples, local, spout_ids_, beat_.uptime_secs());
  AddCarriedStats(carried_executor_stats_, executor_stats);
  beat_.clear_executor_stats();
  for (v1::ExecutorStats& e : executor_stats) *beat_.add_executor_stats() = std::move(e);
  CollectKafkaLag(samples);
  PublishErrors();
  if (!options_.worker_dir.empty()) {
    // Only the local file carries the whole registry (its supervisor
    // serves it on /metrics); ZooKeeper gets the beat without it.
    ToMetricPoints(samples, *beat_.mutable_local_metrics());
    absl::Status s = WriteLocalHeartbeat();
    if (!s.ok()) spdlog::error("local heartbeat: {}", s.ToString());
    beat_.clear_local_metrics();
  }
  WriteWorkerbeat();
}

std::vector<core::ExecutorInfo> WorkerProcess::DescribeLocalExecutors() {
  beat_.clear_executors();
  // What runs now: after a regrouping in place the ranges differ from the
  // layout's.
  std::vector<core::ExecutorInfo> local = worker_->Executors();
  for (const core::ExecutorInfo& e : local) {
    v1::ExecutorRange* r = beat_.add_executors();
    r->set_start_task(e.start.value());
    r->set_end_task(e.end.value());
    r->set_component(e.component.value());
  }
  return local;
}

absl::Status WorkerProcess::WriteLocalHeartbeat() {
  return os::WriteFileAtomically(
      (std::filesystem::path(options_.worker_dir) / "heartbeat").string(),
      beat_.SerializeAsString());
}

void WorkerProcess::WriteWorkerbeat() {
  // Disconnected, the write would only wait out its deadline while the loop
  // that fences this worker waits behind it; the next beat after the
  // reconnection brings the workerbeat up to date.
  if (!session_->IsConnected()) return;
  const std::string data = beat_.SerializeAsString();
  // Short deadline: a slow ensemble must not hold up the local heartbeat
  // the supervisor judges this process by.
  coord::ZkCall call;
  call.timeout = std::chrono::milliseconds(2000);
  absl::StatusOr<coord::ZkStat> set = session_->Set(BeatPath(), data, -1, call);
  if (absl::IsNotFound(set.status())) {
    coord::ZkCreateOptions create;
    create.create_parents = true;
    absl::StatusOr<std::string> created = session_->Create(BeatPath(), data, create, call);
    if (!created.ok() && !absl::IsAlreadyExists(created.status())) {
      spdlog::warn("workerbeat {}: {}", BeatPath(), created.status().ToString());
    }
  } else if (!set.ok()) {
    spdlog::warn("workerbeat {}: {}", BeatPath(), set.status().ToString());
  }
}

void WorkerProcess::PublishErrors() {
  std::vector<ComponentError> errors = worker_->TakeUnpublishedErrors();
  if (errors.empty()) return;
  const coord::ClusterPaths paths(options_.zk.root);
  coord::ZkCall call;
  call.timeout = std::chrono::milliseconds(2000);
  std::set<std::string> touched;
  for (const ComponentError& e : errors) {
    // Bounded like every field nimbus renders: a component's message may be
    // anything (a multilang child's text included).
    std::string message = e.message.substr(0, kMaxErrorMessageBytes);
    nlohmann::json doc = {{"error", std::move(message)}, {"time_secs", e.time_secs},
                          {"node", options_.supervisor_id}, {"port", options_.port},
                          {"task", e.task}};
    coord::ZkCreateOptions create;
    create.mode = coord::ZkCreateMode::kPersistentSequential;
    create.create_parents = true;
    const std::string dir = paths.ErrorsOf(options_.topology_id, e.component);
    absl::StatusOr<std::string> created =
        session_->Create(dir + "/e", doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                         create, call);
    if (!created.ok()) {
      spdlog::warn("cannot publish an error of {} under {}: {}", e.component, dir,
                   created.status().ToString());
      continue;
    }
    touched.insert(dir);
  }
  for (const std::string& dir : touched) {
    absl::StatusOr<std::vector<std::string>> children = session_->Children(dir, call);
    if (!children.ok()) continue;
    // Sequence numbers are zero-padded, so name order is age order.
    std::sort(children->begin(), children->end());
    for (size_t i = 0; i + kErrorsKeptPerComponent < children->size(); ++i) {
      // Best effort: a node left behind goes with the next error's pruning.
      (void)session_->Delete(dir + "/" + (*children)[i], -1, call);
    }
  }
}

void WorkerProcess::CollectKafkaLag(const std::vector<core::MetricSample>& samples) {
  // KafkaSpout publishes per-partition gauges labelled component, task,
  // topic and partition, in the worker's registry or the process-wide one.
  namespace names = core::kafka_spout_metrics;
  std::map<std::tuple<std::string, int32_t, std::string, int32_t>, v1::SpoutPartitionLag> rows;
  {
    for (const core::MetricSample& m : samples) {
      if (m.kind != core::MetricSample::Kind::kGauge || m.name.rfind(names::kPrefix, 0) != 0) {
        continue;
      }
      auto label = [&m](const char* key) -> std::string {
        auto it = m.labels.find(key);
        return it == m.labels.end() ? std::string() : it->second;
      };
      int32_t task = 0;
      int32_t partition = 0;
      if (!absl::SimpleAtoi(label("task"), &task) ||
          !absl::SimpleAtoi(label("partition"), &partition)) {
        continue;
      }
      auto [it, added] = rows.try_emplace({label("component"), task, label("topic"), partition});
      v1::SpoutPartitionLag& row = it->second;
      if (added) {  // unknown until the spout's gauges say
        row.set_log_end_offset(-1);
        row.set_lag_ms(-1);
      }
      row.set_component(label("component"));
      row.set_task(task);
      row.set_topic(label("topic"));
      row.set_partition(partition);
      if (m.name == names::kLag) row.set_lag(m.value);
      if (m.name == names::kCommittedOffset) row.set_committed_offset(m.value);
      if (m.name == names::kLatestEmittedOffset) row.set_latest_emitted_offset(m.value);
      if (m.name == names::kLogEndOffset) row.set_log_end_offset(m.value);
      if (m.name == names::kLagMs) row.set_lag_ms(m.value);
    }
  }
  beat_.clear_kafka_partitions();
  for (auto& [key, row] : rows) *beat_.add_kafka_partitions() = std::move(row);
}

WorkerExit WorkerProcess::Run(const std::function<bool()>& stop) {
  using SteadyClock = std::chrono::steady_clock;
  auto next_beat = SteadyClock::now() + options_.heartbeat_interval;
  auto next_sync = SteadyClock::now() + options_.resync_interval;
  WorkerExit exit = WorkerExit::kStopRequested;
  for (;;) {
    if (stop()) break;
    if (const uint64_t losses = losses_->load(); losses != losses_seen_) {
      losses_seen_ = losses;
      Fence();
    }
    const auto now = SteadyClock::now();
    // Without a session a read would only wait out its deadline (and hold
    // up a fence); the pending re-read runs once one is back.
    const coord::ZkSessionState state = session_->state();
    const bool readable =
        state == coord::ZkSessionState::kConnected || state == coord::ZkSessionState::kReadOnly;
    if (readable && (changed_->exchange(false) || now >= next_sync)) {
      next_sync = now + options_.resync_interval;
      if (std::optional<WorkerExit> why = Sync(); why.has_value()) {
        exit = *why;
        break;
      }
    }
    if (now >= next_beat) {
      next_beat = now + options_.heartbeat_interval;
      Heartbeat();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  spdlog::info("worker {} {}:{} stopping: {}", options_.topology_id, options_.supervisor_id,
               options_.port, WorkerExitName(exit));
  // The worker is stopped whatever Kill returns, and the process exits next:
  // nothing is left to do with an error.
  (void)worker_->Kill(exit == WorkerExit::kTopologyRemoved ? std::chrono::milliseconds(0)
                                                           : options_.shutdown_wait);
  if (!options_.worker_dir.empty()) {
    // The final totals, marked as a clean stop: the slot's next worker
    // continues from them without counting a restart.
    SetTotals(worker_->Stats());
    beat_.set_stopped_cleanly(true);
    absl::Status s = WriteLocalHeartbeat();
    if (!s.ok()) spdlog::warn("final local heartbeat: {}", s.ToString());
  }
  return exit;
}

WorkerProcess::~WorkerProcess() {
  // A destructor has no one to report to; Kill stops the worker regardless.
  if (worker_ != nullptr) (void)worker_->Kill(std::chrono::milliseconds(0));
  // The workerbeat stays: nimbus judges liveness by whether it changes, and
  // removes it with the topology or when the slot is reassigned.
  if (session_ != nullptr) session_->Close();
}

}  // namespace tempest::worker
