#include "worker/transfer.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/envelope_codec.h"
#include "worker/executor.h"
#include "worker/remote_outbox.h"

namespace tempest::worker {

absl::Status Transfer::AddTarget(api::TaskId task) {
  const std::vector<Executor*>& executor_by_task = local_routes_->executor_by_task;
  const size_t t = static_cast<size_t>(task.value());
  if (task.value() <= 0 || t >= executor_by_task.size()) {
    return absl::InvalidArgumentError(absl::StrCat("no executor runs task ", task.value()));
  }
  if (by_task_.size() <= t) by_task_.resize(t + 1);
  Target& target = by_task_[t];
  if (target.producer != nullptr || target.self || target.remote >= 0) return absl::OkStatus();
  Executor* owner = executor_by_task[t];
  if (owner == nullptr) {
    const int worker = routes_ != nullptr ? routes_->WorkerOf(task.value()) : -1;
    if (worker < 0) {
      return absl::InvalidArgumentError(absl::StrCat("no executor runs task ", task.value()));
    }
    target.remote = worker;
    return absl::OkStatus();
  }
  if (owner == self_) {
    target.self = true;
    return absl::OkStatus();
  }
  if (owner->queue() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("task ", task.value(), " runs in an executor without a receive queue"));
  }
  ASSIGN_OR_RETURN(target.producer, ProducerFor(owner));
  if (std::find(producers_.begin(), producers_.end(), target.producer) == producers_.end()) {
    producers_.push_back(target.producer);
  }
  return absl::OkStatus();
}

absl::StatusOr<ExecutorQueue::Producer*> Transfer::ProducerFor(Executor* owner) {
  // One producer per (this executor, target executor): reused for the
  // target's other tasks.
  for (const auto& [executor, producer] : registered_) {
    if (executor == owner) return producer;
  }
  ASSIGN_OR_RETURN(ExecutorQueue::Producer * producer, owner->queue()->RegisterProducer());
  registered_.emplace_back(owner, producer);
  return producer;
}

void Transfer::FollowLocal() {
  const LocalRoutes* now = ctx_.local.load(std::memory_order_acquire);
  if (now == local_routes_ || now == nullptr) return;
  // Flush published everything staged on the old producers: from here on
  // nothing of this executor enters a queue the old snapshot named and the
  // new one does not.
  // Tasks that left this worker (ADR 0035) are routed remotely by the
  // RemoteRoutes published before this snapshot: this acquire load of
  // `local` makes that one visible, though Flush's earlier look at `remote`
  // may have missed it.
  FollowRoutes();
  local_routes_ = now;
  producers_.clear();
  for (size_t t = 1; t < by_task_.size(); ++t) {
    Target& target = by_task_[t];
    if (target.producer == nullptr && !target.self) continue;
    target = Target{};
    if (absl::Status s = AddTarget(api::TaskId(static_cast<int32_t>(t))); !s.ok()) {
      spdlog::error("transfer: the new local routes leave task {} without a route: {}", t,
                    s.ToString());
    }
  }
  local_version_.store(now->version, std::memory_order_release);
}

absl::Status Transfer::Connect(const std::vector<api::TaskId>& tasks, bool to_spout_lanes) {
  local_routes_ = ctx_.local.load(std::memory_order_acquire);
  if (local_routes_ == nullptr) return absl::InternalError("no local routes published");
  local_version_.store(local_routes_->version, std::memory_order_release);
  const std::vector<Executor*>& executor_by_task = local_routes_->executor_by_task;
  by_task_.assign(executor_by_task.size(), Target{});
  routes_ = ctx_.remote.load(std::memory_order_acquire);
  if (routes_ != nullptr) remote_.resize(routes_->outboxes.size());
  for (api::TaskId task : tasks) {
    RETURN_IF_ERROR(AddTarget(task));
  }
  for (int32_t acker : ctx_.acker_tasks) {
    RETURN_IF_ERROR(AddTarget(api::TaskId(acker)));
  }
  // Spout executors are never regrouped in place, so the lanes stay.
  lane_by_task_.assign(executor_by_task.size(), -1);
  if (to_spout_lanes) {
    std::map<AckLane*, int> index;
    for (size_t t = 1; t < executor_by_task.size(); ++t) {
      Executor* e = executor_by_task[t];
      if (e == nullptr || e->lane() == nullptr) continue;
      auto [it, inserted] = index.emplace(e->lane(), static_cast<int>(lanes_.size()));
      if (inserted) lanes_.push_back(Lane{e->lane(), {}});
      lane_by_task_[t] = it->second;
    }
  }
  return absl::OkStatus();
}

void Transfer::Send(Envelope&& e) {
  const size_t t = static_cast<size_t>(e.task);
  ++sent_;
  if (t < by_task_.size()) {
    Target& target = by_task_[t];
    if (target.self) {
      local_.push_back(std::move(e));
      return;
    }
    if (target.producer != nullptr) {
      if (!target.producer->Push(std::move(e)).ok()) {
        ++dropped_;
        --sent_;
      }
      return;
    }
    if (target.remote >= 0) {
      --sent_;
      SendRemote(target.remote, std::move(e));
      return;
    }
  }
  // Routing only yields connected tasks; reaching here is a wiring bug.
  spdlog::error("transfer: no route to task {}; message dropped", e.task);
  ++dropped_;
  --sent_;
}

bool Transfer::FollowRoutes() {
  const RemoteRoutes* now = ctx_.remote.load(std::memory_order_acquire);
  if (now == routes_) return false;
  // Only where other workers' tasks run has changed (this worker's
  // executors, and so every local target, are the same). Outbox indices
  // are stable across snapshots, so batches staged under the old routes
  // still go where they were meant to.
  routes_ = now;
  remote_.resize(routes_->outboxes.size());
  for (size_t t = 0; t < by_task_.size(); ++t) {
    Target& target = by_task_[t];
    if (target.remote < 0) continue;
    target.remote = routes_->WorkerOf(static_cast<int32_t>(t));
    if (target.remote < 0) {
      spdlog::error("transfer: the new routes have no worker for task {}", t);
    }
  }
  return true;
}

template <typename Encode>
void Transfer::EncodeToRemote(int worker, int32_t task, Encode&& encode) {
  if (FollowRoutes()) {
    // Checked per remote message, not per Flush: an executor that was
    // parked through the change sends its first tuple before it flushes.
    worker = by_task_[static_cast<size_t>(task)].remote;
    if (worker < 0) {
      ++dropped_;
      return;
    }
  }
  Remote& r = remote_[worker];
  absl::Status status;
  // Straight into the batch: a scratch buffer would cost a copy per message.
  r.data.AddEncoded(task, [&](std::string& out) {
    status = encode(*routes_->codec, out);
    return status.ok();
  });
  if (!status.ok()) {
    spdlog::error("transfer: cannot encode a message for task {}: {}", task, status.ToString());
    ++dropped_;
    return;
  }
  ++remote_sent_;
  if (r.data.payload_size() >= routes_->outboxes[worker]->max_batch_bytes()) {
    FlushRemoteData(r, worker);
  }
}

bool Transfer::SendTuple(int32_t task, const std::shared_ptr<const api::StreamSchema>& schema,
                         api::TaskId source, api::Values& values, bool take_values,
                         api::TupleAnchors&& anchors, const CarriedInit* init) {
  const size_t t = static_cast<size_t>(task);
  bool local = false;
  if (t < by_task_.size()) {
    const Target& target = by_task_[t];
    if (!target.self && target.producer == nullptr && target.remote >= 0) {
      EncodeToRemote(target.remote, task, [&](const EnvelopeCodec& codec, std::string& out) {
        return codec.EncodeTuple(*schema, source.value(), anchors, values, out);
      });
      return false;
    }
    local = target.self || target.producer != nullptr;
  }
  // Without a route Send() reports the wiring bug; the init stays with the
  // spout, which sends it to the acker, so the tree times out as before.
  if (!local) init = nullptr;
  Envelope e;
  e.tuple =
      api::Tuple(schema, source, take_values ? std::move(values) : values, std::move(anchors));
  if (init != nullptr) e.tuple.CarryInit(init->xor_of_edges, init->spout_task);
  e.task = task;
  Send(std::move(e));
  return init != nullptr;
}

void Transfer::SendRemote(int worker, Envelope&& e) {
  EncodeToRemote(worker, e.task, [&e](const EnvelopeCodec& codec, std::string& out) {
    return codec.Encode(e, out);
  });
}

void Transfer::FlushRemoteData(Remote& r, int worker) {
  if (!routes_->outboxes[worker]->SendBlocking(r.data, self_->stop_flag())) ++dropped_;
  r.data.Clear();
  r.unkicked = true;
}

void Transfer::FlushRemoteReplies(Remote& r, int worker) {
  RemoteOutbox& outbox = *routes_->outboxes[worker];
  if (!r.replies.empty()) {
    if (r.overflow.empty() && outbox.TrySend(r.replies)) {
      r.replies.Clear();
      r.unkicked = true;
    } else {
      // Keep order: behind what is already waiting.
      r.overflow.push_back(std::move(r.replies));
      r.replies = net::Batch();
    }
  }
  size_t sent = 0;
  while (sent < r.overflow.size() && outbox.TrySend(r.overflow[sent])) ++sent;
  if (sent > 0) {
    r.overflow.erase(r.overflow.begin(), r.overflow.begin() + sent);
    r.unkicked = true;
  }
}

size_t Transfer::remote_overflow() const {
  size_t n = 0;
  for (const Remote& r : remote_) n += r.overflow.size();
  return n;
}

void Transfer::PostToSpout(Envelope&& e) {
  const size_t t = static_cast<size_t>(e.task);
  if (t >= lane_by_task_.size() || lane_by_task_[t] < 0) {
    if (routes_ != nullptr) FollowRoutes();
    const int worker = routes_ != nullptr ? routes_->WorkerOf(e.task) : -1;
    if (worker < 0 || static_cast<size_t>(worker) >= remote_.size()) {
      ++dropped_;
      return;
    }
    Remote& r = remote_[worker];
    if (!r.replies.AddEncoded(
            e.task, [&](std::string& out) { return routes_->codec->Encode(e, out).ok(); })) {
      ++dropped_;
      return;
    }
    ++remote_sent_;
    if (r.replies.payload_size() >= routes_->outboxes[worker]->max_batch_bytes()) {
      r.overflow.push_back(std::move(r.replies));
      r.replies = net::Batch();
    }
    return;
  }
  ++sent_;
  lanes_[lane_by_task_[t]].batch.push_back(std::move(e));
}

void Transfer::Flush(bool idle) {
  for (ExecutorQueue::Producer* p : producers_) {
    // Fails only once the queue is closed, which discards staged items anyway.
    if (p->staged() > 0) (void)p->Flush();
  }
  for (Lane& lane : lanes_) {
    if (!lane.batch.empty()) lane.lane->Post(lane.batch);
  }
  for (size_t w = 0; w < remote_.size(); ++w) {
    Remote& r = remote_[w];
    if (!r.data.empty()) FlushRemoteData(r, static_cast<int>(w));
    if (!r.replies.empty() || !r.overflow.empty()) FlushRemoteReplies(r, static_cast<int>(w));
    if (idle && r.unkicked) {
      routes_->outboxes[w]->Kick();
      r.unkicked = false;
    }
  }
  // After the flush above, so nothing staged waits for the switch.
  if (routes_ != nullptr) FollowRoutes();
  // One acquire load per flush; the switch itself is rare.
  if (ctx_.local.load(std::memory_order_acquire) != local_routes_) FollowLocal();
}

}  // namespace tempest::worker
