#ifndef TEMPEST_SUPERVISOR_SUPERVISOR_H_
#define TEMPEST_SUPERVISOR_SUPERVISOR_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/coord/retry_policy.h"
#include "common/coord/serial_executor.h"
#include "common/coord/zk_session.h"
#include "common/core/clock.h"
#include "supervisor/slot_plan.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::supervisor {

struct SupervisorOptions {
  std::string zk_connect;         // "host:port,host:port"
  std::string root = "/tempest";  // storm.zookeeper.root
  coord::ZkClientConfig zk;       // storm.zookeeper.* timeouts and retries
  // storm.local.dir: the supervisor id and the worker directories.
  std::string local_dir = "tempest-local";
  // storm.local.hostname, else gethostname().
  std::string hostname;
  std::vector<int> slot_ports = {6700, 6701, 6702, 6703};  // supervisor.slots.ports
  // supervisor.heartbeat.frequency.secs: how often SupervisorInfo is rewritten.
  std::chrono::milliseconds heartbeat_interval{5000};
  // supervisor.monitor.frequency.secs: the assignment poll behind the watches.
  std::chrono::milliseconds monitor_interval{3000};
  // How often worker processes are checked for exit and their heartbeats
  // read: a crashed worker is relaunched within about this long.
  std::chrono::milliseconds check_interval{100};
  std::chrono::milliseconds worker_timeout{30000};         // supervisor.worker.timeout.secs
  std::chrono::milliseconds worker_start_timeout{120000};  // supervisor.worker.start.timeout.secs
  std::chrono::milliseconds worker_shutdown_wait{3000};    // supervisor.worker.shutdown.sleep.secs
  // tempest.supervisor.worker.exit.grace.secs: how long a worker whose slot
  // was unassigned or reassigned may take to exit by itself.
  std::chrono::milliseconds worker_exit_grace{10000};
  // Cap of the crash-loop back-off.
  std::chrono::milliseconds max_relaunch_delay{30000};
  // Bound of each ZooKeeper call and of API calls waiting for the control thread.
  std::chrono::milliseconds op_timeout{10000};
  // The program a worker runs, as an argv prefix; "worker" and its options
  // follow (the worker contract in supervisor/README.md). Tests replace it.
  std::vector<std::string> worker_command = {"/proc/self/exe"};
  // Appended verbatim to every worker's command line: the supervisor's own
  // global config arguments (`--config FILE`, `-c key=value`), so workers
  // read the same ZooKeeper settings.
  std::vector<std::string> worker_config_args;
  std::string version = "tempest-0.1.0";
  core::Clock* clock = &core::RealClock();

  // storm.zookeeper.servers/port/root/session.timeout/retry.*, storm.local.dir,
  // storm.local.hostname, supervisor.slots.ports,
  // supervisor.heartbeat.frequency.secs, supervisor.monitor.frequency.secs,
  // supervisor.worker.timeout.secs, supervisor.worker.start.timeout.secs,
  // supervisor.worker.shutdown.sleep.secs,
  // tempest.supervisor.worker.exit.grace.secs. InvalidArgument for unusable
  // values.
  static absl::StatusOr<SupervisorOptions> FromConfig(const api::Config& config);
};

// A worker as the supervisor sees it (Workers()).
struct WorkerSnapshot {
  int port = 0;
  pid_t pid = 0;
  std::string topology_id;
  bool adopted = false;
  bool stopping = false;
  bool has_heartbeat = false;
};

// The supervisor daemon: registers this machine's worker slots in ZooKeeper
// and runs the workers its assignments ask for.
//
// Owns a ZkSession, the ephemeral {root}/supervisors/{id} node, the worker
// processes it launched or adopted, and two threads (SerialExecutors):
//   * the ZooKeeper thread: assignment sync (watches on {root}/assignments and
//     each assignment, plus a poll every monitor_interval), the SupervisorInfo
//     rewrite (every heartbeat_interval, and at once when the node or the
//     session was lost) and session events. It hands the desired slots to the
//     control thread.
//   * the control thread: every check_interval it reaps exited workers, reads
//     heartbeats, runs PlanSlots and launches/stops workers. It never waits on
//     ZooKeeper, so a ZooKeeper outage does not delay worker restarts.
// ZooKeeper callbacks only post to these threads. Public methods may be
// called from any thread; they wait for at most op_timeout.
//
// Start-up adopts live workers found under {local}/workers whose slot is still
// assigned to the same topology, and kills the others. Destruction stops all
// workers (SIGTERM, wait worker_shutdown_wait, SIGKILL), removes the
// supervisor node and closes the session.
class Supervisor {
 public:
  // Connects, reads the assignments, adopts or kills leftover workers and
  // registers. Fails when ZooKeeper cannot be reached within the connection
  // timeout or the local directory or id file is unusable.
  static absl::StatusOr<std::unique_ptr<Supervisor>> Create(SupervisorOptions options);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  const std::string& id() const { return id_; }
  const std::string& hostname() const { return options_.hostname; }
  const SupervisorOptions& options() const { return options_; }

  // The workers it currently tracks, by port.
  absl::StatusOr<std::vector<WorkerSnapshot>> Workers();
  // Re-reads the assignments and checks the workers now (tests and tools;
  // the loops run by themselves anyway).
  absl::Status SyncNow();

  // The session, so tests can expire it for real.
  const coord::ZkSession& session() const { return *session_; }
  // Makes the destructor leave the workers running, as a crash would (tests
  // of adoption).
  void LeaveWorkersRunningForTest() { leave_workers_running_ = true; }

 private:
  explicit Supervisor(SupervisorOptions options);
  absl::Status Start();
  // Runs `fn` on `executor` and waits up to op_timeout + the shutdown wait.
  template <typename T>
  absl::StatusOr<T> RunOn(coord::SerialExecutor& executor, std::function<absl::StatusOr<T>()> fn);
  int64_t NowMs() const;

  // ZooKeeper thread only.
  absl::StatusOr<DesiredSlots> SyncAssignments();
  // Syncs and hands the result to the control thread (which then plans).
  absl::Status SyncAndPublish();
  absl::Status Register();
  absl::Status ArmNodeWatch();
  void OnSessionEvent(const coord::ZkSessionEvent& event);
  // A watch callback that runs `on_zk` on the ZooKeeper thread.
  coord::ZkWatchFn PostingWatch(std::function<void(const coord::ZkWatchEvent&)> on_zk);
  void HeartbeatLoop();
  void MonitorLoop();

  // Control thread only.
  void AdoptOrKillLeftovers();
  void CheckWorkers();
  void ExecutePlan();
  void Launch(int port, const DesiredSlot& desired);
  void StopAllWorkers();
  void ReadHeartbeat(int port, WorkerRecord& worker);
  void PublishUsedPorts();
  void TickLoop();

  std::string SupervisorsPath() const { return options_.root + "/supervisors"; }
  std::string AssignmentsPath() const { return options_.root + "/assignments"; }
  std::string NodePath() const { return SupervisorsPath() + "/" + id_; }

  SupervisorOptions options_;
  PlanTimes times_;
  std::string id_;
  int64_t started_at_ms_ = 0;
  std::unique_ptr<coord::ZkSession> session_;
  int listener_ = 0;
  // Shared (weakly) with ZooKeeper callbacks, which may fire after we are
  // gone; a stopped executor ignores their posts.
  std::shared_ptr<coord::SerialExecutor> zk_ = std::make_shared<coord::SerialExecutor>();
  std::shared_ptr<coord::SerialExecutor> control_ = std::make_shared<coord::SerialExecutor>();
  std::atomic<bool> stopping_{false};
  std::atomic<bool> leave_workers_running_{false};

  // ZooKeeper-thread state.
  std::map<std::string, v1::Assignment> last_good_;  // topology id -> last assignment that parsed
  std::set<std::string> reported_problems_;
  bool children_watch_armed_ = false;
  std::set<std::string> data_watches_armed_;  // topology ids
  bool node_watch_armed_ = false;
  int64_t registered_session_ = 0;  // the session of our last successful registration
  DesiredSlots last_logged_;

  // Written by the control thread, read by the ZooKeeper thread.
  std::mutex used_mu_;
  std::vector<int> used_ports_;

  // Control-thread state.
  bool adoption_done_ = false;
  DesiredSlots desired_;
  std::map<int, SlotState> slots_;
  std::set<int> bad_beat_logged_;
  // After a worker exits, launches wait (at most until then) for a fresh
  // assignment sync: the worker probably left because its slot changed.
  int64_t launch_hold_until_ms_ = 0;
};

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_SUPERVISOR_H_
