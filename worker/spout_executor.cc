#include "worker/spout_executor.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/component_executor.h"
#include "worker/wait_strategy.h"

namespace tempest::worker {

// The collector handed to one spout task; forwards to the executor.
class SpoutExecutor::Collector final : public api::SpoutOutputCollector {
 public:
  Collector(SpoutExecutor& executor, Task& task) : executor_(executor), task_(task) {}
  void ReportError(const absl::Status& error) override { executor_.ReportError(task_, error); }
  int64_t PendingCount() const override { return static_cast<int64_t>(task_.pending.size()); }

 protected:
  void DoEmit(const api::StreamId& stream, api::Values values, api::MessageId message_id,
              std::vector<api::TaskId>* task_ids) override {
    executor_.Emit(task_, stream, std::move(values), std::move(message_id), task_ids, std::nullopt);
  }
  void DoEmitDirect(api::TaskId task, const api::StreamId& stream, api::Values values,
                    api::MessageId message_id) override {
    executor_.Emit(task_, stream, std::move(values), std::move(message_id), nullptr, task);
  }

 private:
  SpoutExecutor& executor_;
  Task& task_;
};

SpoutExecutor::SpoutExecutor(WorkerContext& ctx, core::ExecutorInfo info)
    : Executor(ctx, std::move(info), Kind::kSpout),
      random_(std::random_device()() ^ (static_cast<uint64_t>(info_.start.value()) << 32) ^
              static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())),
      budget_(static_cast<size_t>(std::max(1, ctx_.options.spout_burst))) {
  next_root_ = random_.Next();
}

SpoutExecutor::~SpoutExecutor() = default;

absl::Status SpoutExecutor::Build() {
  const core::ComponentDef* def = ctx_.def->FindComponent(info_.component);
  if (def == nullptr) return absl::NotFoundError("unknown spout " + info_.component.value());
  const core::MetricLabels topology_labels{{"topology", ctx_.topology_id}};
  topology_complete_latency_ =
      &ctx_.metrics->GetHistogram("tempest_topology_complete_latency_us", topology_labels);
  topology_emitted_.counter =
      &ctx_.metrics->GetCounter("tempest_topology_spout_emitted_total", topology_labels);
  topology_acked_.counter =
      &ctx_.metrics->GetCounter("tempest_topology_acked_total", topology_labels);
  topology_failed_.counter =
      &ctx_.metrics->GetCounter("tempest_topology_failed_total", topology_labels);
  for (int32_t id = info_.start.value(); id <= info_.end.value(); ++id) {
    auto task = std::make_unique<Task>();
    task->id = api::TaskId(id);
    absl::StatusOr<std::unique_ptr<api::Spout>> spout = ctx_.registry->CreateSpout(def->args);
    if (!spout.ok()) return ComponentCreationError("spout", *def, spout.status());
    task->spout = std::move(*spout);
    TEMPEST_RETURN_IF_ERROR(ConnectTask(ctx_, *task));
    task->collector = std::make_unique<Collector>(*this, *task);
    task->max_pending = task->context->config().GetOptionalInt(api::kTopologyMaxSpoutPending);
    // A spout's acked / failed and complete latency are per stream (the
    // stream its trees are rooted on), as Storm's spout output stats.
    task->router->RegisterSpoutOutcomes(*ctx_.metrics);
    const core::MetricLabels labels{{"component", info_.component.value()},
                                    {"task", std::to_string(task->id.value())}};
    task->stalls = &ctx_.metrics->GetCounter("tempest_spout_max_pending_stalls_total", labels);
    task->stall_log =
        std::make_unique<core::RateLimitedLog>(1, std::chrono::seconds(10), *ctx_.clock);
    tasks_.push_back(std::move(task));
  }
  return absl::OkStatus();
}

std::vector<api::TaskId> SpoutExecutor::Downstream() const { return DownstreamOf(tasks_); }

int64_t SpoutExecutor::pending() const {
  int64_t total = 0;
  for (const auto& task : tasks_) total += task->pending_count.load(std::memory_order_acquire);
  return total;
}

absl::Status SpoutExecutor::Setup() {
  for (auto& task : tasks_) {
    absl::Status s = CallUser("Spout::Open", [&] {
      return task->spout->Open(task->context->config(), *task->context, *task->collector);
    });
    if (!s.ok()) return TaskCallError("spout", info_.component, task->id, "Open", s);
  }
  // Storm gives spouts (and ackers) a tick every message timeout to rotate
  // their pending maps; without ackers nothing is pending.
  if (ctx_.timeouts_enabled && ctx_.acking()) {
    ticks_.Start(ctx_.message_timeout_secs, last_now_);
  }
  return absl::OkStatus();
}

void SpoutExecutor::Teardown() {
  if (active_) SetActive(false);
  for (auto& task : tasks_) {
    absl::Status s = CallUser("Spout::Close", [&] { task->spout->Close(); });
    if (!s.ok()) ReportError(*task, s);
  }
  FlushMetrics();
}

void SpoutExecutor::SetActive(bool active) {
  active_ = active;
  for (auto& task : tasks_) {
    absl::Status s = active ? CallUser("Spout::Activate", [&] { task->spout->Activate(); })
                            : CallUser("Spout::Deactivate", [&] { task->spout->Deactivate(); });
    if (!s.ok()) ReportError(*task, s);
  }
}

void SpoutExecutor::ReportError(Task& task, const absl::Status& error) {
  ctx_.errors->Report(info_.component, task.id.value(), error);
}

void SpoutExecutor::Emit(Task& task, const api::StreamId& stream, api::Values&& values,
                         api::MessageId&& message_id, std::vector<api::TaskId>* task_ids,
                         std::optional<api::TaskId> direct) {
  absl::StatusOr<StreamRoute*> routed = RouteEmit(*task.router, stream, values, direct, targets_);
  if (!routed.ok()) {
    ReportError(task, routed.status());
    return;
  }
  StreamRoute* route = *routed;
  if (task_ids != nullptr) *task_ids = targets_;
  route->emitted.Inc();
  topology_emitted_.Inc();
  ++spout_emitted_local_;
  ++emitted_this_pass_;
  const bool has_id = !message_id.is_nil();
  const bool tracked = has_id && ctx_.acking();
  uint64_t root = 0;
  const size_t n = targets_.size();
  // A tracked tree's edge ids are drawn first: the first tuple that stays in
  // this worker carries the init (their XOR), so it must be known before
  // anything is sent (see Transfer::SendTuple).
  Transfer::CarriedInit init;
  if (tracked) {
    root = NextRoot(task);
    edges_.resize(n);
    for (uint64_t& edge : edges_) {
      edge = random_.NextNonZero();
      init.xor_of_edges ^= edge;
    }
    init.spout_task = task.id.value();
  }
  bool init_carried = false;
  for (size_t i = 0; i < n; ++i) {
    api::TupleAnchors anchors;
    if (tracked) anchors.push_back({api::RootId(root), api::EdgeId(edges_[i])});
    // Each target gets its own tuple (its own acking metadata); the last
    // one takes the values without copying.
    const bool carried =
        transfer_.SendTuple(targets_[i].value(), route->schema, task.id, values, i + 1 == n,
                            std::move(anchors), tracked && !init_carried ? &init : nullptr);
    init_carried = init_carried || carried;
  }
  route->transferred.Inc(static_cast<int64_t>(n));
  if (tracked) {
    TrackTree(task, route, root, init_carried ? std::nullopt : std::optional(init.xor_of_edges),
              std::move(message_id));
  } else if (has_id) {
    // No ackers: Storm acks at emit time. We call Ack right after the
    // NextTuple that emitted it, not re-entrantly from inside Emit.
    ack_now_.push_back(AckNow{std::move(message_id), route});
  }
}

uint64_t SpoutExecutor::NextRoot(Task& task) {
  const uint64_t root = next_root_;
  next_root_ = random_.Next();
  task.pending.Prefetch(next_root_);
  return root;
}

void SpoutExecutor::TrackTree(Task& task, StreamRoute* route, uint64_t root,
                              std::optional<uint64_t> init_to_send, api::MessageId message_id) {
  PendingTuple p;
  // A spout roots its trees on one or a few streams: a short scan.
  while (p.route < task.routes.size() && task.routes[p.route] != route) ++p.route;
  if (p.route == task.routes.size()) task.routes.push_back(route);
  if (message_id.is_int()) {
    p.id = static_cast<uint64_t>(message_id.AsInt());
  } else {
    uint32_t index = static_cast<uint32_t>(boxed_ids_.size());
    if (free_boxed_ids_.empty()) {
      boxed_ids_.push_back(std::move(message_id));
    } else {
      index = free_boxed_ids_.back();
      free_boxed_ids_.pop_back();
      boxed_ids_[index] = std::move(message_id);
    }
    p.id = index;
    p.route |= kBoxedId;
  }
  if ((sample_counter_++ & ((uint64_t{1} << ctx_.options.latency_sample_shift) - 1)) == 0) {
    const auto us = static_cast<uint32_t>(ctx_.clock->Now().time_since_epoch().count() / 1000);
    p.start_us = us == 0 ? 1 : us;  // 0 means "not sampled"
  }
  task.pending.Put(root, p);
  if (!init_to_send.has_value()) return;  // a tuple carries it
  Envelope init;
  init.kind = MessageKind::kAckInit;
  init.root = root;
  init.value = *init_to_send;
  init.spout_task = task.id.value();
  transfer_.SendToAcker(std::move(init));
}

api::MessageId SpoutExecutor::TakeMessageId(const PendingTuple& p) {
  if ((p.route & kBoxedId) == 0) return api::MessageId(static_cast<int64_t>(p.id));
  const auto index = static_cast<uint32_t>(p.id);
  api::MessageId id = std::move(boxed_ids_[index]);
  boxed_ids_[index] = api::MessageId();
  free_boxed_ids_.push_back(index);
  return id;
}

int64_t SpoutExecutor::RunNextTuple(Task& task) {
  emitted_this_pass_ = 0;
  absl::Status s = CallUser("Spout::NextTuple", [&] { task.spout->NextTuple(); });
  if (!s.ok()) ReportError(task, s);
  if (!ack_now_.empty()) {
    for (AckNow& done : ack_now_) {
      absl::Status a = CallUser("Spout::Ack", [&] { task.spout->Ack(done.message_id); });
      if (!a.ok()) ReportError(task, a);
      done.route->acked.Inc();
      topology_acked_.Inc();
    }
    ack_now_.clear();
  }
  return emitted_this_pass_;
}

void SpoutExecutor::DrainLane() {
  if (!lane_->Drain(lane_items_)) return;
  // Each reply's pending entry was written about max.spout.pending trees ago
  // and is cold by now: start loading the entries a few replies ahead.
  constexpr size_t kAhead = 8;
  const size_t n = lane_items_.size();
  auto prefetch = [this](const Envelope& e) {
    if (Task* task = TaskById(e.task)) task->pending.Prefetch(e.root);
  };
  for (size_t i = 0; i < std::min(n, kAhead); ++i) prefetch(lane_items_[i]);
  for (size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetch(lane_items_[i + kAhead]);
    const Envelope& e = lane_items_[i];
    if (e.kind == MessageKind::kSpoutFailAll) {
      // Posted by the worker, not sent by an executor: not counted as
      // consumed, or LocalCluster's idle check would never balance.
      if (Task* task = TaskById(e.task)) FailAllPending(*task);
      continue;
    }
    ++consumed_local_;
    if (Task* task = TaskById(e.task)) HandleReply(*task, e);
  }
  lane_items_.clear();
}

void SpoutExecutor::HandleReply(Task& task, const Envelope& e) {
  if (e.kind == MessageKind::kSpoutReset) {
    task.pending.Touch(e.root);
    return;
  }
  const std::optional<PendingTuple> p = task.pending.Remove(e.root);
  if (!p) return;  // Already timed out (or a duplicate): Storm ignores it.
  StreamRoute* route = RouteOf(task, *p);
  const api::MessageId id = TakeMessageId(*p);
  if (e.kind == MessageKind::kSpoutAck) {
    if (p->start_us != 0) {
      const auto now_us =
          static_cast<uint32_t>(ctx_.clock->Now().time_since_epoch().count() / 1000);
      // Mod 2^32 µs: right for any tree younger than 71 minutes.
      const int64_t us = static_cast<uint32_t>(now_us - p->start_us);
      route->complete_latency->Record(us);
      topology_complete_latency_->Record(us);
    }
    absl::Status s = CallUser("Spout::Ack", [&] { task.spout->Ack(id); });
    if (!s.ok()) ReportError(task, s);
    route->acked.Inc();
    topology_acked_.Inc();
  } else {
    absl::Status s = CallUser("Spout::Fail", [&] { task.spout->Fail(id); });
    if (!s.ok()) ReportError(task, s);
    route->failed.Inc();
    topology_failed_.Inc();
  }
}

void SpoutExecutor::Rotate(Task& task) {
  for (const auto& entry : task.pending.Rotate()) {
    // Not a structured binding: clang (the thread-safety check) does not let
    // a lambda capture one.
    const PendingTuple& p = entry.second;
    StreamRoute* route = RouteOf(task, p);
    const api::MessageId id = TakeMessageId(p);
    absl::Status s = CallUser("Spout::Fail", [&] { task.spout->Fail(id); });
    if (!s.ok()) ReportError(task, s);
    route->failed.Inc();
    topology_failed_.Inc();
  }
}

void SpoutExecutor::FailAllPending(Task& task) {
  // Rotating every bucket out expires every pending tree, each failed as a
  // timeout fails it; acks that still arrive for them are ignored.
  for (int i = 0; i < task.pending.num_buckets(); ++i) Rotate(task);
}

void SpoutExecutor::NoteStall(Task& task) {
  if (task.stalled) return;
  task.stalled = true;
  task.stalls->Add(1);
  uint64_t held = 0;
  if (!task.stall_log->Allow(&held)) return;
  spdlog::info(
      "spout '{}' task {} reached topology.max.spout.pending={} ({} stall(s) since the last "
      "report); waiting for acks",
      info_.component.value(), task.id.value(), *task.max_pending, held + 1);
}

void SpoutExecutor::FlushMetrics() {
  for (auto& task : tasks_) {
    task->router->FlushCounters();
    task->pending_count.store(static_cast<int64_t>(task->pending.size()),
                              std::memory_order_release);
  }
  topology_emitted_.Flush();
  spout_emitted_.store(spout_emitted_local_, std::memory_order_release);
  topology_acked_.Flush();
  topology_failed_.Flush();
}

void SpoutExecutor::Loop() {
  // Idle waits: a few spins and yields (the next NextTuple may well have
  // data), then a bounded park on the lane, which acks wake early.
  const WaitStrategy idle_wait(WaitOptions{.spin_iterations = 32, .yield_iterations = 2});
  // The previous iteration, for the budget: its start and the most NextTuple
  // calls one task made in it (0 after a park: its time says nothing).
  std::chrono::nanoseconds iteration_start = IterationBudget::CoarseNow();
  size_t calls_per_task = 0;
  while (!stop_requested()) {
    const core::Clock::TimePoint now = Now();
    const std::chrono::nanoseconds real_now = IterationBudget::CoarseNow();
    budget_.Observe(calls_per_task, real_now - iteration_start);
    iteration_start = real_now;
    const int64_t consumed_before = consumed_local_;
    DrainLane();
    const bool ticked = RotateDue(now);
    const bool want_active = ctx_.active.load(std::memory_order_acquire);
    if (want_active != active_) SetActive(want_active);
    const Pass pass = active_ ? CallNextTuple(static_cast<int>(budget_.size())) : Pass{};
    calls_per_task = pass.calls_per_task;
    PublishExhausted();
    // Nothing emitted: the spout is about to park (idle flush).
    transfer_.Flush(/*idle=*/pass.emitted == 0);
    FlushMetrics();
    const bool quiet = pass.emitted == 0 && consumed_local_ == consumed_before && !ticked;
    Publish(quiet);
    if (pass.emitted > 0) consecutive_idle_ = 0;
    if (pass.emitted > 0 || stop_requested()) continue;
    calls_per_task = 0;  // about to park
    ParkIdle(idle_wait, pass.all_stalled);
  }
}

bool SpoutExecutor::RotateDue(core::Clock::TimePoint now) {
  bool ticked = false;
  for (int n = ticks_.Due(now); n > 0; --n) {
    ticked = true;
    for (auto& task : tasks_) Rotate(*task);
  }
  return ticked;
}

SpoutExecutor::Pass SpoutExecutor::CallNextTuple(int burst) {
  Pass pass;
  pass.all_stalled = !tasks_.empty();
  for (auto& task : tasks_) {
    if (task->max_pending && static_cast<int64_t>(task->pending.size()) >= *task->max_pending) {
      NoteStall(*task);
      continue;
    }
    task->stalled = false;
    pass.all_stalled = false;
    size_t calls = 0;
    for (int i = 0; i < burst; ++i) {
      if (i > 0 && task->max_pending &&
          static_cast<int64_t>(task->pending.size()) >= *task->max_pending) {
        break;
      }
      const int64_t got = RunNextTuple(*task);
      ++calls;
      pass.emitted += got;
      if (got == 0) break;
    }
    pass.calls_per_task = std::max(pass.calls_per_task, calls);
  }
  return pass;
}

void SpoutExecutor::PublishExhausted() {
  bool all_exhausted = true;
  for (auto& task : tasks_) {
    bool done = false;
    absl::Status s = CallUser("Spout::IsExhausted", [&] { done = task->spout->IsExhausted(); });
    if (!s.ok() || !done) all_exhausted = false;
  }
  exhausted_.store(all_exhausted, std::memory_order_release);
}

void SpoutExecutor::ParkIdle(const WaitStrategy& idle_wait, bool all_stalled) {
  const auto idle_park =
      std::chrono::duration_cast<std::chrono::nanoseconds>(ctx_.options.spout_idle_park);
  const auto max_park = std::chrono::duration_cast<std::chrono::nanoseconds>(ctx_.options.max_park);
  // Nothing emitted: wait for acks, the next tick, a state change, or (if
  // merely idle) the short spout idle period.
  // Progressive idle wait (as Storm 2's progressive spout wait strategy):
  // a spout that just went quiet (e.g. a rate-limited one between two
  // tuples) is re-polled after a short park; one that stays quiet backs
  // off to spout_idle_park.
  ++consecutive_idle_;
  const std::chrono::nanoseconds idle =
      consecutive_idle_ <= kShortIdlePasses ? std::min(kShortIdlePark, idle_park) : idle_park;
  const std::chrono::nanoseconds cap =
      (all_stalled || !active_) ? max_park : std::min(idle, max_park);
  const EventCount::Deadline deadline = ParkDeadline(ticks_, cap);
  idle_wait.Await(
      lane_->event(),
      [&] {
        return !lane_->empty() || stop_requested() ||
               ctx_.active.load(std::memory_order_acquire) != active_;
      },
      deadline);
}

}  // namespace tempest::worker
