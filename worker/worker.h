#ifndef TEMPEST_WORKER_WORKER_H_
#define TEMPEST_WORKER_WORKER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/api/component_registry.h"
#include "common/core/clock.h"
#include "common/core/metrics_registry.h"
#include "common/core/topology/topology_def.h"
#include "common/net/event_loop.h"
#include "common/net/transport_client.h"
#include "common/net/transport_server.h"
#include "worker/envelope_codec.h"
#include "worker/local_cluster.h"
#include "worker/peer_loss.h"
#include "worker/remote_outbox.h"
#include "worker/remote_receiver.h"
#include "worker/worker_context.h"

namespace tempest::worker {

// Another worker process of the same topology: where its transport listens
// and the executors ([start_task, end_task], as in the task layout) it runs.
struct RemoteWorker {
  std::string host;
  int port = 0;
  std::vector<std::pair<int32_t, int32_t>> executors;
};

// What one worker process runs. Every executor of the task layout
// (core::TaskLayout::Create(def, TaskLayout::AckerExecutors(def.config)),
// identical in every worker) is either in `local_executors` or in exactly one
// `remote_workers` entry.
struct WorkerPlan {
  std::string topology_id;
  core::TopologyDef def;  // as core::LoadStoredTopology(StormBase) returns it
  std::vector<std::pair<int32_t, int32_t>> local_executors;  // [start_task, end_task] run here
  std::vector<RemoteWorker> remote_workers;                  // everyone else
  std::string bind_host = "127.0.0.1";
  int port = 0;        // transport listen port (the slot port); 0 = ephemeral
  std::string secret;  // per-topology transport secret (bytes)
};

struct WorkerOptions {
  // As LocalClusterOptions.
  const api::ComponentRegistry* registry = &api::ComponentRegistry::Global();
  core::Clock* clock = nullptr;             // nullptr = the real clock
  core::MetricsRegistry* metrics = nullptr;  // nullptr = one owned by the worker
  ExecutorOptions executor;
  // Transport tuning (common/net defaults otherwise).
  size_t max_queued_bytes = 16 << 20;  // per connection to another worker
  // How long the transport lets a small amount of queued data wait for more
  // before writing it (it writes at once from 16 KiB). 200 us instead of
  // common/net's 1 ms: a tuple and its ack cross the connection once each,
  // so this delay counts twice in the complete latency (cluster_bench: p50
  // 0.67 -> 0.46 ms at 50% load, throughput unchanged).
  std::chrono::microseconds flush_interval = std::chrono::microseconds(200);
  // How often a paused inbound connection (a local ring was full) re-checks
  // for room. A consumer empties a 1024-slot ring in ~100-200 us, so a
  // longer poll leaves it idle: 500 us measured 1.2-1.8M tuples/s across
  // workers, 50 us 2.0-2.3M (cluster_bench --only unacked). The timer thread
  // only runs while some connection is paused.
  std::chrono::microseconds resume_poll = std::chrono::microseconds(50);
  // How often the connections to the other workers are looked at for a
  // loss (PeerLossWatch): a lost worker's trees are failed within about
  // this long of the transport noticing, instead of after the message
  // timeout.
  std::chrono::milliseconds peer_watch_interval = std::chrono::milliseconds(10);
  // Reconnect backoff towards other workers.
  std::chrono::milliseconds reconnect_initial = std::chrono::milliseconds(20);
  std::chrono::milliseconds reconnect_max = std::chrono::seconds(1);
};

// The data plane of one worker process: the executors of its plan (built and
// run exactly as LocalCluster does; it is a LocalCluster part, see
// ClusterPart), a TransportServer on the plan's port receiving tuples and
// acker messages from the other workers, and one TransportClient per other
// worker shared by all local executors (docs/adr/0010-worker-data-plane.md).
//
//   auto worker = Worker::Create(std::move(plan), {});   // validates, binds
//   RETURN_IF_ERROR((*worker)->Start(/*activate=*/true));  // common/core/status_macros.h
//   ...
//   (*worker)->Kill(std::chrono::seconds(5));
//
// Threads: one per local executor, one event-loop thread (all sockets, the
// receive callback), one resume timer thread (idle unless an inbound
// connection is paused), and, when there are other workers, one thread that
// looks at their connections every `peer_watch_interval` and fails the trees
// a lost worker took with it (PeerLossWatch). Create/Start/Activate/Deactivate/Kill from one
// control thread; Stats(), port(), metrics() from any thread.
//
// Bad input on the port (garbage, wrong secret, oversized frames) closes
// that connection with one logged error; the worker keeps running.
class Worker {
 public:
  // Validates the topology and the plan (ranges must be executors of the
  // layout, disjoint, and cover it), builds the executors, connects the
  // clients lazily (they retry until the peer is up) and binds the port:
  // a port in use is an Unavailable error naming it.
  static absl::StatusOr<std::unique_ptr<Worker>> Create(WorkerPlan plan,
                                                        WorkerOptions options = {});
  ~Worker();

  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts the executors (Open/Prepare on their threads); spouts emit if
  // `activate`. Returns the first failure after stopping everything.
  absl::Status Start(bool activate = true);
  void Activate();
  void Deactivate();
  // Clean shutdown: deactivate the local spouts, wait up to `wait` for their
  // pending trees and the local queues to drain; then (wait > 0) say goodbye
  // to the workers that send here, so they stop at a frame boundary and hold
  // the rest for this slot's next worker, and deliver what they sent before
  // (1 to 5 s more); stop the executors (upstream first), let their last
  // output leave (up to 1 s), then close the transport. Idempotent.
  absl::Status Kill(std::chrono::milliseconds wait);

  // Where the other workers of the topology run changed, and this worker's
  // own executors did not (a rebalance or a reassignment elsewhere):
  // switches the executors to the new routes without stopping them.
  // `remote_workers` must, with this worker's executors, cover the
  // layout's tasks exactly once; their ranges may group tasks differently
  // from this worker's layout (a rebalance regrouped another component). Connections to new workers open lazily;
  // a worker that runs nothing any more is retired (PeerLossWatch): its
  // connection closes once it is down or after the message timeout, and
  // the trees that may have crossed it are failed then. Control thread,
  // after Start.
  absl::Status UpdateRemoteWorkers(const std::vector<RemoteWorker>& remote_workers);

  // This worker's own tasks were regrouped into other executors (a
  // rebalance split or merged a bolt whose tasks stay here), and the other
  // workers may have changed as well: regroups the executors in place
  // (LocalCluster::Regroup: the bolts' objects and state carry over, no
  // tree is failed) and then takes `remote_workers` as UpdateRemoteWorkers
  // does. Bolt executors may also leave for other workers, with no task
  // arriving (a rebalance onto more workers): the new routes are taken
  // first, then the leaving executors execute what was queued for them and
  // stop with Cleanup, and messages still sent here for their tasks are
  // forwarded (docs/adr/0035-tasks-leave-a-worker-in-place.md).
  // FailedPrecondition, with nothing changed, when tasks would arrive or a
  // spout or acker executor would change: that needs a restart. Control
  // thread, after Start.
  absl::Status RegroupExecutors(const std::vector<std::pair<int32_t, int32_t>>& local,
                                const std::vector<RemoteWorker>& remote_workers);
  // The executors this worker runs now (any thread).
  std::vector<core::ExecutorInfo> Executors() const { return cluster_->Executors(); }

  LocalClusterStats Stats() const;
  int port() const { return server_ != nullptr ? server_->port() : 0; }
  core::MetricsRegistry& metrics() { return cluster_->metrics(); }
  const std::string& topology_id() const { return cluster_->topology_id(); }
  const core::TaskLayout& layout() const { return cluster_->layout(); }

  // Local progress, for tests and the worker process.
  bool Idle() const { return cluster_->Idle(); }
  // Every local spout exhausted, nothing pending locally, Idle().
  bool Finished() const { return cluster_->Finished(); }
  // Messages sent to / received from other workers.
  int64_t RemoteSent() const { return cluster_->RemoteSent(); }
  int64_t RemoteDelivered() const { return receiver_->delivered(); }
  // Received messages skipped: unknown task / undecodable.
  int64_t RemoteUnknownTask() const { return receiver_->unknown_task(); }
  int64_t RemoteMalformed() const { return receiver_->malformed(); }
  // Received messages for tasks that left, sent on to their new worker.
  int64_t RemoteForwarded() const { return receiver_->forwarded(); }
  size_t connection_count() const { return server_->connection_count(); }
  std::vector<std::string> RecentErrors() const { return cluster_->RecentErrors(); }
  std::vector<ComponentError> TakeUnpublishedErrors() { return cluster_->TakeUnpublishedErrors(); }

 private:
  Worker() = default;
  // One client and outbox per other worker of the plan (Create's step).
  absl::Status ConnectRemoteWorkers(const WorkerPlan& plan);
  // The outbox (index into outboxes_) for `rw`: the existing one, unless
  // its client was closed, else a new client and outbox.
  absl::StatusOr<int> OutboxFor(const RemoteWorker& rw);
  // Every client, index for index with outboxes_.
  std::vector<PeerLossWatch::Peer> WatchedPeers() const;
  absl::Status StartPeerWatch();
  // The receiver and the transport server on the plan's port (Create's step).
  // `config`: the topology's (plan.def has been moved into the cluster).
  absl::Status Listen(const WorkerPlan& plan, const api::Config& config);
  void ResumeLoop();
  // Runs peer_watch_ until StopTransport.
  void PeerWatchLoop();
  // ResumeLoop's wait condition while no connection is paused.
  bool StoppingOrPaused() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The receive callback paused a connection: wakes ResumeLoop (loop thread).
  void OnPaused() ABSL_LOCKS_EXCLUDED(mu_);
  void StopTransport();

  WorkerOptions options_;
  std::unique_ptr<core::MetricsRegistry> owned_metrics_;
  std::unique_ptr<EnvelopeCodec> codec_;
  std::unique_ptr<net::EventLoop> loop_;
  std::vector<std::unique_ptr<net::TransportClient>> clients_;
  // Append-only (an index names one peer for the worker's life), so
  // batches staged under older routes still reach the right peer.
  std::vector<std::unique_ptr<RemoteOutbox>> outboxes_;
  // Every routes snapshot published; the newest is current.
  std::vector<std::unique_ptr<RemoteRoutes>> routes_;
  std::vector<std::pair<int32_t, int32_t>> local_executors_;
  std::string secret_;
  size_t max_frame_bytes_ = 0;
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<RemoteReceiver> receiver_;
  // Messages the receiver put into local queues/lanes (ClusterPart::delivered).
  std::atomic<int64_t> delivered_{0};
  std::unique_ptr<net::TransportServer> server_;

  absl::Mutex mu_;
  // Ends ResumeLoop's waits (StopTransport).
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread resume_thread_;
  std::unique_ptr<PeerLossWatch> peer_watch_;
  std::thread peer_watch_thread_;
  bool started_ = false;
  bool killed_ = false;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_WORKER_H_
