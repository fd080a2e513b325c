#ifndef TEMPEST_WORKER_EXECUTOR_H_
#define TEMPEST_WORKER_EXECUTOR_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "common/core/clock.h"
#include "common/core/topology/task_layout.h"
#include "worker/ack_lane.h"
#include "worker/transfer.h"
#include "worker/worker_context.h"

namespace tempest::worker {

// Fires tick events every `period` of the (possibly fake) clock; catches up
// after a long stall or a fake-clock jump (at most kMaxCatchUp at once), so
// simulated time behaves like Storm's simulated-time ticks. Executor thread.
class TickTimer {
 public:
  static constexpr int kMaxCatchUp = 16;
  void Start(int64_t period_secs, core::Clock::TimePoint now) {
    period_ = std::chrono::seconds(period_secs);
    enabled_ = period_secs > 0;
    next_ = now + period_;
  }
  bool enabled() const { return enabled_; }
  int64_t period_secs() const {
    return std::chrono::duration_cast<std::chrono::seconds>(period_).count();
  }
  // Number of ticks that fell due by `now`.
  int Due(core::Clock::TimePoint now) {
    if (!enabled_) return 0;
    int n = 0;
    while (now >= next_ && n < kMaxCatchUp) {
      next_ += period_;
      ++n;
    }
    if (now >= next_) next_ = now + period_;  // gave up catching up
    return n;
  }
  core::Clock::TimePoint next() const { return next_; }

 private:
  bool enabled_ = false;
  core::Clock::Duration period_{0};
  core::Clock::TimePoint next_{};
};

// One executor: a thread running a contiguous range of one component's tasks
// (Storm-style), with its inbound side (a bounded ReceiveQueue for bolts and
// ackers, an unbounded AckLane for spouts) and its outbound Transfer.
//
// Lifecycle (control thread unless noted): construct; Build() creates the
// component instances and routers; CreateInbound(); Connect() once every
// executor has its inbound side; Start() runs Setup() (Open/Prepare) on the
// new thread and reports its status through the future, then Loop();
// RequestStop() asks the loop to finish (bolts/ackers: after draining what
// was published to them), Join() waits; Teardown() (Close/Cleanup) runs on
// the executor thread before it exits. Progress counters may be read from any
// thread while it runs.
class Executor {
 public:
  enum class Kind { kSpout, kBolt, kAcker };

  Executor(WorkerContext& ctx, core::ExecutorInfo info, Kind kind);
  virtual ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  Kind kind() const { return kind_; }
  const core::ExecutorInfo& info() const { return info_; }
  int num_tasks() const { return info_.end.value() - info_.start.value() + 1; }

  // Control thread, before Start.
  virtual absl::Status Build() = 0;
  // Tasks this executor may send data to.
  virtual std::vector<api::TaskId> Downstream() const = 0;
  // Spouts get a lane, others a queue with room for `max_producers`.
  absl::Status CreateInbound(size_t max_producers);
  absl::Status Connect();

  ExecutorQueue* queue() { return queue_.get(); }
  // Set by RequestStop(); Transfer gives up blocked remote sends on it.
  const std::atomic<bool>& stop_flag() const { return stop_; }
  AckLane* lane() { return lane_.get(); }

  std::future<absl::Status> Start();
  void RequestStop();
  void Join();

  // Any thread: progress for idle/finished detection (see LocalCluster).
  int64_t sent() const { return sent_.load(std::memory_order_acquire); }
  // Items sent to tasks in other workers.
  int64_t remote_sent() const { return remote_sent_.load(std::memory_order_acquire); }
  int64_t consumed() const { return consumed_.load(std::memory_order_acquire); }
  // The last loop iteration did nothing (no input, no emit).
  bool quiet() const { return quiet_.load(std::memory_order_acquire); }
  // The clock reading of the executor's latest loop iteration (ns).
  int64_t observed_clock_ns() const { return observed_ns_.load(std::memory_order_acquire); }
  // The LocalRoutes version its Transfer sends by (LocalCluster::Regroup).
  int64_t local_version() const { return transfer_.local_version(); }
  // Tracked spout tuples not yet acked or failed.
  virtual int64_t pending() const { return 0; }
  // Spouts: every task's spout says it is exhausted.
  virtual bool exhausted() const { return true; }
  size_t queue_depth() const { return queue_ ? queue_->size() : (lane_ ? lane_->size() : 0); }
  size_t queue_capacity() const;

 protected:
  virtual absl::Status Setup() = 0;
  virtual void Loop() = 0;
  virtual void Teardown() = 0;

  bool stop_requested() const { return stop_.load(std::memory_order_acquire); }
  // Reads the clock once per loop iteration and publishes it.
  core::Clock::TimePoint Now() {
    const core::Clock::TimePoint now = ctx_.clock->Now();
    last_now_ = now;
    return now;
  }
  // Publishes counters after an iteration: `sent` before `consumed`, so a
  // reader that loads consumed then sent never sees an item's consumption
  // without the items it caused.
  void Publish(bool quiet) {
    remote_sent_.store(transfer_.remote_sent(), std::memory_order_relaxed);
    sent_.store(transfer_.sent(), std::memory_order_release);
    consumed_.store(consumed_local_, std::memory_order_release);
    quiet_.store(quiet, std::memory_order_release);
    observed_ns_.store(last_now_.time_since_epoch().count(), std::memory_order_release);
  }
  // A real-clock deadline for parking: the next tick (measured on the
  // executor clock) or max_park, whichever is sooner.
  EventCount::Deadline ParkDeadline(const TickTimer& ticks,
                                    std::chrono::nanoseconds cap) const;

  WorkerContext& ctx_;
  const core::ExecutorInfo info_;
  const Kind kind_;
  Transfer transfer_;
  std::unique_ptr<ExecutorQueue> queue_;
  std::unique_ptr<AckLane> lane_;
  int64_t consumed_local_ = 0;
  core::Clock::TimePoint last_now_{};

 private:
  void ThreadMain(std::promise<absl::Status> ready);

  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> sent_{0};
  std::atomic<int64_t> remote_sent_{0};
  std::atomic<int64_t> consumed_{0};
  std::atomic<bool> quiet_{false};
  std::atomic<int64_t> observed_ns_{0};
};

// Runs `fn` (a call into user code), turning an exception into an Internal
// status naming `what`. Our code throws nothing; user components may.
template <typename Fn>
absl::Status CallUser(const char* what, Fn&& fn) {
  try {
    if constexpr (std::is_same_v<decltype(fn()), absl::Status>) {
      return fn();
    } else {
      fn();
      return absl::OkStatus();
    }
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("exception in ") + what + ": " + e.what());
  } catch (...) {
    return absl::InternalError(std::string("unknown exception in ") + what);
  }
}

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_EXECUTOR_H_
