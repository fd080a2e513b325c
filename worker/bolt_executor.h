#ifndef TEMPEST_WORKER_BOLT_EXECUTOR_H_
#define TEMPEST_WORKER_BOLT_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/api/bolt.h"
#include "common/core/metrics_registry.h"
#include "worker/executor.h"
#include "worker/fast_random.h"
#include "worker/iteration_budget.h"
#include "worker/task_router.h"

namespace tempest::worker {

// Runs the tasks of one bolt component (Storm's BoltExecutor).
//
// Loop, on its own thread: deliver due tick tuples (component "__system",
// stream "__tick", every topology.tick.tuple.freq.secs of the component's
// merged config) to each task; drain up to ExecutorOptions::drain_batch
// envelopes from the receive queue (fewer for a slow bolt: IterationBudget
// keeps an iteration near 200 ms) and call Execute for each in place (no
// copy out of the ring); flush the outbound batches and the statistics
// counts; park on the queue (until input or the next tick) when it was
// empty. Tasks whose bolt asks for polling (Bolt::PollInterval) are polled
// after each pass, and the park is capped at the shortest interval; their
// Bolt::SetPollWaker wakes the park.
//
// Acking (storm-facts.md §3.1): an emit anchored to inputs gets, per target
// task and per anchor, a fresh random edge id e: the anchor's ack value ^= e
// and the new tuple carries root -> xor(e) for each of the anchor's roots.
// Ack(input) sends `__ack_ack` [root, edge ^ ack_val] per root to the acker
// (root mod #ackers); Fail sends `__ack_fail`; ResetTimeout sends
// `__ack_reset_timeout`. A spout's tuple from this worker may carry its
// tree's init (api::Tuple::CarryInit): its ack then goes as `__ack_init`
// [root, edge ^ ack_val, spout task], and a fail or reset first sends the
// init on its own (HandOnCarriedInit). A throwing Execute fails its input and reports an
// error; the executor keeps running.
//
// Metrics, per task and input stream (source component, stream: Storm's
// bolt input stats): executed, acked, failed, execute latency (sampled, 1 in
// 2^latency_sample_shift) and process latency (input arrival in Execute to
// its Ack, when acked within Execute); emitted / transferred per task and
// output stream. Counts are published at the end of every iteration and, on
// a sampled tuple, whenever kStatsFlushInterval passed since the last time,
// so they reach the heartbeat at least about once a second however slow the
// bolt (see IterationBudget).
//
// Hand-over (LocalCluster::Regroup, docs/adr/0034-executors-regrouped-in-place.md):
// StopForHandOver() ends the loop like RequestStop (what was published to
// the queue is executed first) but skips Cleanup; TakeTasks() then gives
// each task's bolt object, context, router, collector and counters to an
// executor built with them as `adopted`, which does not Prepare them again,
// so the bolt's state survives a regrouping.
class BoltExecutor final : public Executor {
 public:
  struct Task;
  // Tasks handed over by stopped executors, by task id.
  using TaskPool = std::map<int32_t, std::unique_ptr<Task>>;

  BoltExecutor(WorkerContext& ctx, core::ExecutorInfo info);
  ~BoltExecutor() override;

  absl::Status Build() override;
  std::vector<api::TaskId> Downstream() const override;

  // Control thread: stop after draining the queue, without Cleanup.
  void StopForHandOver() {
    handing_over_.store(true, std::memory_order_release);
    RequestStop();
  }
  // Control thread, after Join() of a StopForHandOver: moves the tasks out.
  void TakeTasks(TaskPool& pool);
  // Control thread, before Build: Build takes the range's tasks from `pool`
  // (they must all be there) instead of creating and preparing new bolts.
  void Adopt(TaskPool& pool) { adopted_ = &pool; }

 private:
  class Collector;
  // The counters of one input stream of one task. Tuples of a stream share
  // one interned schema, so finding them is a pointer compare per tuple
  // (InputOf); `schema` keeps that schema alive so its address is not reused.
  struct InputCounters {
    std::shared_ptr<const api::StreamSchema> schema;
    LocalCounter executed;
    LocalCounter acked;
    LocalCounter failed;
    core::Histogram* execute_latency = nullptr;
    core::Histogram* process_latency = nullptr;
  };

 public:
  struct Task {
    Task();
    ~Task();  // out of line: Collector is complete only in the .cc
    api::TaskId id;
    std::unique_ptr<api::Bolt> bolt;
    std::unique_ptr<api::TopologyContext> context;
    std::unique_ptr<TaskRouter> router;
    std::unique_ptr<Collector> collector;
    std::vector<std::unique_ptr<InputCounters>> inputs;
    InputCounters* last_input = nullptr;
  };

 private:
  absl::Status Setup() override;
  void Loop() override;
  void Teardown() override;

  void Process(Envelope& e);
  // Polls the bolts that asked for it; returns true if any made progress.
  bool PollTasks();
  void Execute(Task& task, const api::Tuple& input);
  // The counters of `input`'s stream, registered on first sight.
  InputCounters& InputOf(Task& task, const api::Tuple& input);
  void FlushMetrics();
  // Build's step for an executor built with adopted tasks.
  absl::Status AdoptTasks();

  // Collector entry points.
  void Emit(Task& task, const api::StreamId& stream, std::span<const api::Tuple> anchors,
            api::Values&& values, std::vector<api::TaskId>* task_ids,
            std::optional<api::TaskId> direct);
  void Ack(Task& task, const api::Tuple& input);
  void Fail(Task& task, const api::Tuple& input);
  void ResetTimeout(Task& task, const api::Tuple& input);
  // Sends the tree init `input` carries, if any, as an init of its own
  // (before a fail or a timeout reset, which the acker can only pass on
  // once it knows the spout task).
  void HandOnCarriedInit(const api::Tuple& input);
  void ReportError(Task& task, const absl::Status& error);

  Task* TaskById(int32_t id) {
    const int32_t i = id - info_.start.value();
    return i >= 0 && i < static_cast<int32_t>(tasks_.size()) ? tasks_[i].get() : nullptr;
  }

  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<Task*> polled_tasks_;
  std::optional<std::chrono::nanoseconds> poll_interval_;
  TickTimer ticks_;
  FastRandom random_;
  std::vector<api::TaskId> targets_;  // scratch
  std::vector<Envelope> local_batch_;
  uint64_t sample_counter_ = 0;
  // The input whose Execute is running, to measure process latency when it
  // is acked before Execute returns (identified by its values' address).
  const api::Values* current_input_ = nullptr;
  int64_t current_start_ns_ = 0;
  InputCounters* current_counters_ = nullptr;
  core::Counter* tick_counter_ = nullptr;
  // Executor clock (ns) by which a sampled Execute publishes the counts
  // even in the middle of a batch: a bolt that turns slow mid-batch.
  int64_t stats_due_ns_ = 0;
  IterationBudget budget_;
  TaskPool* adopted_ = nullptr;  // Build's source of tasks, if any
  bool prepared_ = false;        // the tasks were adopted: Prepare ran already
  std::atomic<bool> handing_over_{false};
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_BOLT_EXECUTOR_H_
