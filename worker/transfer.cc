#include "worker/transfer.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "spdlog/spdlog.h"
#include "worker/envelope_codec.h"
#include "worker/executor.h"
#include "worker/remote_outbox.h"

namespace tempest::worker {

absl::Status Transfer::AddTarget(api::TaskId task) {
  const size_t t = static_cast<size_t>(task.value());
  if (task.value() <= 0 || t >= ctx_.executor_by_task.size()) {
    return absl::InvalidArgumentError(absl::StrCat("no executor runs task ", task.value()));
  }
  if (by_task_.size() <= t) by_task_.resize(t + 1);
  Target& target = by_task_[t];
  if (target.producer != nullptr || target.self || target.remote >= 0) return absl::OkStatus();
  if (ctx_.executor_by_task[t] == nullptr) {
    const int worker = ctx_.remote != nullptr ? ctx_.remote->WorkerOf(task.value()) : -1;
    if (worker < 0) {
      return absl::InvalidArgumentError(absl::StrCat("no executor runs task ", task.value()));
    }
    target.remote = worker;
    return absl::OkStatus();
  }
  Executor* owner = ctx_.executor_by_task[t];
  if (owner == self_) {
    target.self = true;
    return absl::OkStatus();
  }
  // One producer per (this executor, target executor): reuse it for the
  // target's other tasks.
  for (size_t other = 0; other < by_task_.size(); ++other) {
    if (by_task_[other].producer != nullptr && ctx_.executor_by_task[other] == owner) {
      target.producer = by_task_[other].producer;
      return absl::OkStatus();
    }
  }
  if (owner->queue() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("task ", task.value(), " runs in an executor without a receive queue"));
  }
  ASSIGN_OR_RETURN(target.producer, owner->queue()->RegisterProducer());
  producers_.push_back(target.producer);
  return absl::OkStatus();
}

absl::Status Transfer::Connect(const std::vector<api::TaskId>& tasks, bool to_spout_lanes) {
  by_task_.assign(ctx_.executor_by_task.size(), Target{});
  if (ctx_.remote != nullptr) remote_.resize(ctx_.remote->outboxes.size());
  for (api::TaskId task : tasks) {
    RETURN_IF_ERROR(AddTarget(task));
  }
  for (int32_t acker : ctx_.acker_tasks) {
    RETURN_IF_ERROR(AddTarget(api::TaskId(acker)));
  }
  lane_by_task_.assign(ctx_.executor_by_task.size(), -1);
  if (to_spout_lanes) {
    std::map<AckLane*, int> index;
    for (size_t t = 1; t < ctx_.executor_by_task.size(); ++t) {
      Executor* e = ctx_.executor_by_task[t];
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

void Transfer::SendRemote(int worker, Envelope&& e) {
  scratch_.clear();
  if (absl::Status s = ctx_.remote->codec->Encode(e, scratch_); !s.ok()) {
    spdlog::error("transfer: cannot encode a message for task {}: {}", e.task, s.ToString());
    ++dropped_;
    return;
  }
  ++remote_sent_;
  Remote& r = remote_[worker];
  r.data.Add(e.task, scratch_);
  if (r.data.payload_size() >= ctx_.remote->outboxes[worker]->max_batch_bytes()) {
    FlushRemoteData(r, worker);
  }
}

void Transfer::FlushRemoteData(Remote& r, int worker) {
  if (!ctx_.remote->outboxes[worker]->SendBlocking(r.data, self_->stop_flag())) ++dropped_;
  r.data.Clear();
  r.unkicked = true;
}

void Transfer::FlushRemoteReplies(Remote& r, int worker) {
  RemoteOutbox& outbox = *ctx_.remote->outboxes[worker];
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
    const int worker = ctx_.remote != nullptr ? ctx_.remote->WorkerOf(e.task) : -1;
    if (worker < 0 || static_cast<size_t>(worker) >= remote_.size()) {
      ++dropped_;
      return;
    }
    scratch_.clear();
    if (!ctx_.remote->codec->Encode(e, scratch_).ok()) {
      ++dropped_;
      return;
    }
    ++remote_sent_;
    Remote& r = remote_[worker];
    r.replies.Add(e.task, scratch_);
    if (r.replies.payload_size() >= ctx_.remote->outboxes[worker]->max_batch_bytes()) {
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
      ctx_.remote->outboxes[w]->Kick();
      r.unkicked = false;
    }
  }
}

}  // namespace tempest::worker
