#ifndef TEMPEST_COMMON_NET_CONNECTION_GATE_H_
#define TEMPEST_COMMON_NET_CONNECTION_GATE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/core/metrics_registry.h"
#include "common/core/rate_limited_log.h"

namespace tempest::net {

// How many connections one listener holds, and how many descriptors the
// process keeps free for everything else (heartbeat files, ZooKeeper
// reconnects, outgoing transport connections).
struct ConnectionLimits {
  size_t max_connections = 1024;  // all peers together
  size_t max_per_peer = 256;      // from one IP address
  // Below this many free descriptors (RLIMIT_NOFILE minus open) a new
  // connection is only taken in place of an idle one. Capped at a quarter
  // of RLIMIT_NOFILE, so a small limit still leaves room for connections.
  size_t descriptor_reserve = 32;
};

// The config keys of one server kind's ConnectionLimits.
struct ConnectionLimitKeys {
  std::string_view max_connections;
  std::string_view max_per_peer;
  std::string_view descriptor_reserve;
};

// `keys` read from `config`, each an integer in the range config_keys.cc
// gives (InvalidArgument naming the key otherwise); absent keys keep
// `defaults`.
absl::StatusOr<ConnectionLimits> ConnectionLimitsOf(const api::Config& config,
                                                    const ConnectionLimitKeys& keys,
                                                    ConnectionLimits defaults);

// The admission policy shared by every accept loop of common/net
// (TransportServer, HttpServer): per-peer and total caps and the descriptor
// reserve, applied the moment a connection is accepted.
//
// A connection is "idle" while it costs its peer nothing to hold: for the
// transport until it has answered the handshake, for HTTP while no request
// is being received. When a cap is reached, the oldest idle connection (of
// the same peer for the per-peer cap) makes room; only when none is idle is
// the new connection refused. So a flood of idle sockets can delay a real
// peer by one handshake at most and never lock it out, and a real peer that
// authenticated is never closed for a newcomer.
//
// Loop thread only; holds no sockets (the server closes what Admit names).
class ConnectionGate {
 public:
  using Key = uint64_t;

  struct Verdict {
    bool admit = true;
    std::vector<Key> evict;      // close these (oldest idle first)
    const char* reason = "";     // metric label when something is closed
  };

  // `side` names the server in log lines and in
  // tempest_net_connections_refused_total{side,reason}.
  ConnectionGate(ConnectionLimits limits, std::string side, core::MetricsRegistry& metrics)
      : limits_(limits), side_(std::move(side)), metrics_(metrics) {}

  // What to do with a connection from `peer` (an address, no port) that was
  // just accepted (its descriptor is already open).
  Verdict Admit(const std::string& peer);
  // Records an admitted connection; `idle` as described above.
  void Add(Key key, const std::string& peer, bool idle);
  void SetIdle(Key key, bool idle);
  void Remove(Key key);
  // Logs (rate-limited) and counts a connection closed by the verdict: the
  // refused newcomer (`refused`) or an idle one closed to make room.
  void Report(const std::string& peer, const char* reason, bool refused);

  size_t size() const { return entries_.size(); }
  size_t count_of(const std::string& peer) const;
  const ConnectionLimits& limits() const { return limits_; }

 private:
  struct Entry {
    std::string peer;
    uint64_t idle_since = 0;  // 0: busy; else the order it became idle in
  };
  struct Peer {
    size_t count = 0;
    std::set<std::pair<uint64_t, Key>> idle;  // oldest first
  };

  void Unidle(Key key, Entry& e);
  // Oldest idle connection not yet in `taken`: of `peer`, or of anyone when
  // `peer` is null.
  bool OldestIdle(const Peer* peer, const std::vector<Key>& taken, Key* out) const;

  ConnectionLimits limits_;
  std::string side_;
  core::MetricsRegistry& metrics_;
  core::RateLimitedLog log_{3, std::chrono::seconds(10)};
  std::map<Key, Entry> entries_;
  std::map<std::string, Peer> peers_;
  std::set<std::pair<uint64_t, Key>> idle_;  // oldest first, every peer
  uint64_t next_idle_ = 1;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_CONNECTION_GATE_H_
