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

namespace tempest::worker {
namespace {

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
  RETURN_IF_ERROR(AssignExecutors(plan, layout, part, w->routes_.worker_by_task));

  ASSIGN_OR_RETURN(w->codec_, EnvelopeCodec::Create(layout, streams));
  w->routes_.codec = w->codec_.get();

  if (options.metrics == nullptr) {
    w->owned_metrics_ = std::make_unique<core::MetricsRegistry>();
    w->options_.metrics = w->owned_metrics_.get();
  }
  ASSIGN_OR_RETURN(w->loop_, net::EventLoop::Create("tempest-net"));
  RETURN_IF_ERROR(w->ConnectRemoteWorkers(plan));

  part.remote = &w->routes_;
  part.extra_producers = 1;
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
  core::MetricsRegistry& metrics = *options_.metrics;
  for (const RemoteWorker& rw : plan.remote_workers) {
    net::TransportClientOptions co;
    co.host = rw.host;
    co.port = rw.port;
    co.secret = plan.secret;
    ASSIGN_OR_RETURN(const size_t max_frame, net::MaxFrameBytesOf(plan.def.config));
    co.max_frame_payload_bytes = std::min(co.max_frame_payload_bytes, max_frame);
    co.max_queued_bytes = options_.max_queued_bytes;
    co.flush_interval = options_.flush_interval;
    co.reconnect_initial = options_.reconnect_initial;
    co.reconnect_max = options_.reconnect_max;
    co.metrics = &metrics;
    ASSIGN_OR_RETURN(std::unique_ptr<net::TransportClient> client,
                     net::TransportClient::Create(*loop_, co));
    // A quarter of the connection's queue, so several executors' batches
    // fit at once; at most Transfer::kRemoteBatchBytes.
    const size_t max_batch = std::max<size_t>(
        1024, std::min(Transfer::kRemoteBatchBytes, options_.max_queued_bytes / 4));
    outboxes_.push_back(std::make_unique<RemoteOutbox>(absl::StrCat(rw.host, ":", rw.port),
                                                       client.get(), max_batch, metrics));
    routes_.outboxes.push_back(outboxes_.back().get());
    clients_.push_back(std::move(client));
  }
  return absl::OkStatus();
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
        if (r->OnFrame(id, messages)) return true;
        OnPaused();
        return false;
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
  if (!clients_.empty()) {
    std::vector<PeerLossWatch::Peer> peers;
    for (size_t i = 0; i < clients_.size(); ++i) {
      peers.push_back({outboxes_[i]->peer(), clients_[i].get()});
    }
    peer_watch_ = std::make_unique<PeerLossWatch>(cluster_->context(), routes_, std::move(peers));
    RETURN_IF_ERROR(os::StartThread(peer_watch_thread_, "the worker's peer watch",
                                    &Worker::PeerWatchLoop, this));
  }
  return cluster_->Start(activate);
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
  absl::Status s = cluster_->Kill(wait);
  StopTransport();
  return s;
}

LocalClusterStats Worker::Stats() const { return cluster_->Stats(); }

}  // namespace tempest::worker
