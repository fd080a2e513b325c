#include "nimbus/stats_history.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "common/core/stream_stats.h"

namespace tempest::nimbus {
namespace {

// Snapshots closer together than this are not kept (REST reads record too).
constexpr int64_t kMinSnapshotSpacingSecs = 5;
// How far apart kept snapshots may be, by their age: dense for the 10 min
// window, coarser for 3 h and 1 day; older than a day and an hour: dropped.
int64_t SpacingForAge(int64_t age_secs) {
  if (age_secs <= 15 * 60) return 10;
  if (age_secs <= 4 * 3600) return 120;
  return 1200;
}
constexpr int64_t kMaxAgeSecs = 86400 + 3600;

// One number that only grows while an executor keeps its counts: it
// shrinking means the report started again from zero.
int64_t Progress(const v1::ExecutorStats& e) {
  int64_t sum = 0;
  for (const v1::StreamStats& s : e.outputs()) {
    sum += s.emitted() + s.transferred() + s.acked() + s.failed();
  }
  for (const v1::StreamStats& s : e.inputs()) sum += s.executed() + s.acked() + s.failed();
  return sum;
}

StatsHistory::Key KeyOf(const v1::ExecutorStats& e) {
  return {e.component(), e.start_task(), e.end_task()};
}

}  // namespace

std::string StatsWindowName(int64_t window_secs) {
  return window_secs <= 0 ? ":all-time" : std::to_string(window_secs);
}

std::string StatsWindowPretty(int64_t window_secs) {
  switch (window_secs) {
    case 600:
      return "10m 0s";
    case 10800:
      return "3h 0m 0s";
    case 86400:
      return "1d 0h 0m 0s";
    default:
      return "All time";
  }
}

std::optional<int64_t> ParseStatsWindow(std::string_view text) {
  if (text.empty() || text == ":all-time" || text == "all-time") return 0;
  int64_t secs = 0;
  if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &secs)) return std::nullopt;
  for (int64_t w : kStatsWindows) {
    if (w == secs) return secs;
  }
  return std::nullopt;
}

void StatsHistory::Record(const std::string& topology_id, int64_t now_secs,
                          const std::vector<v1::ExecutorStats>& reported,
                          const std::vector<Key>& current_executors) {
  absl::MutexLock lock(&mu_);
  TopologyStats& t = topologies_[topology_id];
  for (const v1::ExecutorStats& e : reported) {
    const Key key = KeyOf(e);
    auto last = t.last_reported.find(key);
    if (last != t.last_reported.end() && Progress(e) < Progress(last->second)) {
      // Started again from zero: what the earlier incarnation counted stays.
      v1::ExecutorStats& carried = t.carried[key];
      if (carried.component().empty()) {
        carried.set_component(e.component());
        carried.set_start_task(e.start_task());
        carried.set_end_task(e.end_task());
        carried.set_spout(e.spout());
      }
      core::AddExecutorStreams(last->second, carried);
    }
    t.last_reported[key] = e;
    v1::ExecutorStats total = e;
    if (auto c = t.carried.find(key); c != t.carried.end())
      core::AddExecutorStreams(c->second, total);
    t.totals[key] = std::move(total);
  }
  // Executors of an older layout keep their last totals (they are only
  // read as part of their component); the uptime of retired ones is void.
  const std::set<Key> current(current_executors.begin(), current_executors.end());
  for (auto& [key, total] : t.totals) {
    if (!current.contains(key)) total.set_uptime_secs(0);
  }
  if (t.snapshots.empty() || now_secs - t.snapshots.back().time_secs >= kMinSnapshotSpacingSecs) {
    t.snapshots.push_back(Snapshot{now_secs, t.totals});
    Thin(t.snapshots, now_secs);
  }
}

void StatsHistory::RecordTopology(const StoredTopology& topology,
                                  const std::optional<v1::Assignment>& assignment,
                                  const std::vector<StoredBeat>& beats, int64_t now_secs) {
  std::map<std::pair<int, int>, WorkerSlot> slot_of;
  if (assignment.has_value()) {
    for (const v1::ExecutorAssignment& e : assignment->executors()) {
      slot_of[{e.start_task(), e.end_task()}] = WorkerSlot{e.node(), e.port()};
    }
  }
  std::vector<v1::ExecutorStats> reported;
  for (const StoredBeat& b : beats) {
    if (!b.parsed) continue;
    for (const v1::ExecutorStats& e : b.beat.executor_stats()) {
      auto slot = slot_of.find({e.start_task(), e.end_task()});
      if (slot != slot_of.end() && slot->second == b.slot) reported.push_back(e);
    }
  }
  std::vector<Key> current;
  for (const v1::ExecutorRange& r : topology.base.executors()) {
    current.emplace_back(r.component(), r.start_task(), r.end_task());
  }
  Record(topology.id, now_secs, reported, current);
}

void StatsHistory::Thin(std::deque<Snapshot>& snapshots, int64_t now_secs) {
  while (snapshots.size() > 1 && now_secs - snapshots.front().time_secs > kMaxAgeSecs) {
    snapshots.pop_front();
  }
  if (snapshots.size() < 3) return;
  std::deque<Snapshot> kept;
  kept.push_back(std::move(snapshots.front()));
  for (size_t i = 1; i + 1 < snapshots.size(); ++i) {
    const int64_t gap = snapshots[i + 1].time_secs - kept.back().time_secs;
    if (gap <= SpacingForAge(now_secs - snapshots[i].time_secs)) continue;  // redundant
    kept.push_back(std::move(snapshots[i]));
  }
  kept.push_back(std::move(snapshots.back()));
  snapshots = std::move(kept);
}

std::vector<v1::ExecutorStats> StatsHistory::Window(const std::string& topology_id,
                                                    int64_t window_secs, int64_t now_secs,
                                                    int64_t launch_time_secs) const {
  absl::MutexLock lock(&mu_);
  std::vector<v1::ExecutorStats> out;
  auto it = topologies_.find(topology_id);
  if (it == topologies_.end()) return out;
  const TopologyStats& t = it->second;
  const Snapshot* base = nullptr;
  if (window_secs > 0 && launch_time_secs < now_secs - window_secs) {
    // The newest snapshot taken at or before the window began; without one
    // the oldest there is (this nimbus has not watched that long).
    for (const Snapshot& s : t.snapshots) {
      if (s.time_secs <= now_secs - window_secs || base == nullptr) base = &s;
    }
  }
  for (const auto& [key, total] : t.totals) {
    v1::ExecutorStats e = total;
    if (base != nullptr) {
      if (auto b = base->totals.find(key); b != base->totals.end()) {
        core::SubtractExecutorStreams(b->second, e);
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

void StatsHistory::Retain(const std::vector<std::string>& live) {
  absl::MutexLock lock(&mu_);
  const std::set<std::string> keep(live.begin(), live.end());
  std::erase_if(topologies_, [&](const auto& entry) { return !keep.contains(entry.first); });
}

}  // namespace tempest::nimbus
