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
    : topology_id_(ctx.topology_id),
      peers_(std::move(peers)),
      counters_(peers_.size()),
      affected_(SpoutTasksByPeer(ctx, routes)) {
  affected_.resize(peers_.size());
  for (const Peer& p : peers_) {
    loss_counters_.push_back(&ctx.metrics->GetCounter(
        "tempest_worker_peer_losses_total", {{"topology", topology_id_}, {"peer", p.name}}));
  }
}

int64_t PeerLossWatch::Poll() {
  int64_t total = 0;
  for (size_t i = 0; i < peers_.size(); ++i) {
    const net::TransportClient& c = *peers_[i].client;
    // connect_count first: a connection that comes up between the two reads
    // then shows as up without its count, which the next look settles.
    const int64_t count = c.connect_count();
    const int64_t losses = counters_[i].Observe(c.connected(), count);
    if (losses > 0) OnLost(i, losses);
    total += losses;
  }
  return total;
}

void PeerLossWatch::OnLost(size_t peer, int64_t losses) {
  loss_counters_[peer]->Add(losses);
  const std::vector<SpoutTaskLane>& tasks = affected_[peer];
  // The transport logs the loss itself; this line is for what it costs.
  if (tasks.empty()) return;
  for (const SpoutTaskLane& s : tasks) {
    std::vector<Envelope> batch(1);
    batch[0].kind = MessageKind::kSpoutFailAll;
    batch[0].task = s.task;
    s.lane->Post(batch);
  }
  spdlog::warn(
      "worker {}: lost the connection to worker {}; failing the pending trees of {} now "
      "instead of after topology.message.timeout.secs",
      topology_id_, peers_[peer].name,
      core::Counted(static_cast<int64_t>(tasks.size()), "spout task"));
}

}  // namespace tempest::worker
