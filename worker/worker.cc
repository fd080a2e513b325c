#include "worker/worker.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/core/log_text.h"
#include "common/core/status_macros.h"
#include "common/core/topology/task_layout.h"
#include "common/core/topology/topology_validator.h"
#include "common/os/limits.h"
#include "spdlog/spdlog.h"
#include "worker/poll_until.h"

namespace tempest::worker {
namespace {

// A graceful Kill's goodbye (ADR 0033): the senders answer within a round
// trip unless this worker's queues are full, so a short bound suffices; it
// is spent even when the drain before it used all of the wait.
constexpr std::chrono::milliseconds kGoodbyeWaitMin(1000);
constexpr std::chrono::milliseconds kGoodbyeWaitMax(5000);
// Spare producer slots in every local queue for the executors regroupings
// add (RegroupExecutors): each adds one per new executor sending there, and
// a slot is never freed. An empty slot costs the consumer nothing; a
// regrouping that finds no room is refused and the worker restarts.
constexpr size_t kRegroupProducers = 16;
// How long the executors' last output may take to leave for other workers.
constexpr std::chrono::milliseconds kOutboxFlushWait(1000);

std::string Range(int32_t start, int32_t end) { return absl::StrCat("[", start, ", ", end, "]"); }

// Checks that every layout executor is in the plan exactly once (local, or in
// one remote worker), puts the local ones into `part` and records which
// remote worker runs each task (-1: local) in `worker_by_task`.
absl::Status AssignExecutors(const WorkerPlan& plan, const core::TaskLayout& layout,
                             ClusterPart& part, std::vector<int>& worker_by_task) {
  std::map<std::pair<int32_t, int32_t>, const core::ExecutorInfo*> by_range;
  for (const core::ExecutorInfo& e : layout.executors()) {
    by_range[{e.start.value(), e.end.value()}] = &e;
  }
  std::map<std::pair<int32_t, int32_t>, std::string> owner;
  auto claim = [&](const std::pair<int32_t, int32_t>& r, const std::string& who) -> absl::Status {
    auto it = by_range.find(r);
    if (it == by_range.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "worker plan for ", plan.topology_id, ": ", who, " lists executor ",
          Range(r.first, r.second), ", which is not an executor of the task layout (",
          core::Counted(static_cast<int64_t>(layout.executors().size()), "executor"), " over ",
          core::Counted(layout.num_tasks(), "task"), ")"));
    }
    auto [o, inserted] = owner.emplace(r, who);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat("worker plan for ", plan.topology_id,
                                                     ": executor ", Range(r.first, r.second),
                                                     " is assigned to both ", o->second, " and ",
                                                     who));
    }
    return absl::OkStatus();
  };
  for (const auto& r : plan.local_executors) {
    RETURN_IF_ERROR(claim(r, "this worker"));
    part.local.push_back(*by_range[r]);
  }
  worker_by_task.assign(static_cast<size_t>(layout.num_tasks()) + 1, -1);
  for (size_t i = 0; i < plan.remote_workers.size(); ++i) {
    const RemoteWorker& rw = plan.remote_workers[i];
    const std::string who = absl::StrCat("worker ", rw.host, ":", rw.port);
    for (const auto& r : rw.executors) {
      RETURN_IF_ERROR(claim(r, who));
      for (int32_t t = r.first; t <= r.second; ++t) {
        worker_by_task[static_cast<size_t>(t)] = static_cast<int>(i);
      }
    }
  }
  for (const core::ExecutorInfo& e : layout.executors()) {
    if (!owner.contains({e.start.value(), e.end.value()})) {
      return absl::InvalidArgumentError(absl::StrCat(
          "worker plan for ", plan.topology_id, ": executor ",
          Range(e.start.value(), e.end.value()), " of ", e.component.value(),
          " is assigned to no worker"));
    }
  }
  if (part.local.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("worker plan for ", plan.topology_id, " runs no executor here"));
  }
  return absl::OkStatus();
}

// For new routes: which of `remote_workers` runs each task, by task and not
// by executor, since a rebalance may regroup another worker's tasks into
// executors this worker's layout does not have (task ids never change).
// Every task of the layout must be either run here or named by exactly one
// remote range.
absl::Status AssignRemoteTasks(const std::string& topology_id, const core::TaskLayout& layout,
                               const std::vector<std::pair<int32_t, int32_t>>& local,
                               const std::vector<RemoteWorker>& remote_workers,
                               std::vector<int>& worker_by_task) {
  const int32_t num_tasks = layout.num_tasks();
  worker_by_task.assign(static_cast<size_t>(num_tasks) + 1, -1);
  std::vector<bool> covered(static_cast<size_t>(num_tasks) + 1, false);
  for (const auto& [start, end] : local) {
    for (int32_t t = start; t <= end; ++t) covered[static_cast<size_t>(t)] = true;
  }
  for (size_t i = 0; i < remote_workers.size(); ++i) {
    const RemoteWorker& rw = remote_workers[i];
    for (const auto& [start, end] : rw.executors) {
      if (start < 1 || end < start || end > num_tasks) {
        return absl::InvalidArgumentError(
            absl::StrCat("new routes for ", topology_id, ": worker ", rw.host, ":", rw.port,
                         " lists tasks ", Range(start, end), " outside the layout's ",
                         core::Counted(num_tasks, "task")));
      }
      for (int32_t t = start; t <= end; ++t) {
        if (covered[static_cast<size_t>(t)]) {
          return absl::InvalidArgumentError(absl::StrCat(
              "new routes for ", topology_id, ": task ", t, " is assigned twice"));
        }
        covered[static_cast<size_t>(t)] = true;
        worker_by_task[static_cast<size_t>(t)] = static_cast<int>(i);
      }
    }
  }
  for (int32_t t = 1; t <= num_tasks; ++t) {
    if (!covered[static_cast<size_t>(t)]) {
      return absl::InvalidArgumentError(
          absl::StrCat("new routes for ", topology_id, ": task ", t, " is assigned to no worker"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Worker>> Worker::Create(WorkerPlan plan, WorkerOptions options) {
  if (options.registry == nullptr) {
    return absl::InvalidArgumentError("WorkerOptions.registry is null");
  }
  std::unique_ptr<Worker> w(new Worker());
  w->options_ = options;

  // The layout every worker of the topology computes identically.
  core::TopologyValidator validator(*options.registry);
  ASSIGN_OR_RETURN(core::ComponentStreams streams, validator.Validate(plan.def));
  const int num_ackers = core::TaskLayout::AckerExecutors(plan.def.config);
  ASSIGN_OR_RETURN(core::TaskLayout layout, core::TaskLayout::Create(plan.def, num_ackers));
  ClusterPart part;
  auto routes = std::make_unique<RemoteRoutes>();
  RETURN_IF_ERROR(AssignExecutors(plan, layout, part, routes->worker_by_task));

  ASSIGN_OR_RETURN(w->codec_, EnvelopeCodec::Create(layout, streams));
  routes->codec = w->codec_.get();
  w->local_executors_ = plan.local_executors;
  w->secret_ = plan.secret;
  ASSIGN_OR_RETURN(w->max_frame_bytes_, net::MaxFrameBytesOf(plan.def.config));
  w->routes_.push_back(std::move(routes));

  if (options.metrics == nullptr) {
    w->owned_metrics_ = std::make_unique<core::MetricsRegistry>();
    w->options_.metrics = w->owned_metrics_.get();
  }
  ASSIGN_OR_RETURN(w->loop_, net::EventLoop::Create("tempest-net"));
  RETURN_IF_ERROR(w->ConnectRemoteWorkers(plan));
  for (const auto& outbox : w->outboxes_) w->routes_.back()->outboxes.push_back(outbox.get());

  part.remote = w->routes_.back().get();
  part.extra_producers = 1;
  part.regroup_producers = kRegroupProducers;
  part.delivered = &w->delivered_;
  LocalClusterOptions lo;
  lo.registry = options.registry;
  lo.clock = options.clock;
  lo.metrics = w->options_.metrics;
  lo.executor = options.executor;
  lo.topology_id = plan.topology_id;
  // The transport's settings come from the topology's config, which the
  // cluster takes over with the definition.
  const api::Config config = plan.def.config;
  ASSIGN_OR_RETURN(w->cluster_, LocalCluster::CreatePart(std::move(plan.def), lo, std::move(part)));
  RETURN_IF_ERROR(w->Listen(plan, config));
  RETURN_IF_ERROR(os::StartThread(w->resume_thread_, "the worker's resume loop",
                                  &Worker::ResumeLoop, w.get()));
  spdlog::info("worker {}: {} local executor(s), {} other worker(s), transport on {}:{}",
               w->cluster_->topology_id(), w->cluster_->context().local_tasks.size(),
               w->clients_.size(), plan.bind_host, w->server_->port());
  return w;
}

absl::Status Worker::ConnectRemoteWorkers(const WorkerPlan& plan) {
  for (const RemoteWorker& rw : plan.remote_workers) {
    ASSIGN_OR_RETURN(const int index, OutboxFor(rw));
    (void)index;  // in plan order: AssignExecutors numbered them so
  }
  return absl::OkStatus();
}

absl::StatusOr<int> Worker::OutboxFor(const RemoteWorker& rw) {
  const std::string peer = absl::StrCat(rw.host, ":", rw.port);
  for (size_t i = outboxes_.size(); i-- > 0;) {
    if (outboxes_[i]->peer() != peer) continue;
    // A retired peer's client may be closed already (the watch closes it);
    // a plan that names the peer again then gets a new connection.
    if (peer_watch_ == nullptr || peer_watch_->Keep(i)) return static_cast<int>(i);
  }
  net::TransportClientOptions co;
  co.host = rw.host;
  co.port = rw.port;
  co.secret = secret_;
  co.max_frame_payload_bytes = std::min(co.max_frame_payload_bytes, max_frame_bytes_);
  co.max_queued_bytes = options_.max_queued_bytes;
  co.flush_interval = options_.flush_interval;
  co.reconnect_initial = options_.reconnect_initial;
  co.reconnect_max = options_.reconnect_max;
  co.metrics = options_.metrics;
  ASSIGN_OR_RETURN(std::unique_ptr<net::TransportClient> client,
                   net::TransportClient::Create(*loop_, co));
  // A quarter of the connection's queue, so several executors' batches
  // fit at once; at most Transfer::kRemoteBatchBytes.
  const size_t max_batch = std::max<size_t>(
      1024, std::min(Transfer::kRemoteBatchBytes, options_.max_queued_bytes / 4));
  outboxes_.push_back(
      std::make_unique<RemoteOutbox>(peer, client.get(), max_batch, *options_.metrics));
  clients_.push_back(std::move(client));
  return static_cast<int>(outboxes_.size() - 1);
}

absl::Status Worker::Listen(const WorkerPlan& plan, const api::Config& config) {
  ASSIGN_OR_RETURN(receiver_, RemoteReceiver::Create(cluster_->context(), *codec_, &delivered_));
  net::TransportServerOptions so;
  so.bind_address = plan.bind_host;
  so.port = plan.port;
  so.secret = plan.secret;
  ASSIGN_OR_RETURN(so.max_payload_bytes, net::MaxFrameBytesOf(config));
  ASSIGN_OR_RETURN(so.limits, net::TransportLimitsOf(config));
  so.metrics = options_.metrics;
  RemoteReceiver* r = receiver_.get();
  absl::StatusOr<std::unique_ptr<net::TransportServer>> server = net::TransportServer::Create(
      *loop_, so, [this, r](net::ConnectionId id, std::span<const net::Message> messages) {
        const bool more = r->OnFrame(id, messages);
        // Paused, or forwarded messages wait for room: RetryPaused has work.
        if (!more || r->forward_waiting()) OnPaused();
        return more;
      });
  if (!server.ok()) {
    return absl::UnavailableError(absl::StrCat("worker for ", cluster_->topology_id(),
                                               " cannot listen on ", plan.bind_host, ":",
                                               plan.port, ": ", server.status().message()));
  }
  server_ = std::move(*server);
  return absl::OkStatus();
}

Worker::~Worker() {
  // A destructor has no one to report to; Kill stops the worker regardless.
  if (cluster_ != nullptr) (void)Kill(std::chrono::milliseconds(0));
  StopTransport();
}

void Worker::ResumeLoop() {
  // A timer on the loop would do as well; common/net exposes no timer. While
  // no connection is paused this thread sleeps until OnPaused or
  // StopTransport wakes it: polling all the time cost 20k wake-ups/s per
  // worker, a context switch each on a machine whose cores the executors
  // and the event loop already fill.
  const absl::Duration poll = absl::FromChrono(options_.resume_poll);
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (receiver_->has_paused()) {
        if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), poll)) return;
      } else {
        mu_.Await(absl::Condition(this, &Worker::StoppingOrPaused));
        if (stopping_) return;
      }
    }
    if (receiver_->has_paused()) loop_->RunSync([this] { receiver_->RetryPaused(*server_); });
  }
}

bool Worker::StoppingOrPaused() const { return stopping_ || receiver_->has_paused(); }

void Worker::OnPaused() {
  // Releasing mu_ makes the waiting ResumeLoop re-evaluate its condition,
  // which now holds (the receiver published the pause before returning).
  absl::MutexLock lock(&mu_);
}

void Worker::StopTransport() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;  // wakes ResumeLoop: its condition now holds
  }
  if (resume_thread_.joinable()) resume_thread_.join();
  if (peer_watch_thread_.joinable()) peer_watch_thread_.join();
  if (server_ != nullptr) server_->Stop();
  for (auto& c : clients_) c->Close();
}

absl::Status Worker::Start(bool activate) {
  if (started_) return absl::FailedPreconditionError("worker already started");
  started_ = true;
  peer_watch_ =
      std::make_unique<PeerLossWatch>(cluster_->context(), *routes_.back(), WatchedPeers());
  RETURN_IF_ERROR(StartPeerWatch());
  return cluster_->Start(activate);
}

std::vector<PeerLossWatch::Peer> Worker::WatchedPeers() const {
  std::vector<PeerLossWatch::Peer> peers;
  for (size_t i = 0; i < clients_.size(); ++i) {
    peers.push_back({outboxes_[i]->peer(), clients_[i].get()});
  }
  return peers;
}

absl::Status Worker::StartPeerWatch() {
  // Only a worker with others to lose runs the thread.
  if (clients_.empty() || peer_watch_thread_.joinable()) return absl::OkStatus();
  return os::StartThread(peer_watch_thread_, "the worker's peer watch", &Worker::PeerWatchLoop,
                         this);
}

absl::Status Worker::UpdateRemoteWorkers(const std::vector<RemoteWorker>& remote_workers) {
  if (!started_ || killed_) {
    return absl::FailedPreconditionError("only a running worker takes new routes");
  }
  std::vector<int> plan_index_by_task;
  RETURN_IF_ERROR(AssignRemoteTasks(topology_id(), layout(), local_executors_, remote_workers,
                                    plan_index_by_task));
  std::vector<int> outbox_of(remote_workers.size());
  for (size_t i = 0; i < remote_workers.size(); ++i) {
    ASSIGN_OR_RETURN(outbox_of[i], OutboxFor(remote_workers[i]));
  }
  auto routes = std::make_unique<RemoteRoutes>();
  routes->codec = codec_.get();
  routes->worker_by_task.reserve(plan_index_by_task.size());
  for (int i : plan_index_by_task) {
    routes->worker_by_task.push_back(i < 0 ? -1 : outbox_of[static_cast<size_t>(i)]);
  }
  for (const auto& outbox : outboxes_) routes->outboxes.push_back(outbox.get());
  const RemoteRoutes* published = routes.get();
  routes_.push_back(std::move(routes));
  // Executors switch on their own threads at their next remote send or
  // flush (Transfer::FollowRoutes); snapshots are never freed before the
  // worker, so one still in use stays valid.
  cluster_->context().remote.store(published, std::memory_order_release);
  const auto grace = std::chrono::seconds(std::max<int64_t>(1, cluster_->context().message_timeout_secs));
  peer_watch_->Update(*published, WatchedPeers(), grace);
  RETURN_IF_ERROR(StartPeerWatch());
  spdlog::info("worker {}: new routes applied in place: {} other worker(s), {} retiring",
               topology_id(), remote_workers.size(), peer_watch_->retiring());
  return absl::OkStatus();
}

absl::Status Worker::RegroupExecutors(const std::vector<std::pair<int32_t, int32_t>>& local,
                                      const std::vector<RemoteWorker>& remote_workers) {
  if (!started_ || killed_) {
    return absl::FailedPreconditionError("only a running worker regroups its executors");
  }
  std::set<int32_t> now;
  std::set<int32_t> then;
  for (const auto& [start, end] : local_executors_) {
    for (int32_t t = start; t <= end; ++t) now.insert(t);
  }
  std::vector<core::ExecutorInfo> infos;
  for (const auto& [start, end] : local) {
    const api::ComponentId* component = layout().ComponentOf(api::TaskId(start));
    if (component == nullptr || end < start || end > layout().num_tasks()) {
      return absl::FailedPreconditionError(
          absl::StrCat("executor ", Range(start, end), " is outside the task layout"));
    }
    for (int32_t t = start; t <= end; ++t) then.insert(t);
    infos.push_back(core::ExecutorInfo{*component, api::TaskId(start), api::TaskId(end)});
  }
  // Tasks may leave (whole bolt executors, none arriving: LocalCluster
  // checks the rest); none may arrive.
  const bool leave = now != then && std::includes(now.begin(), now.end(), then.begin(), then.end());
  if (now != then && !leave) return absl::FailedPreconditionError("tasks arrive at this worker");
  // Checked before anything changes: the routes must fit the new grouping.
  std::vector<int> unused;
  RETURN_IF_ERROR(
      AssignRemoteTasks(topology_id(), layout(), local, remote_workers, unused));
  const auto wait =
      std::chrono::seconds(std::max<int64_t>(1, cluster_->context().message_timeout_secs));
  auto follow = [this] { loop_->RunSync([this] { receiver_->FollowLocal(); }); };
  if (!leave) {
    RETURN_IF_ERROR(cluster_->Regroup(infos, follow, wait));
    local_executors_ = local;
    return UpdateRemoteWorkers(remote_workers);
  }
  // The routes naming the tasks' new worker come first (ADR 0035).
  const std::vector<std::pair<int32_t, int32_t>> before = local_executors_;
  auto publish_remote = [&]() -> absl::Status {
    local_executors_ = local;
    absl::Status s = UpdateRemoteWorkers(remote_workers);
    if (!s.ok()) local_executors_ = before;
    return s;
  };
  return cluster_->Regroup(infos, follow, wait, publish_remote);
}

void Worker::PeerWatchLoop() {
  const absl::Duration interval = absl::FromChrono(options_.peer_watch_interval);
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval)) return;
    }
    peer_watch_->Poll();
  }
}

void Worker::Activate() { cluster_->Activate(); }
void Worker::Deactivate() { cluster_->Deactivate(); }

absl::Status Worker::Kill(std::chrono::milliseconds wait) {
  if (killed_) return absl::OkStatus();
  killed_ = true;
  if (wait.count() > 0 && started_) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    cluster_->DeactivateAndDrain(wait);
    // The other workers keep sending here (their spouts still run): say
    // goodbye, so each finishes its frame, answers, and holds the rest for
    // this slot's next worker; deliver what came before the answers. Its own
    // small budget, so a drain that used all of `wait` on stuck trees still
    // loses no tuple in transit.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    const auto goodbye_wait = std::clamp(left, kGoodbyeWaitMin, kGoodbyeWaitMax);
    server_->SayGoodbye();
    const bool answered =
        PollUntil(goodbye_wait, [this] { return server_->connection_count() == 0; });
    if (!answered) {
      spdlog::warn("worker {}: {} sender(s) did not answer the goodbye within {} ms",
                   topology_id(), server_->connection_count(), goodbye_wait.count());
    }
    cluster_->WaitIdle(goodbye_wait);
  }
  absl::Status s = cluster_->Kill(std::chrono::milliseconds(0));
  if (wait.count() > 0) {
    // What the executors sent last is still queued for other workers.
    PollUntil(kOutboxFlushWait, [this] {
      for (const auto& c : clients_) {
        if (c->connected() && c->queued_bytes() > 0) return false;
      }
      return true;
    });
  }
  StopTransport();
  return s;
}

LocalClusterStats Worker::Stats() const { return cluster_->Stats(); }

}  // namespace tempest::worker
