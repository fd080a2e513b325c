#ifndef TEMPEST_WORKER_LOCAL_CLUSTER_H_
#define TEMPEST_WORKER_LOCAL_CLUSTER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/api/component_registry.h"
#include "common/core/clock.h"
#include "common/core/metrics_registry.h"
#include "common/core/topology/task_layout.h"
#include "common/core/topology/topology_def.h"
#include "worker/executor.h"
#include "worker/remote_outbox.h"
#include "worker/worker_context.h"

namespace tempest::worker {

class BoltExecutor;

struct LocalClusterOptions {
  // Where component classes are looked up.
  const api::ComponentRegistry* registry = &api::ComponentRegistry::Global();
  // Time source for ticks, timeouts and latencies; nullptr = the real clock.
  // With a fake clock, advance it and call WaitForClock() (Storm's
  // advanceClusterTime); keep ExecutorOptions::max_park small.
  core::Clock* clock = nullptr;
  // Where metrics go; nullptr = a registry owned by the cluster.
  core::MetricsRegistry* metrics = nullptr;
  ExecutorOptions executor;
  // "" = "<name>-1-<unix secs>" like nimbus ids.
  std::string topology_id;
};

// Totals of a running topology, for progress lines and tests.
struct LocalClusterStats {
  int64_t spout_emitted = 0;   // emit calls by spouts
  int64_t emitted = 0;         // emit calls by all components
  int64_t transferred = 0;     // tuples delivered to tasks
  int64_t acked = 0;           // spout tuples acked (trees completed)
  int64_t failed = 0;          // spout tuples failed or timed out
  int64_t pending = 0;         // tracked spout tuples in flight
  int64_t complete_latency_p99_us = 0;
  int64_t complete_latency_samples = 0;
  int64_t errors = 0;          // component errors reported
  size_t max_queue_depth = 0;  // deepest receive queue right now
};

// The part of a topology one Worker process runs (worker/worker.h); the
// builder LocalCluster and Worker share. LocalCluster::Create runs every
// executor; Worker passes the executors of its plan and the routes to the
// others.
struct ClusterPart {
  // Executors run here; each must be an executor of the layout.
  std::vector<core::ExecutorInfo> local;
  // How the other tasks are reached; must outlive the cluster.
  const RemoteRoutes* remote = nullptr;
  // Extra producers each local queue must accept (the network thread).
  size_t extra_producers = 0;
  // Items the network thread delivered into local queues and lanes (they
  // count as "sent" for Idle()); nullptr when there is none.
  const std::atomic<int64_t>* delivered = nullptr;
  // Room in every receive queue for this many more producers, taken by the
  // executors a Regroup adds (a queue's producer slots are never reused).
  size_t regroup_producers = 0;
};

// Runs one topology in this process (Storm's LocalCluster, minus nimbus and
// supervisors): Storm task numbering (core::TaskLayout), one thread per
// executor, acker executors per topology.acker.executors (null: one, as for
// one worker; 0: acking off), every task local.
//
// Owns the topology definition, the executors and their threads. Methods
// are called from one control thread (the test or `tempest local`);
// Stats(), Idle(), Finished() may be called from any thread.
//
//   auto cluster = LocalCluster::Create(def, {});
//   RETURN_IF_ERROR((*cluster)->Start());  // common/core/status_macros.h
//   (*cluster)->WaitFinished(std::chrono::seconds(60));
//   (*cluster)->Kill(std::chrono::seconds(5));
//
// Kill(wait) is Storm's clean kill: deactivate the spouts, wait up to `wait`
// for in-flight trees to finish and queues to drain, then stop the executors
// upstream first (spouts, bolts in topological order, ackers), each draining
// what was already sent to it and then running Close/Cleanup on its own
// thread, so sinks write their reports.
class LocalCluster {
 public:
  // Validates `def` (core::TopologyValidator) and builds every executor.
  static absl::StatusOr<std::unique_ptr<LocalCluster>> Create(core::TopologyDef def,
                                                              LocalClusterOptions options = {});
  // Only the executors of `part` (see ClusterPart); for Worker.
  static absl::StatusOr<std::unique_ptr<LocalCluster>> CreatePart(core::TopologyDef def,
                                                                  LocalClusterOptions options,
                                                                  ClusterPart part);
  ~LocalCluster();

  // Starts the executor threads; Open/Prepare run there. Returns the first
  // failure (after stopping everything). Spouts start emitting if `activate`.
  absl::Status Start(bool activate = true);
  void Activate();
  void Deactivate();
  // Clean shutdown (see class comment). Idempotent.
  absl::Status Kill(std::chrono::milliseconds wait);
  // Kill's first half: deactivates the spouts and waits up to `wait` until
  // no tracked tree is pending and Idle(); whether that happened. The
  // executors keep running (Worker stops its senders in between).
  bool DeactivateAndDrain(std::chrono::milliseconds wait);

  // Regroups this part's tasks into the executors `local` without stopping
  // the others (docs/adr/0034-executors-regrouped-in-place.md): the same
  // tasks, only bolt executors may differ. Builds the new executors' queues,
  // publishes a LocalRoutes naming them, calls `follow_others` (which must
  // make the producers outside the executors, the Worker's receiver, follow
  // it before returning), waits up to `wait` for every executor's Transfer
  // to follow it, stops the leaving executors after they executed what was
  // queued for them (no Cleanup), and starts the new ones with the leaving
  // ones' bolt objects. FailedPrecondition (nothing changed) for a
  // regrouping it cannot do in place. Control thread, after Start.
  //
  // With `publish_remote` (which must publish RemoteRoutes naming where the
  // leaving tasks run now), whole bolt executors may instead leave: `local`
  // is a subset of the executors run now and nothing arrives
  // (docs/adr/0035-tasks-leave-a-worker-in-place.md). Then, after the same
  // check: `publish_remote`; a LocalRoutes without the leaving tasks, so
  // every producer sends them to their new worker; `follow_others` and the
  // wait as above; the leaving executors execute what was queued for them,
  // and stop with Cleanup.
  absl::Status Regroup(const std::vector<core::ExecutorInfo>& local,
                       const std::function<void()>& follow_others,
                       std::chrono::milliseconds wait,
                       const std::function<absl::Status()>& publish_remote = nullptr);
  // The executors run now, sorted by start task (any thread).
  std::vector<core::ExecutorInfo> Executors() const;

  LocalClusterStats Stats() const;
  // Nothing in flight: every executor's last pass did nothing, every message
  // sent was consumed, every queue and lane is empty (two identical reads).
  bool Idle() const;
  // Every spout is exhausted, no tracked tuple is pending, and Idle().
  bool Finished() const;
  bool WaitIdle(std::chrono::milliseconds timeout) const;
  bool WaitFinished(std::chrono::milliseconds timeout) const;
  // Storm's trackedWait: waits until spouts have emitted `n` more tuples
  // than at the previous TrackedWait (or start) and the cluster is Idle().
  bool TrackedWait(int64_t n, std::chrono::milliseconds timeout);
  // Emit calls by all spouts so far.
  int64_t SpoutEmitted() const;
  // Waits until every executor has read the clock at or after its current
  // reading, i.e. has seen (and acted on) a fake-clock advance.
  bool WaitForClock(std::chrono::milliseconds timeout) const;

  const core::TaskLayout& layout() const { return layout_; }
  // The shared state of the executors (a Worker wires its network side to it).
  WorkerContext& context() { return *context_; }
  // Items sent to tasks of other workers, summed over executors.
  int64_t RemoteSent() const;
  const std::string& topology_id() const { return context_->topology_id; }
  core::MetricsRegistry& metrics() { return *context_->metrics; }
  std::vector<std::string> RecentErrors() const { return errors_.Recent(); }
  // Errors not yet handed out (the worker process publishes them).
  std::vector<ComponentError> TakeUnpublishedErrors() { return errors_.TakeUnpublished(); }

 private:
  LocalCluster() = default;
  // Create's steps: the validated streams and layout, then the context, the
  // executors of this part and their queues and connections.
  absl::Status Build();
  void BuildContext();
  absl::StatusOr<std::vector<core::ExecutorInfo>> LocalExecutors();
  absl::Status CreateExecutors(const std::vector<core::ExecutorInfo>& local);
  absl::Status WireExecutors();
  ClusterPart part_;
  bool partial_ = false;
  std::vector<Executor*> ShutdownOrder() const;
  // Publishes the current executor_by_task as the next LocalRoutes.
  int64_t PublishLocalRoutes();
  // Regroup's check: which executors leave and which ranges arrive.
  // `tasks_may_leave`: the leaving executors' tasks may go without any
  // arriving (Regroup with publish_remote).
  absl::Status PlanRegroup(const std::vector<core::ExecutorInfo>& local, bool tasks_may_leave,
                           std::vector<BoltExecutor*>& leaving,
                           std::vector<core::ExecutorInfo>& arriving) const;
  // Regroup's wait: every running executor follows LocalRoutes `version`.
  bool WaitLocalVersion(int64_t version, std::chrono::milliseconds wait) const;
  // Regroup's last step: `fresh` take over from `leaving`.
  absl::Status HandOver(const std::vector<BoltExecutor*>& leaving,
                        std::vector<std::unique_ptr<BoltExecutor>>& fresh);
  // Regroup's case of tasks leaving for another worker (see there).
  absl::Status LetLeave(const std::vector<BoltExecutor*>& leaving,
                        const std::function<void()>& follow_others,
                        std::chrono::milliseconds wait,
                        const std::function<absl::Status()>& publish_remote);
  // Moves the stopped executors from executors_ to retired_.
  void Retire(const std::vector<BoltExecutor*>& stopped)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(executors_mu_);

  // One look at the executors' progress counters, for Idle().
  struct ProgressReading {
    int64_t consumed = 0;
    int64_t sent = 0;
    size_t depth = 0;
    bool quiet = true;
    bool operator==(const ProgressReading&) const = default;
  };
  ProgressReading ReadProgress() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(executors_mu_);

  core::TopologyDef def_;
  core::ComponentStreams streams_;
  core::TaskLayout layout_;
  LocalClusterOptions options_;
  std::unique_ptr<core::MetricsRegistry> owned_metrics_;
  ErrorLog errors_;
  std::unique_ptr<WorkerContext> context_;
  // Changed only by Regroup (control thread) under executors_mu_; readers
  // on other threads (Stats, Idle, Finished, RemoteSent) hold it.
  mutable absl::Mutex executors_mu_;
  std::vector<std::unique_ptr<Executor>> executors_;
  // Executors a Regroup replaced: stopped, kept because their counters stay
  // in Idle()'s sums and a late producer may still hold their queue.
  std::vector<std::unique_ptr<Executor>> retired_ ABSL_GUARDED_BY(executors_mu_);
  // Every LocalRoutes published, the newest current (WorkerContext::local).
  std::vector<std::unique_ptr<LocalRoutes>> local_routes_;
  bool started_ = false;
  bool killed_ = false;
  int64_t tracked_base_ = 0;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_LOCAL_CLUSTER_H_
