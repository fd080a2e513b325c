#include "nimbus/heartbeat_cache.h"

namespace tempest::nimbus {

std::set<std::string> HeartbeatCache::UpdateSupervisors(
    const std::map<std::string, int64_t>& present, core::Clock::TimePoint now) {
  std::map<std::string, SupervisorEntry> next;
  std::set<std::string> alive;
  for (const auto& [id, time_secs] : present) {
    auto it = supervisors_.find(id);
    SupervisorEntry e;
    if (it == supervisors_.end() || it->second.time_secs != time_secs) {
      e = SupervisorEntry{time_secs, now};
    } else {
      e = it->second;
    }
    if (now - e.changed_at < timeouts_.supervisor_timeout) alive.insert(id);
    next[id] = e;
  }
  supervisors_ = std::move(next);
  return alive;
}

std::set<ExecutorId> HeartbeatCache::UpdateTopology(const std::string& topology_id,
                                                    const std::vector<AssignedExecutor>& assigned,
                                                    const std::map<WorkerSlot, BeatView>& beats,
                                                    core::Clock::TimePoint now,
                                                    int64_t now_wall_secs) {
  std::map<ExecutorId, Entry>& cache = executors_[topology_id];
  std::map<ExecutorId, Entry> next;
  std::set<ExecutorId> dead;
  for (const AssignedExecutor& a : assigned) {
    std::string content;
    auto beat = beats.find(a.slot);
    if (beat != beats.end() && beat->second.executors.contains(a.executor)) {
      content = beat->second.content;
    }
    auto it = cache.find(a.executor);
    Entry e;
    if (it == cache.end() || it->second.content != content) {
      e = Entry{std::move(content), now};
    } else {
      e = it->second;
    }
    const bool launching =
        now_wall_secs - a.start_time_secs < timeouts_.task_launch.count();
    const bool timed_out = now - e.changed_at >= timeouts_.task_timeout;
    if (!launching && timed_out) dead.insert(a.executor);
    next[a.executor] = std::move(e);
  }
  cache = std::move(next);
  return dead;
}

void HeartbeatCache::Clear() {
  executors_.clear();
  supervisors_.clear();
}

}  // namespace tempest::nimbus
