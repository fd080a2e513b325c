#ifndef TEMPEST_WORKER_PEER_LOSS_H_
#define TEMPEST_WORKER_PEER_LOSS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
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
// Routes that change while the worker runs (Worker::UpdateRemoteWorkers)
// call Update() with the new routes and every peer, old and new, index for
// index with RemoteRoutes::outboxes. A peer that no longer runs any task
// of the topology is retired: nothing is sent to it any more, and once its
// connection is down or `retire_grace` has passed, its client is closed.
// A peer that was up when retired is a worker that drains before it stops
// (its own plan changed too), so its going is no loss; one that was
// already down, or is closed while still up, takes what was queued for it
// with the client, and the trees that may have crossed it are failed then.
//
// Poll() from one thread (the worker's watch thread), Update() from the
// control thread; it posts a MessageKind::kSpoutFailAll into each affected
// spout task's lane.
class PeerLossWatch {
 public:
  struct Peer {
    std::string name;  // host:port
    net::TransportClient* client = nullptr;
  };
  PeerLossWatch(const WorkerContext& ctx, const RemoteRoutes& routes, std::vector<Peer> peers);

  // Looks at every connection once and acts on each loss; returns the
  // number of losses seen.
  int64_t Poll() ABSL_LOCKS_EXCLUDED(mu_);

  // The routes changed: `peers` are all of RemoteRoutes::outboxes (the old
  // ones first, at their old indices).
  void Update(const RemoteRoutes& routes, std::vector<Peer> peers,
              std::chrono::steady_clock::duration retire_grace) ABSL_LOCKS_EXCLUDED(mu_);

  // A new plan names peer `index` again: un-retires it and returns true,
  // unless its client was closed already (then the caller needs a new one).
  bool Keep(size_t index) ABSL_LOCKS_EXCLUDED(mu_);

  // Peers retired and not closed yet.
  size_t retiring() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Watched {
    Peer peer;
    ConnectionLossCounter counter;
    std::vector<SpoutTaskLane> affected;
    core::Counter* losses = nullptr;
    bool retired = false;
    bool drains = false;  // it was up when retired (see Update)
    bool closed = false;
    std::chrono::steady_clock::time_point close_by;
  };
  void OnLost(const Watched& w, const char* why);
  // Closes a retired peer's client once it is down or its grace is over.
  void MaybeClose(Watched& w, bool connected, bool just_failed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const WorkerContext& ctx_;
  mutable absl::Mutex mu_;
  std::vector<Watched> watched_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_PEER_LOSS_H_
