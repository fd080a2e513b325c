#include "common/net/connection_gate.h"

#include <sys/resource.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/config/config_keys.h"
#include "common/core/status_macros.h"
#include "common/os/limits.h"
#include "spdlog/spdlog.h"

namespace tempest::net {
namespace {

// The reserve actually kept: the configured one, at most a quarter of the
// current soft RLIMIT_NOFILE (read each time: an operator may change it
// with prlimit while the process runs).
size_t EffectiveReserve(size_t configured) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return configured;
  }
  return std::min<size_t>(configured, static_cast<size_t>(limit.rlim_cur / 4));
}

}  // namespace

absl::StatusOr<ConnectionLimits> ConnectionLimitsOf(const api::Config& config,
                                                    const ConnectionLimitKeys& keys,
                                                    ConnectionLimits defaults) {
  ConnectionLimits out = defaults;
  const std::pair<std::string_view, size_t*> fields[] = {
      {keys.max_connections, &out.max_connections},
      {keys.max_per_peer, &out.max_per_peer},
      {keys.descriptor_reserve, &out.descriptor_reserve},
  };
  for (const auto& [key, field] : fields) {
    const api::Value* v = config.Find(key);
    if (v == nullptr) continue;
    // The range lives with every other key's, in config_keys.cc; a key
    // without one is a programming error, reported rather than read loosely.
    if (!core::RangeOfKey(key)) {
      return absl::InternalError(absl::StrCat("config ", api::Sv(key), " has no range"));
    }
    if (absl::Status s = core::CheckConfigValue(key, *v); !s.ok()) return s;
    ASSIGN_OR_RETURN(const int64_t i, v->CoerceInt());
    *field = static_cast<size_t>(i);
  }
  return out;
}

size_t ConnectionGate::count_of(const std::string& peer) const {
  auto it = peers_.find(peer);
  return it == peers_.end() ? 0 : it->second.count;
}

bool ConnectionGate::OldestIdle(const Peer* peer, const std::vector<Key>& taken, Key* out) const {
  const auto& idle = peer != nullptr ? peer->idle : idle_;
  for (const auto& [since, key] : idle) {
    if (std::find(taken.begin(), taken.end(), key) != taken.end()) continue;
    *out = key;
    return true;
  }
  return false;
}

ConnectionGate::Verdict ConnectionGate::Admit(const std::string& peer) {
  Verdict v;
  Key victim = 0;
  auto p = peers_.find(peer);
  if (p != peers_.end() && p->second.count >= limits_.max_per_peer) {
    v.reason = "peer_limit";
    v.admit = OldestIdle(&p->second, v.evict, &victim);
    if (v.admit) v.evict.push_back(victim);
    return v;
  }
  if (entries_.size() >= limits_.max_connections) {
    v.reason = "total_limit";
    v.admit = OldestIdle(nullptr, v.evict, &victim);
    if (v.admit) v.evict.push_back(victim);
    return v;
  }
  const size_t reserve = EffectiveReserve(limits_.descriptor_reserve);
  if (reserve == 0) return v;
  const size_t free = os::FreeDescriptors();
  if (free >= reserve) return v;
  // Into the reserve: idle connections give their descriptors back, two
  // for each newcomer so that the reserve refills while a flood goes on.
  v.reason = "descriptor_reserve";
  for (int i = 0; i < 2 && OldestIdle(nullptr, v.evict, &victim); ++i) v.evict.push_back(victim);
  v.admit = free + v.evict.size() >= reserve;
  return v;
}

void ConnectionGate::Report(const std::string& peer, const char* reason, bool refused) {
  metrics_
      .GetCounter(refused ? "tempest_net_connections_refused_total"
                          : "tempest_net_connections_evicted_total",
                  {{"side", side_}, {"reason", reason}})
      .Add();
  uint64_t withheld = 0;
  if (!log_.Allow(&withheld)) return;
  spdlog::warn("{}: {} from {} ({}: {} open, {} from that address; {} similar lines withheld)",
               side_,
               refused ? "refusing a connection" : "closing the oldest idle connection for one",
               peer,
               reason, entries_.size(), count_of(peer), withheld);
}

void ConnectionGate::Add(Key key, const std::string& peer, bool idle) {
  auto [it, inserted] = entries_.emplace(key, Entry{peer, 0});
  if (!inserted) return;
  ++peers_[peer].count;
  if (idle) SetIdle(key, true);
}

void ConnectionGate::Unidle(Key key, Entry& e) {
  if (e.idle_since == 0) return;
  idle_.erase({e.idle_since, key});
  peers_[e.peer].idle.erase({e.idle_since, key});
  e.idle_since = 0;
}

void ConnectionGate::SetIdle(Key key, bool idle) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (!idle) return Unidle(key, e);
  if (e.idle_since != 0) return;
  e.idle_since = next_idle_++;
  idle_.insert({e.idle_since, key});
  peers_[e.peer].idle.insert({e.idle_since, key});
}

void ConnectionGate::Remove(Key key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  Unidle(key, it->second);
  auto p = peers_.find(it->second.peer);
  if (p != peers_.end() && --p->second.count == 0) peers_.erase(p);
  entries_.erase(it);
}

}  // namespace tempest::net
