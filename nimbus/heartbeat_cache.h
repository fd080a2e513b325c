#ifndef TEMPEST_NIMBUS_HEARTBEAT_CACHE_H_
#define TEMPEST_NIMBUS_HEARTBEAT_CACHE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/core/clock.h"
#include "nimbus/even_scheduler.h"

namespace tempest::nimbus {

// nimbus.task.timeout.secs, nimbus.task.launch.secs,
// nimbus.supervisor.timeout.secs (Storm's defaults).
struct LivenessTimeouts {
  std::chrono::seconds task_timeout{30};
  std::chrono::seconds task_launch{120};
  std::chrono::seconds supervisor_timeout{60};
};

// An executor as the stored assignment places it.
struct AssignedExecutor {
  ExecutorId executor;
  WorkerSlot slot;
  int64_t start_time_secs = 0;  // wall clock of the leader that assigned it
};

// What nimbus read from one workerbeats/{topology}/{node}-{port} node.
struct BeatView {
  std::string content;              // the raw node data: only compared for change
  std::set<ExecutorId> executors;   // the executors the worker says it runs
};

// Storm's HeartbeatCache (nimbus/HeartbeatCache.java), extended to
// supervisors. Liveness is judged by nimbus's own monotonic clock only:
// the cache remembers when each beat's content last CHANGED, so a skewed
// worker or supervisor wall clock cannot make anything look alive or dead.
//
// An executor's beat is the beat of the worker on its assigned slot, if
// that beat lists it. The first time the cache sees an executor it counts
// as just heard from (with or without a beat), so a freshly started leader
// gives everyone a full timeout. An executor is alive while
//   now_wall - start_time < task_launch   (Storm's launch grace), or
//   its beat changed less than task_timeout ago.
// A supervisor is alive while its SupervisorInfo.time_secs changed less
// than supervisor_timeout ago; one whose node is gone is simply absent.
//
// Pure state, no I/O; not thread-safe (nimbus uses it on its control
// thread only).
class HeartbeatCache {
 public:
  explicit HeartbeatCache(LivenessTimeouts timeouts) : timeouts_(timeouts) {}

  // `present`: supervisor id -> SupervisorInfo.time_secs, for every node
  // that exists now (the others are forgotten). Returns the alive ones.
  std::set<std::string> UpdateSupervisors(const std::map<std::string, int64_t>& present,
                                          core::Clock::TimePoint now);

  // Updates the cache of one topology from its assignment and current
  // beats (slot -> beat) and returns the executors that are dead. Entries
  // of executors no longer assigned are dropped.
  std::set<ExecutorId> UpdateTopology(const std::string& topology_id,
                                      const std::vector<AssignedExecutor>& assigned,
                                      const std::map<WorkerSlot, BeatView>& beats,
                                      core::Clock::TimePoint now, int64_t now_wall_secs);

  void ForgetTopology(const std::string& topology_id) { executors_.erase(topology_id); }
  // Leadership gained: everything starts again from scratch.
  void Clear();

  const LivenessTimeouts& timeouts() const { return timeouts_; }

 private:
  struct Entry {
    std::string content;
    core::Clock::TimePoint changed_at;
  };
  struct SupervisorEntry {
    int64_t time_secs = 0;
    core::Clock::TimePoint changed_at;
  };

  LivenessTimeouts timeouts_;
  std::map<std::string, std::map<ExecutorId, Entry>> executors_;
  std::map<std::string, SupervisorEntry> supervisors_;
};

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_HEARTBEAT_CACHE_H_
