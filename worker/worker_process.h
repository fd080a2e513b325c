#ifndef TEMPEST_WORKER_WORKER_PROCESS_H_
#define TEMPEST_WORKER_WORKER_PROCESS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/config.h"
#include "common/coord/cluster_zk_config.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"
#include "common/core/topology/task_layout.h"
#include "common/core/topology/topology_def.h"
#include "tempest/v1/cluster.pb.h"
#include "worker/worker.h"

namespace tempest::worker {

struct SlotPlan;  // worker_process.cc

// What `tempest worker` is told by its supervisor, plus the config keys it
// reads (see FromConfig).
struct WorkerProcessOptions {
  coord::ClusterZkConfig zk;
  std::string topology_id;
  std::string supervisor_id;
  int port = 0;                 // the slot: also the transport port
  std::string worker_dir;       // {storm.local.dir}/workers/{port}
  // storm.local.hostname of the worker's configuration ("": unset); passed
  // to the components through the topology's configuration.
  std::string local_hostname;
  // worker.heartbeat.frequency.secs: local heartbeat file and workerbeat.
  std::chrono::milliseconds heartbeat_interval{1000};
  // How long a clean stop (SIGTERM, assignment gone) waits for in-flight
  // tuples before closing the components.
  std::chrono::milliseconds shutdown_wait{2000};
  // A backstop re-read of the assignment and topology status in case a watch
  // was lost with a session.
  std::chrono::milliseconds resync_interval{3000};
  const api::ComponentRegistry* registry = &api::ComponentRegistry::Global();

  // storm.zookeeper.*, worker.heartbeat.frequency.secs,
  // supervisor.worker.shutdown.sleep.secs (the clean-stop wait leaves a
  // second of it for the supervisor).
  static absl::StatusOr<WorkerProcessOptions> FromConfig(const api::Config& config);
};

// Why WorkerProcess::Run returned.
enum class WorkerExit {
  kStopRequested,      // SIGTERM/SIGINT: the supervisor stops us
  kAssignmentChanged,  // our slot's executors or the topology's placement changed
  kTopologyRemoved,    // storms/{id} or assignments/{id} is gone
};
std::string_view WorkerExitName(WorkerExit exit);

// The command line a worker shows in `ps -ef` / `ps aux`, word by word:
// "tempest worker TOPOLOGY:PORT --supervisor-id ID --port PORT". The words
// after the title stay because the supervisor recognises its workers by them
// in /proc/PID/cmdline (supervisor/worker_launcher.h: LooksLikeWorker,
// FindWorkersOf), e.g. to adopt them after a supervisor restart.
std::vector<std::string> WorkerProcessTitle(const std::string& topology_id,
                                            const std::string& supervisor_id, int port);

// Shows `words` as this process's command line and "tempest worker" as its
// name (comm, in `ps -e` and top). Call from the main thread before other
// threads start; `argv` is main's (its strings must not be read afterwards:
// they are overwritten). Words that do not fit in the original command line's
// memory are cut; nothing happens when argv is null.
void SetProcessTitle(int argc, char** argv, const std::vector<std::string>& words);

// The glue between the cluster state in ZooKeeper and one `Worker`: reads
// {root}/storms/{id} and {root}/assignments/{id}, runs the executors placed
// on (supervisor id, port), follows the topology's status (ACTIVE runs the
// spouts; anything else deactivates them), and heartbeats every
// heartbeat_interval, first to {worker_dir}/heartbeat (atomically, for the
// supervisor) and then to {root}/workerbeats/{id}/{supervisor}-{port} (for
// nimbus).
//
// A worker never runs a stale plan: as soon as the assignment differs in
// anything that concerns it (its own executors, where any other executor
// runs, the secret), Run returns kAssignmentChanged, the process stops
// cleanly and exits 0, and the supervisor starts a fresh worker if the slot
// is still assigned. That is how Tempest avoids Storm's zombie workers
// (STORM-3773, STORM-3655).
//
// Fencing: once its ZooKeeper session is lost (expired by the server, or
// given up by the session's own timer on a host cut off from ZooKeeper),
// nimbus may already have given the slot's work to another worker, which
// this worker cannot learn. So it stops its spouts (bolts keep processing
// and acking what arrives) until it has read the assignment again on a
// connected session: a changed plan or a removed topology then stops it as
// above; an unchanged one resumes the spouts if the topology is ACTIVE.
//
// Threads: Run on the caller's (main) thread; ZooKeeper watches and the
// session listener only set flags that Run polls.
class WorkerProcess {
 public:
  // Connects, loads the topology, builds and starts the worker (spouts
  // active if the topology is ACTIVE). Errors: the slot is not assigned to
  // this topology (FailedPrecondition), the topology does not load, the port
  // is taken.
  static absl::StatusOr<std::unique_ptr<WorkerProcess>> Start(WorkerProcessOptions options);
  ~WorkerProcess();

  // Heartbeats and follows the cluster state until `stop` returns true or the
  // assignment changes; then stops the worker cleanly.
  WorkerExit Run(const std::function<bool()>& stop);

  const v1::WorkerHeartbeat& last_heartbeat() const { return beat_; }

 private:
  // What Launch reads (and watches) in ZooKeeper.
  struct ClusterState {
    v1::StormBase base;
    v1::Assignment assignment;
  };
  // What a re-read assignment says of the plan this worker runs.
  enum class PlanCheck {
    kConfirmed,    // read on this pass and unchanged
    kUnconfirmed,  // not read, or unusable: the current plan stays
    kChanged,
    kRemoved,
  };

  explicit WorkerProcess(WorkerProcessOptions options) : options_(std::move(options)) {}
  // Start's work, in named steps: the session, the cluster state, the slot's
  // plan, the topology, the worker.
  absl::Status Launch();
  // Creates the ZooKeeper session and the listener that fences on a loss.
  absl::Status OpenSession();
  // A watch that only raises changed_: Run re-reads on its own thread.
  coord::ZkWatchFn RaiseChanged() const;
  absl::StatusOr<ClusterState> ReadClusterState();
  // The stored topology as components see it: without secrets, with the
  // cluster's defaults and the resources directory.
  absl::StatusOr<core::TopologyDef> LoadTopology(const v1::StormBase& base);
  // Builds and starts the worker, spouts running if `active`.
  absl::Status StartWorker(WorkerPlan plan, bool active);
  // Writes the topology's resources under {worker_dir}/resources; returns
  // that directory.
  absl::StatusOr<std::string> FetchResources(const v1::StormBase& base);
  // Re-reads the assignment and status (re-arming the watches); returns the
  // reason to stop, if any.
  std::optional<WorkerExit> Sync();
  // Sync's re-read of the assignment (re-arming its watch).
  PlanCheck CheckAssignment(const coord::ZkCall& call);
  // Takes a changed assignment without a restart when only the other
  // workers changed, or only how this worker's own tasks are grouped into
  // bolt executors, or only bolt executors leave it for other workers;
  // false when this worker must restart.
  bool ApplyInPlace(const SlotPlan& slot);
  // ApplyInPlace's cases of the same tasks in other executors, and of bolt
  // executors that leave.
  bool RegroupInPlace(const SlotPlan& slot);
  // Follows the topology's status; `unfence` lifts the fence first.
  void FollowTopologyStatus(const v1::StormBase& base, bool unfence);
  // Stops the spouts after a session loss (idempotent: one episode lasts
  // until Sync lifts the fence).
  void Fence();
  // Tells the worker whether spouts run: the topology is ACTIVE and the
  // worker is not fenced.
  void ApplySpoutState();
  void Heartbeat();
  // The executors run here, into beat_ and returned.
  std::vector<core::ExecutorInfo> DescribeLocalExecutors();
  // beat_ to {worker_dir}/heartbeat, atomically.
  absl::Status WriteLocalHeartbeat();
  // beat_ to the workerbeat node, when the session is connected.
  void WriteWorkerbeat();
  // The slot's running totals (the previous workers' plus this one's) and
  // restart count into beat_.
  void SetTotals(const LocalClusterStats& stats);
  // Reads {worker_dir}/heartbeat.previous: the totals and restart count
  // this worker continues from, if the slot ran the same topology.
  void CarryPreviousTotals();
  // Copies the KafkaSpout partition gauges into the heartbeat.
  void CollectKafkaLag(const std::vector<core::MetricSample>& samples);
  // Writes the errors components reported since the last call under
  // {root}/errors/{topology}/{component}/e{seq}, keeping the newest
  // kErrorsKeptPerComponent there (what Storm's UI shows as a component's
  // errors).
  void PublishErrors();
  std::string StormPath() const;
  std::string AssignmentPath() const;
  std::string BeatPath() const;

  WorkerProcessOptions options_;
  std::unique_ptr<coord::ZkSession> session_;
  std::unique_ptr<Worker> worker_;
  std::string plan_key_;  // what of the assignment this worker depends on
  std::string local_key_;  // the part of it that needs a restart to change
  int64_t assignment_version_ = 0;  // the Assignment.version running
  std::string address_key_;  // bind host and secret
  std::set<int32_t> tasks_;  // the tasks run here
  std::set<std::string> spout_ids_;  // the topology's spout components
  bool active_ = false;  // the topology's status is ACTIVE
  bool fenced_ = false;  // session lost, assignment not read again since
  bool spouts_running_ = false;  // what the worker was last told (ApplySpoutState)
  std::shared_ptr<std::atomic<bool>> changed_ = std::make_shared<std::atomic<bool>>(false);
  // Session losses counted by the session listener; Run fences when the
  // count moves past losses_seen_.
  std::shared_ptr<std::atomic<uint64_t>> losses_ = std::make_shared<std::atomic<uint64_t>>(0);
  uint64_t losses_seen_ = 0;
  // The worker the session listener stops when the session is lost (null
  // until it runs), and whether this fence episode's line was logged.
  std::atomic<Worker*> fence_target_{nullptr};
  std::atomic<bool> fence_announced_{false};
  core::Gauge* fenced_gauge_ = nullptr;    // tempest_worker_fenced
  core::Counter* fences_total_ = nullptr;  // tempest_worker_fences_total
  core::Counter* applied_in_place_ = nullptr;
  core::Counter* regrouped_in_place_ = nullptr;
  core::Counter* left_in_place_ = nullptr;  // tempest_worker_executors_left_in_place_total
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  v1::WorkerHeartbeat beat_;
  LocalClusterStats carried_;  // totals of the slot's earlier workers (counts only)
  // Executor statistics of the slot's earlier workers (AddCarriedStats).
  google::protobuf::RepeatedPtrField<v1::ExecutorStats> carried_executor_stats_;
  int64_t restarts_ = 0;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_WORKER_PROCESS_H_
