#include "worker/executor.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/os/limits.h"
#include "spdlog/spdlog.h"

namespace tempest::worker {
namespace {

// How an acker waits for messages: a quarter of the default spin, then
// yields (WaitStrategy; why in Executor::CreateInbound).
constexpr WaitOptions kAckerWait{.spin_iterations = 64, .yield_iterations = 64};

}  // namespace

Executor::Executor(WorkerContext& ctx, core::ExecutorInfo info, Kind kind)
    : ctx_(ctx), info_(std::move(info)), kind_(kind), transfer_(ctx, this) {}

Executor::~Executor() {
  if (thread_.joinable()) {
    RequestStop();
    thread_.join();
  }
}

absl::Status Executor::CreateInbound(size_t max_producers) {
  if (kind_ == Kind::kSpout) {
    lane_ = std::make_unique<AckLane>();
    return absl::OkStatus();
  }
  ReceiveQueueOptions options;
  options.ring_capacity = ctx_.options.ring_capacity;
  options.batch_size = ctx_.options.batch_size;
  options.max_producers = std::max<size_t>(max_producers, 1);
  // An acker does a few nanoseconds of work per message and waits the rest
  // of the time. With its spout and bolts there are often more busy threads
  // than cores, so a long pause-spin holds a core the spout needs; a yield
  // hands it over at once (and returns at once when nothing else wants it).
  // Measured in docs/benchmarks.md, "The acker yields".
  if (kind_ == Kind::kAcker) options.consumer_wait = kAckerWait;
  ASSIGN_OR_RETURN(queue_, ExecutorQueue::Create(options));
  return absl::OkStatus();
}

absl::Status Executor::Connect() {
  return transfer_.Connect(Downstream(), /*to_spout_lanes=*/kind_ == Kind::kAcker);
}

size_t Executor::queue_capacity() const {
  // Ring slots summed over the producers that may write to it.
  return queue_ ? ctx_.options.ring_capacity : 0;
}

std::future<absl::Status> Executor::Start() {
  // Shared, so that a thread that never starts still fulfils the promise.
  auto ready = std::make_shared<std::promise<absl::Status>>();
  std::future<absl::Status> result = ready->get_future();
  absl::Status started =
      os::StartThread(thread_,
                      absl::StrCat("executor ", info_.component.value(), " [", info_.start.value(),
                                   ", ", info_.end.value(), "]"),
                      [this, ready] { ThreadMain(std::move(*ready)); });
  if (!started.ok()) ready->set_value(std::move(started));
  return result;
}

void Executor::ThreadMain(std::promise<absl::Status> ready) {
  last_now_ = ctx_.clock->Now();
  absl::Status status = Setup();
  const bool ok = status.ok();
  ready.set_value(std::move(status));
  if (ok) Loop();
  transfer_.Flush();
  Teardown();
  transfer_.Flush();
  Publish(true);
}

void Executor::RequestStop() {
  stop_.store(true, std::memory_order_release);
  if (queue_) queue_->Close();
  if (lane_) lane_->event().Notify();
}

void Executor::Join() {
  if (thread_.joinable()) thread_.join();
}

EventCount::Deadline Executor::ParkDeadline(const TickTimer& ticks,
                                            std::chrono::nanoseconds cap) const {
  std::chrono::nanoseconds wait = cap;
  if (ticks.enabled()) {
    const auto to_tick = ticks.next() - last_now_;
    wait = std::min<std::chrono::nanoseconds>(
        wait, std::max<std::chrono::nanoseconds>(to_tick, std::chrono::nanoseconds(0)));
  }
  return std::chrono::steady_clock::now() + wait;
}

}  // namespace tempest::worker
