#include "worker/remote_receiver.h"

#include <algorithm>
#include <utility>

#include "common/core/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/executor.h"
#include "worker/remote_outbox.h"

namespace tempest::worker {

RemoteReceiver::RemoteReceiver(WorkerContext& ctx, const EnvelopeCodec& codec,
                               std::atomic<int64_t>* delivered)
    : ctx_(ctx),
      codec_(codec),
      delivered_(delivered),
      unknown_task_(&ctx.metrics->GetCounter("tempest_worker_remote_unknown_task_total",
                                             {{"topology", ctx.topology_id}})),
      malformed_(&ctx.metrics->GetCounter("tempest_worker_remote_malformed_total",
                                          {{"topology", ctx.topology_id}})),
      pauses_(&ctx.metrics->GetCounter("tempest_worker_remote_pauses_total",
                                       {{"topology", ctx.topology_id}})),
      forwarded_(&ctx.metrics->GetCounter("tempest_worker_messages_forwarded_total",
                                          {{"topology", ctx.topology_id}})) {}

absl::StatusOr<std::unique_ptr<RemoteReceiver>> RemoteReceiver::Create(
    WorkerContext& ctx, const EnvelopeCodec& codec, std::atomic<int64_t>* delivered) {
  std::unique_ptr<RemoteReceiver> r(new RemoteReceiver(ctx, codec, delivered));
  RETURN_IF_ERROR(r->Resolve());
  return r;
}

absl::Status RemoteReceiver::Resolve() {
  local_routes_ = ctx_.local.load(std::memory_order_acquire);
  if (local_routes_ == nullptr) return absl::InternalError("no local routes published");
  const std::vector<Executor*>& executor_by_task = local_routes_->executor_by_task;
  const size_t n = executor_by_task.size();
  left_.resize(n, false);
  for (size_t t = 1; t < n; ++t) {
    const bool ran = (t < producer_by_task_.size() && producer_by_task_[t] != nullptr) ||
                     (t < lane_by_task_.size() && lane_by_task_[t] >= 0);
    if (executor_by_task[t] != nullptr) {
      left_[t] = false;
    } else if (ran) {
      left_[t] = true;
    }
  }
  producer_by_task_.assign(n, nullptr);
  lane_by_task_.assign(n, -1);
  lanes_.clear();
  producers_.clear();
  std::map<AckLane*, int> lanes;
  for (size_t t = 1; t < n; ++t) {
    Executor* e = executor_by_task[t];
    if (e == nullptr) continue;
    if (e->lane() != nullptr) {
      auto [it, inserted] = lanes.emplace(e->lane(), static_cast<int>(lanes_.size()));
      if (inserted) lanes_.push_back(Lane{e->lane(), {}});
      lane_by_task_[t] = it->second;
      continue;
    }
    if (e->queue() == nullptr) continue;
    auto it = by_executor_.find(e);
    if (it == by_executor_.end()) {
      ASSIGN_OR_RETURN(ExecutorQueue::Producer * p, e->queue()->RegisterProducer());
      it = by_executor_.emplace(e, p).first;
    }
    if (std::find(producers_.begin(), producers_.end(), it->second) == producers_.end()) {
      producers_.push_back(it->second);
    }
    producer_by_task_[t] = it->second;
  }
  local_version_.store(local_routes_->version, std::memory_order_release);
  return absl::OkStatus();
}

void RemoteReceiver::SwitchLocal() {
  // Between frames: FlushOutputs published everything staged and posted
  // every lane batch, so nothing is left for the old executors.
  if (absl::Status s = Resolve(); !s.ok()) {
    spdlog::error("worker {}: cannot follow the regrouped executors: {}", ctx_.topology_id,
                  s.ToString());
  }
}

void RemoteReceiver::NoteBad(const char* what, int32_t task, const absl::Status& why) {
  uint64_t suppressed = 0;
  if (!bad_log_.Allow(&suppressed)) return;
  spdlog::error("worker {}: {} message for task {} skipped: {} ({} similar suppressed)",
                ctx_.topology_id, what, task, std::string(why.message()), suppressed);
}

RemoteReceiver::Result RemoteReceiver::Deliver(Envelope& e) {
  const size_t t = static_cast<size_t>(e.task);
  if (e.task > 0 && t < lane_by_task_.size()) {
    if (lane_by_task_[t] >= 0) {
      if (e.kind != MessageKind::kSpoutAck && e.kind != MessageKind::kSpoutFail &&
          e.kind != MessageKind::kSpoutReset) {
        malformed_->Add(1);
        NoteBad("non-reply", e.task, absl::InvalidArgumentError("spout tasks take acker replies"));
        return Result::kSkipped;
      }
      lanes_[lane_by_task_[t]].batch.push_back(std::move(e));
      ++delivered_local_;
      return Result::kDelivered;
    }
    if (ExecutorQueue::Producer* p = producer_by_task_[t]; p != nullptr) {
      if (!p->TryPush(e)) {
        if (p->staged() == 0 && local_routes_->executor_by_task[t]->queue()->closed()) {
          return Result::kSkipped;  // shutting down
        }
        return Result::kFull;
      }
      ++delivered_local_;
      return Result::kDelivered;
    }
  }
  if (e.task > 0 && t < left_.size() && left_[t]) return Forward(e);
  unknown_task_->Add(1);
  NoteBad("unroutable", e.task, absl::NotFoundError("this worker does not run that task"));
  return Result::kSkipped;
}

RemoteReceiver::Result RemoteReceiver::Forward(Envelope& e) {
  const RemoteRoutes* routes = ctx_.remote.load(std::memory_order_acquire);
  const int worker = routes != nullptr ? routes->WorkerOf(e.task) : -1;
  if (worker < 0) {
    unknown_task_->Add(1);
    NoteBad("unroutable", e.task, absl::NotFoundError("the task left and has no worker now"));
    return Result::kSkipped;
  }
  const size_t w = static_cast<size_t>(worker);
  if (forward_.size() <= w) forward_.resize(routes->outboxes.size());
  // A full batch goes first; with no room for it, this message waits in
  // the connection's backlog (the connection pauses).
  if (forward_[w].payload_size() >= routes->outboxes[w]->max_batch_bytes() &&
      !SendForward(*routes, w)) {
    return Result::kFull;
  }
  scratch_.clear();
  if (absl::Status s = codec_.Encode(e, scratch_); !s.ok()) {
    malformed_->Add(1);
    NoteBad("unencodable", e.task, s);
    return Result::kSkipped;
  }
  forward_[w].Add(e.task, scratch_);
  forwarded_->Add(1);
  return Result::kDelivered;
}

bool RemoteReceiver::SendForward(const RemoteRoutes& routes, size_t worker) {
  net::Batch& batch = forward_[worker];
  if (batch.empty()) return true;
  RemoteOutbox& outbox = *routes.outboxes[worker];
  if (!outbox.TrySend(batch)) return false;
  batch.Clear();
  outbox.Kick();
  return true;
}

void RemoteReceiver::FlushOutputs() {
  for (ExecutorQueue::Producer* p : producers_) {
    // Fails only once the queue is closed, which discards staged items anyway.
    if (p->staged() > 0) (void)p->Flush();
  }
  for (Lane& lane : lanes_) {
    if (!lane.batch.empty()) lane.lane->Post(lane.batch);
  }
  delivered_->store(delivered_local_, std::memory_order_release);
  if (forward_.empty()) return;
  // A snapshot at least as new as the one each batch was staged under:
  // outbox indices are stable, and outboxes are only added.
  const RemoteRoutes* routes = ctx_.remote.load(std::memory_order_acquire);
  bool waiting = false;
  for (size_t w = 0; w < forward_.size(); ++w) waiting = !SendForward(*routes, w) || waiting;
  forward_waiting_.store(waiting, std::memory_order_release);
}

bool RemoteReceiver::OnFrame(net::ConnectionId id, std::span<const net::Message> messages) {
  FollowLocal();
  for (size_t i = 0; i < messages.size(); ++i) {
    Envelope e;
    if (absl::Status s = codec_.Decode(messages[i].bytes, messages[i].task_id, e); !s.ok()) {
      malformed_->Add(1);
      NoteBad("malformed", messages[i].task_id, s);
      continue;
    }
    if (Deliver(e) != Result::kFull) continue;
    // Full ring: keep this and every later message of the frame, decoded
    // (the bytes die with this call), and pause the connection.
    std::vector<Envelope>& backlog = backlog_[id];
    backlog.reserve(backlog.size() + messages.size() - i);
    backlog.push_back(std::move(e));
    for (size_t j = i + 1; j < messages.size(); ++j) {
      Envelope rest;
      if (absl::Status s = codec_.Decode(messages[j].bytes, messages[j].task_id, rest); !s.ok()) {
        malformed_->Add(1);
        NoteBad("malformed", messages[j].task_id, s);
        continue;
      }
      backlog.push_back(std::move(rest));
    }
    FlushOutputs();
    pauses_->Add(1);
    paused_count_.store(static_cast<int64_t>(backlog_.size()), std::memory_order_release);
    return false;
  }
  FlushOutputs();
  return true;
}

void RemoteReceiver::RetryPaused(net::TransportServer& server) {
  FollowLocal();
  for (auto it = backlog_.begin(); it != backlog_.end();) {
    std::vector<Envelope>& backlog = it->second;
    size_t done = 0;
    while (done < backlog.size() && Deliver(backlog[done]) != Result::kFull) ++done;
    backlog.erase(backlog.begin(), backlog.begin() + static_cast<std::ptrdiff_t>(done));
    if (backlog.empty()) {
      server.Resume(it->first);
      it = backlog_.erase(it);
    } else {
      ++it;
    }
  }
  FlushOutputs();
  paused_count_.store(static_cast<int64_t>(backlog_.size()), std::memory_order_release);
}

}  // namespace tempest::worker
