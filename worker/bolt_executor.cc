#include "worker/bolt_executor.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "worker/component_executor.h"

namespace tempest::worker {
namespace {

// How often a busy bolt publishes its counts at the latest.
constexpr std::chrono::nanoseconds kStatsFlushInterval = std::chrono::seconds(1);

}  // namespace

// The collector handed to one bolt task; forwards to the executor.
class BoltExecutor::Collector final : public api::OutputCollector {
 public:
  Collector(BoltExecutor& executor, Task& task) : executor_(&executor), task_(task) {}
  void Ack(const api::Tuple& input) override { executor_->Ack(task_, input); }
  void Fail(const api::Tuple& input) override { executor_->Fail(task_, input); }
  void ResetTimeout(const api::Tuple& input) override { executor_->ResetTimeout(task_, input); }
  void ReportError(const absl::Status& error) override { executor_->ReportError(task_, error); }
  // The task was handed to `executor` (control thread, neither running).
  void Rebind(BoltExecutor& executor) { executor_ = &executor; }

 protected:
  void DoEmit(const api::StreamId& stream, std::span<const api::Tuple> anchors, api::Values values,
              std::vector<api::TaskId>* task_ids) override {
    executor_->Emit(task_, stream, anchors, std::move(values), task_ids, std::nullopt);
  }
  void DoEmitDirect(api::TaskId task, const api::StreamId& stream,
                    std::span<const api::Tuple> anchors, api::Values values) override {
    executor_->Emit(task_, stream, anchors, std::move(values), nullptr, task);
  }

 private:
  BoltExecutor* executor_;
  Task& task_;
};

BoltExecutor::Task::Task() = default;
BoltExecutor::Task::~Task() = default;

BoltExecutor::BoltExecutor(WorkerContext& ctx, core::ExecutorInfo info)
    : Executor(ctx, std::move(info), Kind::kBolt),
      random_(std::random_device()() ^ (static_cast<uint64_t>(info_.start.value()) << 40) ^
              static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())),
      budget_(ctx_.options.drain_batch) {}

BoltExecutor::~BoltExecutor() = default;

absl::Status BoltExecutor::Build() {
  const core::ComponentDef* def = ctx_.def->FindComponent(info_.component);
  if (def == nullptr) return absl::NotFoundError("unknown bolt " + info_.component.value());
  const core::MetricLabels component_labels{{"component", info_.component.value()}};
  tick_counter_ = &ctx_.metrics->GetCounter("tempest_ticks_total", component_labels);
  if (adopted_ != nullptr) return AdoptTasks();
  for (int32_t id = info_.start.value(); id <= info_.end.value(); ++id) {
    auto task = std::make_unique<Task>();
    task->id = api::TaskId(id);
    absl::StatusOr<std::unique_ptr<api::Bolt>> bolt = ctx_.registry->CreateBolt(def->args);
    if (!bolt.ok()) return ComponentCreationError("bolt", *def, bolt.status());
    task->bolt = std::move(*bolt);
    TEMPEST_RETURN_IF_ERROR(ConnectTask(ctx_, *task));
    task->collector = std::make_unique<Collector>(*this, *task);
    tasks_.push_back(std::move(task));
  }
  return absl::OkStatus();
}

absl::Status BoltExecutor::AdoptTasks() {
  for (int32_t id = info_.start.value(); id <= info_.end.value(); ++id) {
    auto it = adopted_->find(id);
    if (it == adopted_->end()) {
      return absl::InternalError(
          absl::StrCat("no executor handed over task ", id, " of ", info_.component.value()));
    }
    it->second->collector->Rebind(*this);
    tasks_.push_back(std::move(it->second));
    adopted_->erase(it);
  }
  adopted_ = nullptr;
  prepared_ = true;
  return absl::OkStatus();
}

void BoltExecutor::TakeTasks(TaskPool& pool) {
  for (auto& task : tasks_) {
    const int32_t id = task->id.value();
    pool[id] = std::move(task);
  }
  tasks_.clear();
  polled_tasks_.clear();
}

std::vector<api::TaskId> BoltExecutor::Downstream() const { return DownstreamOf(tasks_); }

absl::Status BoltExecutor::Setup() {
  for (auto& task : tasks_) {
    if (queue_ != nullptr) task->bolt->SetPollWaker([queue = queue_.get()] { queue->Wake(); });
    if (prepared_) continue;  // handed over by a regrouping: same object, same state
    absl::Status s = CallUser("Bolt::Prepare", [&] {
      return task->bolt->Prepare(task->context->config(), *task->context, *task->collector);
    });
    if (!s.ok()) return TaskCallError("bolt", info_.component, task->id, "Prepare", s);
  }
  for (auto& task : tasks_) {
    std::optional<std::chrono::milliseconds> interval = task->bolt->PollInterval();
    if (!interval) continue;
    polled_tasks_.push_back(task.get());
    const auto wait = std::max<std::chrono::nanoseconds>(*interval, std::chrono::milliseconds(1));
    poll_interval_ = poll_interval_ ? std::min(*poll_interval_, wait) : wait;
  }
  // Per-component config overrides the topology's (merged in the context).
  if (!tasks_.empty()) {
    std::optional<int64_t> freq =
        tasks_.front()->context->config().GetOptionalInt(api::kTopologyTickTupleFreqSecs);
    if (freq && *freq > 0) ticks_.Start(*freq, last_now_);
  }
  return absl::OkStatus();
}

void BoltExecutor::Teardown() {
  if (handing_over_.load(std::memory_order_acquire)) {
    // The tasks live on in the executor that adopts them.
    FlushMetrics();
    return;
  }
  for (auto& task : tasks_) {
    absl::Status s = CallUser("Bolt::Cleanup", [&] { task->bolt->Cleanup(); });
    if (!s.ok()) ReportError(*task, s);
  }
  FlushMetrics();
}

void BoltExecutor::ReportError(Task& task, const absl::Status& error) {
  ctx_.errors->Report(info_.component, task.id.value(), error);
}

BoltExecutor::InputCounters& BoltExecutor::InputOf(Task& task, const api::Tuple& input) {
  const api::StreamSchema* schema = input.schema().get();
  if (task.last_input != nullptr && task.last_input->schema.get() == schema) {
    return *task.last_input;
  }
  for (auto& in : task.inputs) {
    if (in->schema.get() == schema) return *(task.last_input = in.get());
  }
  // First tuple of this stream (or a second schema object of the same
  // stream, which shares the series): a registry lookup, once.
  auto in = std::make_unique<InputCounters>();
  in->schema = input.schema();
  const core::MetricLabels labels{{"component", info_.component.value()},
                                  {"task", std::to_string(task.id.value())},
                                  {"input_component", schema->component.value()},
                                  {"input_stream", schema->stream.value()}};
  in->executed.counter = &ctx_.metrics->GetCounter("tempest_executed_total", labels);
  in->acked.counter = &ctx_.metrics->GetCounter("tempest_acked_total", labels);
  in->failed.counter = &ctx_.metrics->GetCounter("tempest_failed_total", labels);
  in->execute_latency = &ctx_.metrics->GetHistogram("tempest_execute_latency_us", labels);
  in->process_latency = &ctx_.metrics->GetHistogram("tempest_process_latency_us", labels);
  task.inputs.push_back(std::move(in));
  return *(task.last_input = task.inputs.back().get());
}

void BoltExecutor::Execute(Task& task, const api::Tuple& input) {
  InputCounters& counters = InputOf(task, input);
  const bool sample =
      (sample_counter_++ & ((uint64_t{1} << ctx_.options.latency_sample_shift) - 1)) == 0;
  int64_t start = 0;
  if (sample) {
    start = ctx_.clock->Now().time_since_epoch().count();
    current_input_ = &input.values();
    current_counters_ = &counters;
    current_start_ns_ = start;
  }
  absl::Status s = CallUser("Bolt::Execute", [&] { task.bolt->Execute(input); });
  counters.executed.Inc();
  if (sample) {
    const int64_t end = ctx_.clock->Now().time_since_epoch().count();
    counters.execute_latency->Record((end - start) / 1000);
    current_input_ = nullptr;
    // The clock was read anyway: a bolt that turned slow within a batch
    // still publishes its counts about once a second.
    if (end >= stats_due_ns_) {
      FlushMetrics();
      stats_due_ns_ = end + kStatsFlushInterval.count();
    }
  }
  if (!s.ok()) {
    ReportError(task, s);
    Fail(task, input);
  }
}

void BoltExecutor::Process(Envelope& e) {
  ++consumed_local_;
  Task* task = TaskById(e.task);
  if (task == nullptr || e.kind != MessageKind::kTuple) return;
  Execute(*task, e.tuple);
  // Drop the input here rather than leave it in its ring slot: otherwise the
  // producer frees it when it overwrites the slot, and the producer (a spout,
  // usually) is the busiest thread of the topology.
  e.tuple = api::Tuple();
}

bool BoltExecutor::PollTasks() {
  bool progress = false;
  for (Task* task : polled_tasks_) {
    bool task_progress = false;
    absl::Status s = CallUser("Bolt::Poll", [&] { task_progress = task->bolt->Poll(); });
    if (!s.ok()) ReportError(*task, s);
    progress = progress || task_progress;
  }
  return progress;
}

void BoltExecutor::Emit(Task& task, const api::StreamId& stream,
                        std::span<const api::Tuple> anchors, api::Values&& values,
                        std::vector<api::TaskId>* task_ids, std::optional<api::TaskId> direct) {
  absl::StatusOr<StreamRoute*> routed = RouteEmit(*task.router, stream, values, direct, targets_);
  if (!routed.ok()) {
    ReportError(task, routed.status());
    return;
  }
  StreamRoute* route = *routed;
  if (task_ids != nullptr) *task_ids = targets_;
  route->emitted.Inc();
  const bool acking = ctx_.acking();
  const size_t n = targets_.size();
  for (size_t i = 0; i < n; ++i) {
    api::TupleAnchors out;
    if (acking) {
      for (const api::Tuple& anchor : anchors) {
        // Untracked inputs (and ticks) carry no trees: nothing to extend,
        // and their body may be shared by several receiving tasks.
        if (!anchor.valid() || anchor.anchors().empty()) continue;
        const uint64_t edge = random_.NextNonZero();
        anchor.XorAckVal(edge);
        for (const api::TupleAnchor& a : anchor.anchors()) {
          auto it = std::find_if(out.begin(), out.end(),
                                 [&](const api::TupleAnchor& o) { return o.root == a.root; });
          if (it == out.end()) {
            out.push_back({a.root, api::EdgeId(edge)});
          } else {
            it->edge = api::EdgeId(it->edge.value() ^ edge);
          }
        }
      }
    }
    // The last target takes the values without copying.
    transfer_.SendTuple(targets_[i].value(), route->schema, task.id, values, i + 1 == n,
                        std::move(out));
  }
  route->transferred.Inc(static_cast<int64_t>(n));
}

void BoltExecutor::Ack(Task& task, const api::Tuple& input) {
  if (!input.valid()) return;
  if (ctx_.acking()) {
    // A tuple that carries its tree's init (a spout's, from this worker)
    // has exactly one anchor: its ack goes as the init, with the init's
    // XOR already in ack_val.
    const int32_t carried_init_task = input.carried_init_task();
    for (const api::TupleAnchor& a : input.anchors()) {
      Envelope e;
      e.kind = carried_init_task >= 0 ? MessageKind::kAckInit : MessageKind::kAckAck;
      e.root = a.root.value();
      e.value = a.edge.value() ^ input.ack_val();
      if (carried_init_task >= 0) e.spout_task = carried_init_task;
      transfer_.SendToAcker(std::move(e));
    }
    if (carried_init_task >= 0) input.ClearCarriedInit();
  }
  InputCounters& counters = InputOf(task, input);
  counters.acked.Inc();
  if (current_input_ == &input.values()) {
    current_counters_->process_latency->Record(
        (ctx_.clock->Now().time_since_epoch().count() - current_start_ns_) / 1000);
    current_input_ = nullptr;
  }
}

void BoltExecutor::HandOnCarriedInit(const api::Tuple& input) {
  const int32_t spout_task = input.carried_init_task();
  if (spout_task < 0) return;
  // The XOR sent is the init's and that of the tuples emitted anchored to
  // the input so far, without the input's own edge: the tree stays open
  // (its value holds that edge) until the input's ack or fail.
  for (const api::TupleAnchor& a : input.anchors()) {
    Envelope e;
    e.kind = MessageKind::kAckInit;
    e.root = a.root.value();
    e.value = input.ack_val();
    e.spout_task = spout_task;
    transfer_.SendToAcker(std::move(e));
  }
  input.ClearCarriedInit();
}

void BoltExecutor::Fail(Task& task, const api::Tuple& input) {
  if (!input.valid()) return;
  if (ctx_.acking()) {
    // The acker reports a failure only to a known spout task.
    HandOnCarriedInit(input);
    for (const api::TupleAnchor& a : input.anchors()) {
      Envelope e;
      e.kind = MessageKind::kAckFail;
      e.root = a.root.value();
      transfer_.SendToAcker(std::move(e));
    }
  }
  InputOf(task, input).failed.Inc();
}

void BoltExecutor::ResetTimeout(Task& task, const api::Tuple& input) {
  (void)task;
  if (!input.valid() || !ctx_.acking()) return;
  // The acker forwards a reset only to a known spout task.
  HandOnCarriedInit(input);
  for (const api::TupleAnchor& a : input.anchors()) {
    Envelope e;
    e.kind = MessageKind::kAckReset;
    e.root = a.root.value();
    transfer_.SendToAcker(std::move(e));
  }
}

void BoltExecutor::FlushMetrics() {
  for (auto& task : tasks_) {
    task->router->FlushCounters();
    for (auto& in : task->inputs) {
      in->executed.Flush();
      in->acked.Flush();
      in->failed.Flush();
    }
  }
}

void BoltExecutor::Loop() {
  const auto max_park = std::chrono::duration_cast<std::chrono::nanoseconds>(ctx_.options.max_park);
  auto process = [this](Envelope& e) { Process(e); };
  // The previous iteration, for the budget: its start and what it handled
  // without parking (0: it parked, so its time says nothing about speed).
  std::chrono::nanoseconds iteration_start = IterationBudget::CoarseNow();
  size_t unparked_items = 0;
  for (;;) {
    const core::Clock::TimePoint now = Now();
    const std::chrono::nanoseconds real_now = IterationBudget::CoarseNow();
    budget_.Observe(unparked_items, real_now - iteration_start);
    iteration_start = real_now;
    stats_due_ns_ = now.time_since_epoch().count() + kStatsFlushInterval.count();
    const size_t max = budget_.size();
    const int ticks = ticks_.Due(now);
    for (int n = 0; n < ticks; ++n) {
      const api::Tuple tick = api::Tuple::MakeTick(ticks_.period_secs());
      for (auto& task : tasks_) Execute(*task, tick);
      tick_counter_->Add(1);
    }
    size_t got = queue_->TryDrain(max, process);
    // Tuples this executor sent to its own tasks.
    while (!transfer_.local().empty()) {
      local_batch_.swap(transfer_.local());
      for (Envelope& e : local_batch_) Process(e);
      got += local_batch_.size();
      local_batch_.clear();
    }
    unparked_items = got;
    const bool polled = !polled_tasks_.empty() && PollTasks();
    if (got == 0 && ticks == 0 && !polled) {
      if (queue_->closed()) break;  // stopped and drained
      transfer_.Flush(/*idle=*/true);
      FlushMetrics();
      Publish(/*quiet=*/true);
      got = queue_->Drain(
          max, process,
          ParkDeadline(ticks_, poll_interval_ ? std::min(max_park, *poll_interval_) : max_park));
      unparked_items = 0;
    }
    transfer_.Flush();
    FlushMetrics();
    Publish(/*quiet=*/false);
  }
}

}  // namespace tempest::worker
