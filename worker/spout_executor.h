#ifndef TEMPEST_WORKER_SPOUT_EXECUTOR_H_
#define TEMPEST_WORKER_SPOUT_EXECUTOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/api/spout.h"
#include "common/core/metrics_registry.h"
#include "common/core/rate_limited_log.h"
#include "common/core/rotating_map.h"
#include "worker/executor.h"
#include "worker/fast_random.h"
#include "worker/iteration_budget.h"
#include "worker/task_router.h"
#include "worker/wait_strategy.h"

namespace tempest::worker {

// Runs the tasks of one spout component (Storm's SpoutExecutor).
//
// Loop, on its own thread: drain the ack lane (acker replies -> Spout::Ack /
// Fail, reset -> restart the tree's timeout); on a tick (every
// topology.message.timeout.secs, when timeouts are on) rotate each task's
// 2-bucket pending map and fail what fell out; follow activate/deactivate;
// then, when active, call NextTuple on each task up to
// ExecutorOptions::spout_burst times while it emits (fewer for a slow spout:
// IterationBudget keeps an iteration near 200 ms, as the counts and the
// emitted tuples are flushed once per iteration), skipping a task whose
// tracked pending count reached topology.max.spout.pending (counted in
// tempest_spout_max_pending_stalls_total and logged at most every 10 s).
// When a pass emitted nothing it parks on the lane (1 ms if idle, until an
// ack or the next tick if stalled).
//
// A spout executor never waits on its own inbound side: acker replies arrive
// through the unbounded lane, so while it is blocked pushing into a full
// bolt queue the ack cycle still drains (ADR 0003).
//
// Acking (storm-facts.md §3.1): an emit with a message id, when ackers run,
// gets a random root id and a random edge id per target task; the spout
// records the root as pending and sends `__ack_init` [root, xor of edges,
// task] to acker (root mod #ackers). With topology.acker.executors = 0 the
// spout's Ack is called right after the NextTuple that emitted it.
class SpoutExecutor final : public Executor {
 public:
  SpoutExecutor(WorkerContext& ctx, core::ExecutorInfo info);
  ~SpoutExecutor() override;

  absl::Status Build() override;
  std::vector<api::TaskId> Downstream() const override;
  int64_t pending() const override;
  bool exhausted() const override { return exhausted_.load(std::memory_order_acquire); }
  // Emit calls so far (published once per loop iteration).
  int64_t spout_emitted() const { return spout_emitted_.load(std::memory_order_acquire); }

 private:
  class Collector;
  // A tracked tree, 16 bytes so that a pending-map slot is 32: the map is
  // touched once per emit and once per ack, ~max.spout.pending trees apart,
  // so each touch is a cache miss and the slot size sets how many there are.
  struct PendingTuple {
    // The message id itself when it is an integer (the common case; the
    // Value is rebuilt for Ack/Fail), else its index in boxed_ids_.
    uint64_t id = 0;
    // Index in Task::routes of the stream the tree is rooted on, with
    // kBoxedId set when `id` is an index into boxed_ids_.
    uint32_t route = 0;
    uint32_t start_us = 0;  // Clock time in µs mod 2^32; 0: not sampled
  };
  static constexpr uint32_t kBoxedId = 1u << 31;
  struct AckNow {
    api::MessageId message_id;
    StreamRoute* route = nullptr;
  };
  struct Task {
    api::TaskId id;
    std::unique_ptr<api::Spout> spout;
    std::unique_ptr<api::TopologyContext> context;
    std::unique_ptr<TaskRouter> router;
    std::unique_ptr<Collector> collector;
    core::RotatingIdMap<PendingTuple> pending{2};
    std::vector<StreamRoute*> routes;  // PendingTuple::route indexes this
    std::optional<int64_t> max_pending;
    bool stalled = false;
    // The first stall, then at most one line per 10 s (executor clock).
    std::unique_ptr<core::RateLimitedLog> stall_log;
    std::atomic<int64_t> pending_count{0};
    core::Counter* stalls = nullptr;
  };

  absl::Status Setup() override;
  void Loop() override;
  void Teardown() override;

  // What one pass of NextTuple calls did.
  struct Pass {
    int64_t emitted = 0;
    size_t calls_per_task = 0;  // the most NextTuple calls one task made
    bool all_stalled = false;   // every task at topology.max.spout.pending
  };

  // Loop's steps, once per iteration.
  // Rotates the pending maps once per tick due; whether any was.
  bool RotateDue(core::Clock::TimePoint now);
  // Up to `burst` NextTuple calls per task while it emits (active only).
  Pass CallNextTuple(int burst);
  // Asks every task IsExhausted; publishes whether all are.
  void PublishExhausted();
  // Parks on the lane after a pass that emitted nothing.
  void ParkIdle(const WaitStrategy& idle_wait, bool all_stalled);

  void DrainLane();
  // One acker reply (ack, fail or reset) for a tree of `task`.
  void HandleReply(Task& task, const Envelope& e);
  void Rotate(Task& task);
  // Fails every pending tree of `task` at once (MessageKind::kSpoutFailAll).
  void FailAllPending(Task& task);
  // Pending-map entries: records a tree emitted with `message_id` (and
  // sends `init_to_send`, its init, to the acker unless one of its tuples
  // carries it), and takes the id back out of one.
  void TrackTree(Task& task, StreamRoute* route, uint64_t root,
                 std::optional<uint64_t> init_to_send, api::MessageId message_id);
  api::MessageId TakeMessageId(const PendingTuple& p);
  StreamRoute* RouteOf(Task& task, const PendingTuple& p) const {
    return task.routes[p.route & ~kBoxedId];
  }
  // The root id for the next tracked emit of `task`; draws the one after it
  // now and prefetches its pending-map slot, so the next Put does not stall
  // on the miss.
  uint64_t NextRoot(Task& task);
  void SetActive(bool active);
  // Returns the number of emits it caused.
  int64_t RunNextTuple(Task& task);
  void NoteStall(Task& task);
  void FlushMetrics();

  // Collector entry points.
  // Rvalue references: the collector's by-value arguments are handed down
  // without another move of each (per tuple).
  void Emit(Task& task, const api::StreamId& stream, api::Values&& values,
            api::MessageId&& message_id, std::vector<api::TaskId>* task_ids,
            std::optional<api::TaskId> direct);
  void ReportError(Task& task, const absl::Status& error);

  Task* TaskById(int32_t id) {
    const int32_t i = id - info_.start.value();
    return i >= 0 && i < static_cast<int32_t>(tasks_.size()) ? tasks_[i].get() : nullptr;
  }

  std::vector<std::unique_ptr<Task>> tasks_;
  TickTimer ticks_;
  bool active_ = false;
  std::atomic<bool> exhausted_{false};
  FastRandom random_;
  std::vector<api::TaskId> targets_;  // scratch
  std::vector<uint64_t> edges_;       // scratch: a tracked emit's edge ids
  std::vector<Envelope> lane_items_;  // scratch
  uint64_t next_root_ = 0;            // see NextRoot()
  // Non-integer message ids of pending trees, and the free indexes in it.
  std::vector<api::MessageId> boxed_ids_;
  std::vector<uint32_t> free_boxed_ids_;
  std::vector<AckNow> ack_now_;  // ackers = 0: ack after NextTuple
  static constexpr int kShortIdlePasses = 100;
  static constexpr std::chrono::nanoseconds kShortIdlePark{50'000};
  int consecutive_idle_ = 0;
  int64_t emitted_this_pass_ = 0;
  int64_t spout_emitted_local_ = 0;
  std::atomic<int64_t> spout_emitted_{0};
  IterationBudget budget_;  // NextTuple calls per task and iteration
  uint64_t sample_counter_ = 0;
  core::Histogram* topology_complete_latency_ = nullptr;
  LocalCounter topology_emitted_;
  LocalCounter topology_acked_;
  LocalCounter topology_failed_;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_SPOUT_EXECUTOR_H_
