#ifndef TEMPEST_WORKER_PEER_LOSS_H_
#define TEMPEST_WORKER_PEER_LOSS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/core/metrics_registry.h"
#include "common/net/transport_client.h"
#include "worker/ack_lane.h"
#include "worker/remote_outbox.h"
#include "worker/worker_context.h"

namespace tempest::worker {

// How many times a connection was lost between two looks at it, worked out
// from what a TransportClient shows (connected(), connect_count()), so a loss
// and a reconnect that both happen between two looks still count. The first
// connection is not a loss. Pure; one per connection.
class ConnectionLossCounter {
 public:
  // The losses since the previous call.
  int64_t Observe(bool connected, int64_t connect_count);

 private:
  bool was_connected_ = false;
  int64_t last_count_ = 0;
};

// A local spout task and the lane its acker replies arrive on.
struct SpoutTaskLane {
  AckLane* lane = nullptr;
  int32_t task = 0;
};

// For each other worker (the index of RemoteRoutes::outboxes), the local
// spout tasks whose trees can pass through it: an acker task runs there (the
// acker of a tree is chosen by its root, so every tracked spout has trees
// there), or a task of a component that the spout's streams reach, directly
// or through other bolts. Empty lists when acking is off: nothing is
// pending. Control thread, after the executors are built.
std::vector<std::vector<SpoutTaskLane>> SpoutTasksByPeer(const WorkerContext& ctx,
                                                         const RemoteRoutes& routes);

// Fails at once the trees that a lost worker took with it. When the
// connection to another worker of the topology breaks (the worker died, was
// killed, or its host is cut off), the trees in flight through it cannot
// complete: their tuples or acks were in its queues, or its acker held their
// state. Waiting topology.message.timeout.secs (30 s by default) to replay
// them stalls every pipeline behind them, so each local spout task that can
// have trees there fails all its pending trees now (Spout::Fail, as a
// timeout would). Trees that did not cross the lost worker are failed too,
// since a spout cannot tell them apart: they are replayed, never lost
// (at-least-once), and late acks for them are ignored.
//
// Poll() from one thread (the worker's watch thread); it posts a
// MessageKind::kSpoutFailAll into each affected spout task's lane.
class PeerLossWatch {
 public:
  struct Peer {
    std::string name;  // host:port
    const net::TransportClient* client = nullptr;
  };
  PeerLossWatch(const WorkerContext& ctx, const RemoteRoutes& routes, std::vector<Peer> peers);

  // Looks at every connection once and acts on each loss; returns the
  // number of losses seen.
  int64_t Poll();

 private:
  void OnLost(size_t peer, int64_t losses);

  const std::string topology_id_;
  std::vector<Peer> peers_;
  std::vector<ConnectionLossCounter> counters_;
  std::vector<std::vector<SpoutTaskLane>> affected_;
  std::vector<core::Counter*> loss_counters_;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_PEER_LOSS_H_
