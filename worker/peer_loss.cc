#include "worker/peer_loss.h"

#include <deque>
#include <set>
#include <utility>

#include "common/core/log_text.h"
#include "spdlog/spdlog.h"
#include "worker/envelope.h"
#include "worker/executor.h"

namespace tempest::worker {
namespace {

// The components a spout's tuples can reach: the bolts subscribed to it,
// then the bolts subscribed to those, and so on.
std::set<api::ComponentId> Reachable(const core::TopologyDef& def,
                                     const api::ComponentId& spout) {
  std::set<api::ComponentId> seen;
  std::deque<api::ComponentId> frontier{spout};
  while (!frontier.empty()) {
    const api::ComponentId from = frontier.front();
    frontier.pop_front();
    for (const core::StreamDef& s : def.streams) {
      if (s.from == from && seen.insert(s.to).second) frontier.push_back(s.to);
    }
  }
  return seen;
}

// Marks the peer (outbox index) that runs `task`, if another worker does.
void MarkPeerOf(int32_t task, const RemoteRoutes& routes, std::vector<bool>& peers) {
  const int peer = routes.WorkerOf(task);
  if (peer >= 0 && static_cast<size_t>(peer) < peers.size()) {
    peers[static_cast<size_t>(peer)] = true;
  }
}

}  // namespace

int64_t ConnectionLossCounter::Observe(bool connected, int64_t connect_count) {
  // Every connection that began (the count's growth) or was already up ends
  // in a loss unless it is still up now.
  const int64_t began = connect_count - last_count_;
  const int64_t losses = (was_connected_ ? 1 : 0) + began - (connected ? 1 : 0);
  was_connected_ = connected;
  last_count_ = connect_count;
  return losses > 0 ? losses : 0;
}

std::vector<std::vector<SpoutTaskLane>> SpoutTasksByPeer(const WorkerContext& ctx,
                                                         const RemoteRoutes& routes) {
  const size_t num_peers = routes.outboxes.size();
  std::vector<std::vector<SpoutTaskLane>> by_peer(num_peers);
  if (!ctx.acking() || ctx.def == nullptr || ctx.layout == nullptr) return by_peer;
  std::vector<bool> acker_peers(num_peers, false);
  for (int32_t t : ctx.acker_tasks) MarkPeerOf(t, routes, acker_peers);
  for (size_t t = 1; t < ctx.executor_by_task.size(); ++t) {
    Executor* e = ctx.executor_by_task[t];
    if (e == nullptr || e->kind() != Executor::Kind::kSpout || e->lane() == nullptr) continue;
    std::vector<bool> peers = acker_peers;
    for (const api::ComponentId& c : Reachable(*ctx.def, e->info().component)) {
      for (api::TaskId task : ctx.layout->TasksOf(c)) MarkPeerOf(task.value(), routes, peers);
    }
    for (size_t p = 0; p < num_peers; ++p) {
      if (peers[p]) by_peer[p].push_back(SpoutTaskLane{e->lane(), static_cast<int32_t>(t)});
    }
  }
  return by_peer;
}

PeerLossWatch::PeerLossWatch(const WorkerContext& ctx, const RemoteRoutes& routes,
                             std::vector<Peer> peers)
    : ctx_(ctx) {
  Update(routes, std::move(peers), std::chrono::steady_clock::duration::zero());
}

void PeerLossWatch::Update(const RemoteRoutes& routes, std::vector<Peer> peers,
                           std::chrono::steady_clock::duration retire_grace) {
  std::vector<std::vector<SpoutTaskLane>> affected = SpoutTasksByPeer(ctx_, routes);
  affected.resize(peers.size());
  std::vector<bool> serves(peers.size(), false);
  for (size_t t = 1; t < routes.worker_by_task.size(); ++t) {
    const int peer = routes.worker_by_task[t];
    if (peer >= 0 && static_cast<size_t>(peer) < serves.size()) serves[peer] = true;
  }
  const auto now = std::chrono::steady_clock::now();
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < peers.size(); ++i) {
    if (i == watched_.size()) {
      Watched w;
      w.peer = std::move(peers[i]);
      w.losses = &ctx_.metrics->GetCounter("tempest_worker_peer_losses_total",
                                           {{"topology", ctx_.topology_id}, {"peer", w.peer.name}});
      watched_.push_back(std::move(w));
    }
    Watched& w = watched_[i];
    // Trees already sent under the old routes may still cross a peer, so
    // a peer's affected spout tasks only ever grow.
    for (const SpoutTaskLane& s : affected[i]) {
      bool known = false;
      for (const SpoutTaskLane& k : w.affected) known = known || k.task == s.task;
      if (!known) w.affected.push_back(s);
    }
    if (!serves[i] && !w.retired && !w.closed) {
      w.retired = true;
      // A peer still up when it is retired is a worker whose own plan
      // changed too: it drains its queues before it stops
      // (WorkerProcess::Run), so its connection ending is no loss. One
      // already down died with whatever was sent to it since.
      w.drains = w.peer.client->connected();
      w.close_by = now + retire_grace;
    } else if (serves[i]) {
      w.retired = false;  // back in the plan before it was closed
    }
  }
}

int64_t PeerLossWatch::Poll() {
  int64_t total = 0;
  absl::MutexLock lock(&mu_);
  for (Watched& w : watched_) {
    if (w.closed) continue;
    const net::TransportClient& c = *w.peer.client;
    // connect_count first: a connection that comes up between the two reads
    // then shows as up without its count, which the next look settles.
    const int64_t count = c.connect_count();
    const bool connected = c.connected();
    const int64_t losses = w.counter.Observe(connected, count);
    if (losses > 0) {
      w.losses->Add(losses);
      if (!(w.retired && w.drains)) OnLost(w, "lost the connection to");
    }
    total += losses;
    if (w.retired) MaybeClose(w, connected, /*just_failed=*/losses > 0);
  }
  return total;
}

void PeerLossWatch::MaybeClose(Watched& w, bool connected, bool just_failed) {
  if (connected && std::chrono::steady_clock::now() < w.close_by) return;
  w.closed = true;
  w.retired = false;
  w.peer.client->Close();
  // Closed while up (its grace is over) or dead since before it was
  // retired: what was still queued for it is gone with the client, unless
  // this very look saw the loss and failed the same trees already.
  if (connected || (!w.drains && !just_failed)) {
    OnLost(w, "closed the connection to retired");
  }
  spdlog::info("worker {}: worker {} runs nothing of the topology any more; connection closed",
               ctx_.topology_id, w.peer.name);
}

bool PeerLossWatch::Keep(size_t index) {
  absl::MutexLock lock(&mu_);
  if (index >= watched_.size()) return true;  // not watched yet: never closed
  Watched& w = watched_[index];
  if (w.closed) return false;
  w.retired = false;
  return true;
}

size_t PeerLossWatch::retiring() const {
  absl::MutexLock lock(&mu_);
  size_t n = 0;
  for (const Watched& w : watched_) n += w.retired ? 1 : 0;
  return n;
}

void PeerLossWatch::OnLost(const Watched& w, const char* why) {
  const std::vector<SpoutTaskLane>& tasks = w.affected;
  // The transport logs the loss itself; this line is for what it costs.
  if (tasks.empty()) return;
  for (const SpoutTaskLane& s : tasks) {
    std::vector<Envelope> batch(1);
    batch[0].kind = MessageKind::kSpoutFailAll;
    batch[0].task = s.task;
    s.lane->Post(batch);
  }
  spdlog::warn(
      "worker {}: {} worker {}; failing the pending trees of {} now "
      "instead of after topology.message.timeout.secs",
      ctx_.topology_id, why, w.peer.name,
      core::Counted(static_cast<int64_t>(tasks.size()), "spout task"));
}

}  // namespace tempest::worker
