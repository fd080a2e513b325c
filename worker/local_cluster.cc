#include "worker/local_cluster.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/core/topology/topology_validator.h"
#include "spdlog/spdlog.h"
#include "worker/acker_executor.h"
#include "worker/bolt_executor.h"
#include "worker/poll_until.h"
#include "worker/spout_executor.h"

namespace tempest::worker {

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::Create(core::TopologyDef def,
                                                                   LocalClusterOptions options) {
  std::unique_ptr<LocalCluster> cluster(new LocalCluster());
  cluster->def_ = std::move(def);
  cluster->options_ = std::move(options);
  if (cluster->options_.registry == nullptr) {
    return absl::InvalidArgumentError("LocalClusterOptions.registry is null");
  }
  RETURN_IF_ERROR(cluster->Build());
  return cluster;
}

absl::StatusOr<std::unique_ptr<LocalCluster>> LocalCluster::CreatePart(
    core::TopologyDef def, LocalClusterOptions options, ClusterPart part) {
  std::unique_ptr<LocalCluster> cluster(new LocalCluster());
  cluster->def_ = std::move(def);
  cluster->options_ = std::move(options);
  cluster->part_ = std::move(part);
  cluster->partial_ = true;
  if (cluster->options_.registry == nullptr) {
    return absl::InvalidArgumentError("LocalClusterOptions.registry is null");
  }
  RETURN_IF_ERROR(cluster->Build());
  return cluster;
}

int64_t LocalCluster::RemoteSent() const {
  absl::MutexLock lock(&executors_mu_);
  int64_t total = 0;
  for (const auto& e : executors_) total += e->remote_sent();
  for (const auto& e : retired_) total += e->remote_sent();
  return total;
}

absl::Status LocalCluster::Build() {
  core::TopologyValidator validator(*options_.registry);
  ASSIGN_OR_RETURN(streams_, validator.Validate(def_));
  const int num_ackers = core::TaskLayout::AckerExecutors(def_.config);
  ASSIGN_OR_RETURN(layout_, core::TaskLayout::Create(def_, num_ackers));
  BuildContext();
  ASSIGN_OR_RETURN(std::vector<core::ExecutorInfo> local, LocalExecutors());
  RETURN_IF_ERROR(CreateExecutors(local));
  return WireExecutors();
}

void LocalCluster::BuildContext() {
  const api::Config& config = def_.config;
  std::string id = options_.topology_id;
  if (id.empty()) id = absl::StrCat(def_.name, "-1-", static_cast<int64_t>(std::time(nullptr)));

  if (options_.metrics == nullptr) {
    owned_metrics_ = std::make_unique<core::MetricsRegistry>();
    options_.metrics = owned_metrics_.get();
  }
  context_ = std::make_unique<WorkerContext>();
  WorkerContext& ctx = *context_;
  ctx.topology_id = id;
  ctx.info = core::MakeTopologyInfo(def_, layout_, streams_, id, config);
  ctx.def = &def_;
  ctx.streams = &streams_;
  ctx.layout = &layout_;
  ctx.registry = options_.registry;
  ctx.clock = options_.clock != nullptr ? options_.clock : &core::RealClock();
  ctx.metrics = options_.metrics;
  ctx.errors = &errors_;
  ctx.options = options_.executor;
  ctx.timeouts_enabled = config.GetBool(api::kTopologyEnableMessageTimeouts, true);
  ctx.message_timeout_secs =
      std::max<int64_t>(1, config.GetInt(api::kTopologyMessageTimeoutSecs, 30));
  for (api::TaskId t : layout_.TasksOf(api::ComponentId(std::string(api::kAckerComponentName)))) {
    ctx.acker_tasks.push_back(t.value());
  }
}

absl::StatusOr<std::vector<core::ExecutorInfo>> LocalCluster::LocalExecutors() {
  if (!partial_) return layout_.executors();
  const std::vector<core::ExecutorInfo>& all = layout_.executors();
  for (const core::ExecutorInfo& e : part_.local) {
    if (std::find(all.begin(), all.end(), e) == all.end()) {
      return absl::InvalidArgumentError(absl::StrCat("executor [", e.start.value(), ", ",
                                                     e.end.value(), "] of ", e.component.value(),
                                                     " is not an executor of the task layout"));
    }
  }
  context_->remote.store(part_.remote, std::memory_order_release);
  return part_.local;
}

absl::Status LocalCluster::CreateExecutors(const std::vector<core::ExecutorInfo>& local) {
  WorkerContext& ctx = *context_;
  for (const core::ExecutorInfo& e : local) {
    for (int32_t t = e.start.value(); t <= e.end.value(); ++t) {
      ctx.local_tasks.insert(api::TaskId(t));
    }
  }
  ctx.executor_by_task.assign(static_cast<size_t>(layout_.num_tasks()) + 1, nullptr);

  for (const core::ExecutorInfo& e : local) {
    std::unique_ptr<Executor> executor;
    if (e.component.value() == api::kAckerComponentName) {
      executor = std::make_unique<AckerExecutor>(ctx, e);
    } else {
      const core::ComponentDef* c = def_.FindComponent(e.component);
      if (c == nullptr) return absl::InternalError("layout names unknown " + e.component.value());
      if (c->kind == core::ComponentDef::Kind::kSpout) {
        executor = std::make_unique<SpoutExecutor>(ctx, e);
      } else {
        executor = std::make_unique<BoltExecutor>(ctx, e);
      }
    }
    for (int32_t t = e.start.value(); t <= e.end.value(); ++t) {
      ctx.executor_by_task[t] = executor.get();
    }
    executors_.push_back(std::move(executor));
  }
  PublishLocalRoutes();
  return absl::OkStatus();
}

int64_t LocalCluster::PublishLocalRoutes() {
  auto routes = std::make_unique<LocalRoutes>();
  routes->version = local_routes_.empty() ? 0 : local_routes_.back()->version + 1;
  routes->executor_by_task = context_->executor_by_task;
  local_routes_.push_back(std::move(routes));
  context_->local.store(local_routes_.back().get(), std::memory_order_release);
  return local_routes_.back()->version;
}

absl::Status LocalCluster::WireExecutors() {
  for (auto& e : executors_) RETURN_IF_ERROR(e->Build());
  // Size each queue for the executors that will produce into it.
  std::map<Executor*, std::set<Executor*>> producers;
  for (auto& e : executors_) {
    std::vector<api::TaskId> targets = e->Downstream();
    for (int32_t a : context_->acker_tasks) targets.push_back(api::TaskId(a));
    for (api::TaskId t : targets) {
      Executor* target = context_->executor_by_task[t.value()];
      if (target != nullptr && target != e.get()) producers[target].insert(e.get());
    }
  }
  for (auto& e : executors_) {
    RETURN_IF_ERROR(e->CreateInbound(producers[e.get()].size() + part_.extra_producers +
                                     part_.regroup_producers));
  }
  for (auto& e : executors_) RETURN_IF_ERROR(e->Connect());
  return absl::OkStatus();
}

LocalCluster::~LocalCluster() {
  // A destructor has no one to report to; Kill stops the executors regardless.
  if (started_ && !killed_) (void)Kill(std::chrono::milliseconds(0));
}

absl::Status LocalCluster::Start(bool activate) {
  if (started_) return absl::FailedPreconditionError("cluster already started");
  started_ = true;
  std::vector<std::future<absl::Status>> ready;
  ready.reserve(executors_.size());
  for (auto& e : executors_) ready.push_back(e->Start());
  absl::Status first;
  for (auto& f : ready) {
    absl::Status s = f.get();
    if (!s.ok() && first.ok()) first = s;
  }
  if (!first.ok()) {
    // The start's failure is the one to report; Kill stops what did start.
    (void)Kill(std::chrono::milliseconds(0));
    return first;
  }
  if (activate) Activate();
  return absl::OkStatus();
}

void LocalCluster::Activate() {
  context_->active.store(true, std::memory_order_release);
  for (auto& e : executors_) {
    if (e->lane() != nullptr) e->lane()->event().Notify();
  }
}

void LocalCluster::Deactivate() {
  context_->active.store(false, std::memory_order_release);
  for (auto& e : executors_) {
    if (e->lane() != nullptr) e->lane()->event().Notify();
  }
}

std::vector<Executor*> LocalCluster::ShutdownOrder() const {
  std::vector<Executor*> order;
  for (const auto& e : executors_) {
    if (e->kind() == Executor::Kind::kSpout) order.push_back(e.get());
  }
  // Bolts in topological order of the stream graph (Kahn), so each stops
  // only after everything upstream of it has stopped and flushed; bolts in a
  // cycle follow in definition order.
  std::map<api::ComponentId, int> indegree;
  std::map<api::ComponentId, std::set<api::ComponentId>> edges;
  for (const core::ComponentDef& b : def_.bolts) indegree[b.id] = 0;
  for (const core::StreamDef& s : def_.streams) {
    if (!indegree.contains(s.from) || !indegree.contains(s.to) || s.from == s.to) continue;
    if (edges[s.from].insert(s.to).second) ++indegree[s.to];
  }
  std::vector<api::ComponentId> sorted;
  std::vector<api::ComponentId> ready;
  for (const core::ComponentDef& b : def_.bolts) {
    if (indegree[b.id] == 0) ready.push_back(b.id);
  }
  while (!ready.empty()) {
    api::ComponentId c = ready.front();
    ready.erase(ready.begin());
    sorted.push_back(c);
    for (const api::ComponentId& next : edges[c]) {
      if (--indegree[next] == 0) ready.push_back(next);
    }
  }
  for (const core::ComponentDef& b : def_.bolts) {
    if (std::find(sorted.begin(), sorted.end(), b.id) == sorted.end()) sorted.push_back(b.id);
  }
  for (const api::ComponentId& c : sorted) {
    for (const auto& e : executors_) {
      if (e->kind() == Executor::Kind::kBolt && e->info().component == c) order.push_back(e.get());
    }
  }
  for (const auto& e : executors_) {
    if (e->kind() == Executor::Kind::kAcker) order.push_back(e.get());
  }
  return order;
}

absl::Status LocalCluster::Kill(std::chrono::milliseconds wait) {
  if (killed_) return absl::OkStatus();
  killed_ = true;
  if (!started_) return absl::OkStatus();
  DeactivateAndDrain(wait);
  for (Executor* e : ShutdownOrder()) {
    e->RequestStop();
    e->Join();
  }
  return absl::OkStatus();
}

bool LocalCluster::DeactivateAndDrain(std::chrono::milliseconds wait) {
  Deactivate();
  return PollUntil(wait, [this] {
    int64_t pending = 0;
    {
      absl::MutexLock lock(&executors_mu_);
      for (const auto& e : executors_) pending += e->pending();
    }
    return pending == 0 && Idle();
  });
}

LocalCluster::ProgressReading LocalCluster::ReadProgress() const {
  ProgressReading r;
  // A retired executor's final counts still balance what others sent it
  // and what it sent them.
  for (const auto& e : executors_) r.consumed += e->consumed();
  for (const auto& e : retired_) r.consumed += e->consumed();
  for (const auto& e : executors_) r.sent += e->sent();
  for (const auto& e : retired_) r.sent += e->sent();
  if (part_.delivered != nullptr) r.sent += part_.delivered->load(std::memory_order_acquire);
  for (const auto& e : executors_) {
    r.quiet = r.quiet && e->quiet();
    r.depth += e->queue_depth();
  }
  return r;
}

bool LocalCluster::Idle() const {
  absl::MutexLock lock(&executors_mu_);
  const ProgressReading a = ReadProgress();
  if (!a.quiet || a.depth != 0 || a.consumed != a.sent) return false;
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  const ProgressReading b = ReadProgress();
  return a == b;
}

bool LocalCluster::Finished() const {
  int64_t pending = 0;
  {
    absl::MutexLock lock(&executors_mu_);
    for (const auto& e : executors_) {
      if (e->kind() != Executor::Kind::kSpout) continue;
      if (!e->exhausted()) return false;
      pending += e->pending();
    }
  }
  return pending == 0 && Idle();
}

bool LocalCluster::WaitIdle(std::chrono::milliseconds timeout) const {
  return PollUntil(timeout, [this] { return Idle(); });
}

bool LocalCluster::WaitFinished(std::chrono::milliseconds timeout) const {
  return PollUntil(timeout, [this] { return Finished(); });
}

int64_t LocalCluster::SpoutEmitted() const {
  absl::MutexLock lock(&executors_mu_);
  int64_t total = 0;
  for (const auto& e : executors_) {
    if (e->kind() == Executor::Kind::kSpout) {
      total += static_cast<const SpoutExecutor*>(e.get())->spout_emitted();
    }
  }
  return total;
}

bool LocalCluster::TrackedWait(int64_t n, std::chrono::milliseconds timeout) {
  tracked_base_ += n;
  return PollUntil(timeout, [&] { return SpoutEmitted() >= tracked_base_ && Idle(); });
}

bool LocalCluster::WaitForClock(std::chrono::milliseconds timeout) const {
  const int64_t target = context_->clock->Now().time_since_epoch().count();
  return PollUntil(timeout, [&] {
    absl::MutexLock lock(&executors_mu_);
    for (const auto& e : executors_) {
      if (e->observed_clock_ns() < target) return false;
    }
    return true;
  });
}

LocalClusterStats LocalCluster::Stats() const {
  LocalClusterStats stats;
  for (const core::MetricSample& m : context_->metrics->Snapshot()) {
    if (m.name == "tempest_emitted_total") {
      stats.emitted += m.value;
    } else if (m.name == "tempest_transferred_total") {
      stats.transferred += m.value;
    } else if (m.labels.contains("topology") && m.labels.at("topology") == topology_id()) {
      if (m.name == "tempest_topology_spout_emitted_total") stats.spout_emitted = m.value;
      if (m.name == "tempest_topology_acked_total") stats.acked = m.value;
      if (m.name == "tempest_topology_failed_total") stats.failed = m.value;
      if (m.name == "tempest_topology_complete_latency_us") {
        stats.complete_latency_p99_us = m.p99;
        stats.complete_latency_samples = m.value;
      }
    }
  }
  absl::MutexLock lock(&executors_mu_);
  for (const auto& e : executors_) {
    stats.pending += e->pending();
    stats.max_queue_depth = std::max(stats.max_queue_depth, e->queue_depth());
    if (e->queue() != nullptr) {
      const core::MetricLabels labels{
          {"component", e->info().component.value()},
          {"executor", absl::StrCat(e->info().start.value(), "-", e->info().end.value())}};
      context_->metrics->GetGauge("tempest_receive_queue_depth", labels)
          .Set(static_cast<int64_t>(e->queue_depth()));
      context_->metrics->GetGauge("tempest_receive_queue_capacity", labels)
          .Set(static_cast<int64_t>(e->queue_capacity()));
    }
  }
  stats.errors = errors_.count();
  return stats;
}

std::vector<core::ExecutorInfo> LocalCluster::Executors() const {
  absl::MutexLock lock(&executors_mu_);
  std::vector<core::ExecutorInfo> infos;
  for (const auto& e : executors_) infos.push_back(e->info());
  std::sort(infos.begin(), infos.end(), [](const core::ExecutorInfo& a,
                                           const core::ExecutorInfo& b) {
    return a.start.value() < b.start.value();
  });
  return infos;
}

absl::Status LocalCluster::PlanRegroup(const std::vector<core::ExecutorInfo>& local,
                                       bool tasks_may_leave,
                                       std::vector<BoltExecutor*>& leaving,
                                       std::vector<core::ExecutorInfo>& arriving) const {
  std::set<int32_t> leaving_tasks;
  std::set<int32_t> arriving_tasks;
  auto refuse = [](const core::ExecutorInfo& e, const char* why) {
    return absl::FailedPreconditionError(absl::StrCat(
        "executor [", e.start.value(), ", ", e.end.value(), "] of ", e.component.value(), " ",
        why, ": only bolt executors are regrouped in place"));
  };
  for (const auto& e : executors_) {
    if (std::find(local.begin(), local.end(), e->info()) != local.end()) continue;
    if (e->kind() != Executor::Kind::kBolt) return refuse(e->info(), "would stop");
    leaving.push_back(static_cast<BoltExecutor*>(e.get()));
    for (int32_t t = e->info().start.value(); t <= e->info().end.value(); ++t) {
      leaving_tasks.insert(t);
    }
  }
  for (const core::ExecutorInfo& info : local) {
    const bool runs = std::any_of(executors_.begin(), executors_.end(),
                                  [&](const auto& e) { return e->info() == info; });
    if (runs) continue;
    const core::ComponentDef* c = def_.FindComponent(info.component);
    if (c == nullptr || c->kind != core::ComponentDef::Kind::kBolt) {
      return refuse(info, "would start");
    }
    for (int32_t t = info.start.value(); t <= info.end.value(); ++t) {
      const api::ComponentId* owner = layout_.ComponentOf(api::TaskId(t));
      if (owner == nullptr || *owner != info.component || !arriving_tasks.insert(t).second) {
        return refuse(info, "names tasks that are not its component's or twice");
      }
    }
    arriving.push_back(info);
  }
  // Tasks leave only whole executors, and then none arrive (ADR 0035).
  const bool leave = tasks_may_leave && arriving.empty();
  if (leaving_tasks != arriving_tasks && !leave) {
    return absl::FailedPreconditionError(
        "the new executors do not run the same tasks as the ones they replace");
  }
  // Every new executor registers a producer on the queues it sends to.
  for (const auto& e : executors_) {
    if (e->queue() != nullptr && e->queue()->free_producer_slots() < arriving.size()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the queue of ", e->info().component.value(), " has no room for more producers"));
    }
  }
  return absl::OkStatus();
}

bool LocalCluster::WaitLocalVersion(int64_t version, std::chrono::milliseconds wait) const {
  // A parked executor follows when it wakes: wake them all now.
  for (const auto& e : executors_) {
    if (e->queue() != nullptr) e->queue()->Wake();
    if (e->lane() != nullptr) e->lane()->event().Notify();
  }
  return PollUntil(wait, [&] {
    for (const auto& e : executors_) {
      if (e->local_version() < version) return false;
    }
    return true;
  });
}

absl::Status LocalCluster::Regroup(const std::vector<core::ExecutorInfo>& local,
                                   const std::function<void()>& follow_others,
                                   std::chrono::milliseconds wait,
                                   const std::function<absl::Status()>& publish_remote) {
  if (!started_ || killed_) {
    return absl::FailedPreconditionError("only a running cluster regroups its executors");
  }
  std::vector<BoltExecutor*> leaving;
  std::vector<core::ExecutorInfo> arriving;
  RETURN_IF_ERROR(PlanRegroup(local, publish_remote != nullptr, leaving, arriving));
  if (leaving.empty()) return absl::OkStatus();
  if (arriving.empty() && publish_remote != nullptr) {
    return LetLeave(leaving, follow_others, wait, publish_remote);
  }
  // The new queues exist before any producer is told of them; producers are
  // every executor (the leaving ones too, during their last drain), the
  // network thread, and later regroupings' executors.
  std::vector<std::unique_ptr<BoltExecutor>> fresh;
  for (const core::ExecutorInfo& info : arriving) {
    auto e = std::make_unique<BoltExecutor>(*context_, info);
    RETURN_IF_ERROR(e->CreateInbound(executors_.size() + arriving.size() +
                                     part_.extra_producers + part_.regroup_producers));
    for (int32_t t = info.start.value(); t <= info.end.value(); ++t) {
      context_->executor_by_task[static_cast<size_t>(t)] = e.get();
    }
    fresh.push_back(std::move(e));
  }
  const int64_t version = PublishLocalRoutes();
  follow_others();
  if (!WaitLocalVersion(version, wait)) {
    // Their sends to a leaving executor after it stopped are dropped and
    // counted; the trees fail and replay as after a restart.
    spdlog::warn("topology {}: not every executor followed the regrouping within {} ms",
                 topology_id(), wait.count());
  }
  return HandOver(leaving, fresh);
}

absl::Status LocalCluster::HandOver(const std::vector<BoltExecutor*>& leaving,
                                    std::vector<std::unique_ptr<BoltExecutor>>& fresh) {
  // No one sends to the leaving executors now: each executes what is in its
  // queue, stops without Cleanup, and gives its tasks up; only then do the
  // new executors (whose queues may already hold those tasks' next tuples)
  // start, so each task sees its tuples in order.
  for (BoltExecutor* e : leaving) e->StopForHandOver();
  BoltExecutor::TaskPool pool;
  for (BoltExecutor* e : leaving) {
    e->Join();
    e->TakeTasks(pool);
  }
  std::vector<std::future<absl::Status>> ready;
  absl::Status first;
  for (auto& e : fresh) {
    e->Adopt(pool);
    absl::Status s = e->Build();
    if (s.ok()) s = e->Connect();
    if (!s.ok() && first.ok()) first = s;
  }
  if (first.ok()) {
    for (auto& e : fresh) ready.push_back(e->Start());
    for (auto& f : ready) {
      absl::Status s = f.get();
      if (!s.ok() && first.ok()) first = s;
    }
  }
  absl::MutexLock lock(&executors_mu_);
  Retire(leaving);
  // Even after a failure: the executors that started must be stopped by Kill.
  for (auto& e : fresh) executors_.push_back(std::move(e));
  return first;
}

void LocalCluster::Retire(const std::vector<BoltExecutor*>& stopped) {
  for (BoltExecutor* e : stopped) {
    // Its queue is empty and gone from Stats(): its depth series says so.
    const core::ExecutorInfo& info = e->info();
    const core::MetricLabels labels{
        {"component", info.component.value()},
        {"executor", absl::StrCat(info.start.value(), "-", info.end.value())}};
    context_->metrics->GetGauge("tempest_receive_queue_depth", labels).Set(0);
    auto it = std::find_if(executors_.begin(), executors_.end(),
                           [&](const auto& x) { return x.get() == e; });
    retired_.push_back(std::move(*it));
    executors_.erase(it);
  }
}

absl::Status LocalCluster::LetLeave(const std::vector<BoltExecutor*>& leaving,
                                    const std::function<void()>& follow_others,
                                    std::chrono::milliseconds wait,
                                    const std::function<absl::Status()>& publish_remote) {
  // First the routes that name the tasks' new worker: once the local ones
  // no longer name the leaving executors, every producer sends there.
  RETURN_IF_ERROR(publish_remote());
  for (BoltExecutor* e : leaving) {
    for (int32_t t = e->info().start.value(); t <= e->info().end.value(); ++t) {
      context_->executor_by_task[static_cast<size_t>(t)] = nullptr;
    }
  }
  const int64_t version = PublishLocalRoutes();
  follow_others();
  if (!WaitLocalVersion(version, wait)) {
    spdlog::warn("topology {}: not every executor followed the leaving tasks within {} ms",
                 topology_id(), wait.count());
  }
  // No one sends to them now. Their last input is executed and its output
  // sent before the stop, which would make a full connection's sends give
  // up; the stop then runs Cleanup on each task, whose object does not
  // travel to the new worker.
  const bool drained = PollUntil(wait, [&] {
    return std::all_of(leaving.begin(), leaving.end(), [](BoltExecutor* e) {
      return e->queue_depth() == 0 && e->quiet();
    });
  });
  if (!drained) {
    spdlog::warn("topology {}: the leaving executors did not drain within {} ms", topology_id(),
                 wait.count());
  }
  for (BoltExecutor* e : leaving) e->RequestStop();
  for (BoltExecutor* e : leaving) e->Join();
  absl::MutexLock lock(&executors_mu_);
  Retire(leaving);
  return absl::OkStatus();
}

}  // namespace tempest::worker
