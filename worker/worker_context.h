#ifndef TEMPEST_WORKER_WORKER_CONTEXT_H_
#define TEMPEST_WORKER_WORKER_CONTEXT_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "common/api/component_registry.h"
#include "common/api/topology_context.h"
#include "common/core/clock.h"
#include "common/core/metrics_registry.h"
#include "common/core/rate_limited_log.h"
#include "common/core/topology/task_layout.h"
#include "common/core/topology/topology_def.h"
#include "worker/envelope.h"
#include "worker/receive_queue.h"

namespace tempest::worker {

class Executor;
struct RemoteRoutes;

// Which local executor runs each task. A worker that regroups its own tasks
// into other executors without stopping (LocalCluster::Regroup) publishes a
// new snapshot with the next version; every producer into local queues (each
// Transfer, the RemoteReceiver) switches to it at its next flush, after
// publishing what it staged under the old one, and then stores the version
// it follows, so the control thread knows when no one sends to a leaving
// executor any more (docs/adr/0034-executors-regrouped-in-place.md).
struct LocalRoutes {
  int64_t version = 0;
  std::vector<Executor*> executor_by_task;  // index: task id; nullptr: not local
};

// An executor's bounded data queue.
using ExecutorQueue = ReceiveQueue<Envelope>;

// Tuning knobs of the executors of one worker. The defaults suit this
// 2-core machine (see docs/benchmarks.md, "Engine (worker)").
struct ExecutorOptions {
  // Slots of each producer's ring in a receive queue (per upstream executor).
  size_t ring_capacity = 1024;
  // Cap on a producer's publish batch: it publishes (and may wake the
  // consumer) once per batch or at the end of its loop iteration, whichever
  // comes first. The batch itself adapts between 1/8 of this and this (AIMD in
  // ReceiveQueue; docs/adr/0029-adaptive-batching.md).
  size_t batch_size = 64;
  // Most items a consumer takes per drain.
  size_t drain_batch = 256;
  // NextTuple calls per spout task per loop iteration while it keeps
  // emitting; acks are drained between bursts.
  int spout_burst = 64;
  // Upper bound on any park, so executors re-read the (possibly fake) clock
  // and notice ticks at least this often.
  std::chrono::milliseconds max_park{100};
  // How long a spout whose NextTuple emitted nothing sleeps (Storm's
  // sleep-spout-wait-strategy default is 1 ms). Acks wake it earlier.
  std::chrono::microseconds spout_idle_park{1000};
  // Latency metrics sample 1 in 2^latency_sample_shift tuples.
  int latency_sample_shift = 4;
};

// One error a component reported, as a worker publishes it (Storm's
// errors/ records).
struct ComponentError {
  std::string component;
  int32_t task = 0;
  int64_t time_secs = 0;  // wall clock, seconds since the epoch
  std::string message;
};

// Errors reported by components (ReportError, failed Open/Prepare, throwing
// calls). Thread-safe; errors are rare so a mutex is fine. Keeps the last
// kMaxKept for Stats(), logs each one (rate-limited), and holds the ones not
// yet published for the worker process to write to ZooKeeper: at most
// kMaxUnpublishedPerComponent per component (the newest), so a component
// failing every tuple costs a bounded number of writes per heartbeat.
class ErrorLog {
 public:
  static constexpr size_t kMaxKept = 100;
  static constexpr size_t kMaxUnpublishedPerComponent = 10;
  void Report(const api::ComponentId& component, int32_t task, const absl::Status& error);
  int64_t count() const { return count_.load(std::memory_order_relaxed); }
  std::vector<std::string> Recent() const;
  // The errors reported since the last call, oldest first (bounded as above).
  std::vector<ComponentError> TakeUnpublished();

 private:
  mutable absl::Mutex mu_;
  std::deque<std::string> recent_ ABSL_GUARDED_BY(mu_);
  std::deque<ComponentError> unpublished_ ABSL_GUARDED_BY(mu_);  // in report order
  std::map<std::string, size_t> unpublished_per_component_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> count_{0};
  // Log lines: 20 per 10 s, then one saying how many were held back.
  core::RateLimitedLog log_{20, std::chrono::seconds(10)};
};

// Everything the executors of one running topology in one worker share.
// Built by LocalCluster (or the worker process) on the control thread before
// any executor thread starts; read-only afterwards except for the atomics and
// the thread-safe members (clock, metrics, errors). Owns nothing it points
// to; the owner keeps those alive until every executor has been joined.
struct WorkerContext {
  std::string topology_id;
  std::shared_ptr<const api::TopologyInfo> info;
  const core::TopologyDef* def = nullptr;
  const core::ComponentStreams* streams = nullptr;
  const core::TaskLayout* layout = nullptr;
  const api::ComponentRegistry* registry = nullptr;
  core::Clock* clock = nullptr;
  core::MetricsRegistry* metrics = nullptr;
  ErrorLog* errors = nullptr;
  ExecutorOptions options;
  // Acker task ids, ascending; empty when acking is off.
  std::vector<int32_t> acker_tasks;
  // Tasks in this worker (local-or-shuffle prefers them).
  absl::flat_hash_set<api::TaskId> local_tasks;
  // Executor running each task, indexed by task id (nullptr: not local).
  // The control thread's copy of the current `local` snapshot; producers
  // read the snapshot instead, since a regrouping changes this one.
  std::vector<Executor*> executor_by_task;
  // The current LocalRoutes (owned by the LocalCluster, which keeps every
  // snapshot it published until it is destroyed).
  std::atomic<const LocalRoutes*> local{nullptr};
  // Tasks of other workers (nullptr: every task is local, as in
  // LocalCluster). Owned by the Worker, which publishes a new snapshot when
  // the other workers change while this worker's own executors stay
  // (Worker::UpdateRemoteWorkers); every snapshot lives as long as the
  // Worker, so a reader may keep using the one it loaded.
  std::atomic<const RemoteRoutes*> remote{nullptr};
  // Message timeouts (topology.enable.message.timeouts and
  // topology.message.timeout.secs).
  bool timeouts_enabled = true;
  int64_t message_timeout_secs = 30;
  // Desired spout state; spout executors follow it.
  std::atomic<bool> active{false};

  bool acking() const { return !acker_tasks.empty(); }
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_WORKER_CONTEXT_H_
