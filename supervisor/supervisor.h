#ifndef TEMPEST_SUPERVISOR_SUPERVISOR_H_
#define TEMPEST_SUPERVISOR_SUPERVISOR_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/coord/serial_executor.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"
#include "common/net/event_loop.h"
#include "common/net/http_server.h"
#include "supervisor/cluster_sync.h"
#include "supervisor/supervisor_options.h"
#include "supervisor/worker_control.h"

namespace tempest::supervisor {

// The supervisor daemon: registers this machine's worker slots in ZooKeeper
// and runs the workers its assignments ask for.
//
// A thin owner of the supervisor's two thread roles (ADR 0011):
//   * ClusterSync, the ZooKeeper thread: the ZkSession, assignment sync
//     (watches plus a poll every monitor_interval), the ephemeral
//     {root}/supervisors/{id} node (rewritten every heartbeat_interval, and at
//     once when the node or the session was lost) and session events. It
//     hands the desired slots to the control thread.
//   * WorkerControl, the control thread: the worker processes it launched or
//     adopted; every check_interval it reaps exited workers, reads
//     heartbeats, runs PlanSlots and launches/stops workers. It never waits
//     on ZooKeeper, so a ZooKeeper outage does not delay worker restarts.
// ZooKeeper callbacks only post to these threads. Public methods may be
// called from any thread; they wait for at most op_timeout.
//
// With tempest.supervisor.metrics.port set, an HTTP server on its own event
// loop thread serves GET /metrics: the supervisor's series and every
// worker's registry from the local heartbeat files (docs/adr/0019); the
// handler only reads what the two threads publish, so it never waits on
// them.
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
  // The port /metrics is served on (0: not served).
  int metrics_port() const { return http_ ? http_->port() : 0; }
  // What GET /metrics answers (any thread).
  std::string RenderMetrics() const;
  // Re-reads the assignments and checks the workers now (tests and tools;
  // the loops run by themselves anyway).
  absl::Status SyncNow();

  // The session, so tests can expire it for real.
  const coord::ZkSession& session() const { return cluster_->session(); }
  // Makes the destructor leave the workers running, as a crash would (tests
  // of adoption).
  void LeaveWorkersRunningForTest() { leave_workers_running_ = true; }

 private:
  explicit Supervisor(SupervisorOptions options) : options_(std::move(options)) {}
  absl::Status Start();
  // Runs `fn` on `executor` and waits up to op_timeout + the shutdown wait.
  template <typename T>
  absl::StatusOr<T> RunOn(coord::SerialExecutor& executor, std::function<absl::StatusOr<T>()> fn);

  absl::Status StartMetricsServer();

  SupervisorOptions options_;
  std::string id_;
  int64_t started_at_ms_ = 0;
  std::atomic<bool> leave_workers_running_{false};
  // The supervisor's own series (its workers' counters, its ZooKeeper
  // session, its HTTP server); outlives both threads.
  core::MetricsRegistry metrics_;
  // The ZooKeeper thread's part and the control thread's part; each posts
  // to the other's thread only.
  std::unique_ptr<WorkerControl> workers_;
  std::unique_ptr<ClusterSync> cluster_;
  // GET /metrics, when configured; stopped first.
  std::unique_ptr<net::EventLoop> http_loop_;
  std::unique_ptr<net::HttpServer> http_;
};

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_SUPERVISOR_H_
