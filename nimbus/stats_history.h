#ifndef TEMPEST_NIMBUS_STATS_HISTORY_H_
#define TEMPEST_NIMBUS_STATS_HISTORY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "nimbus/topology_store.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// Storm UI's statistics windows, in seconds; 0 is "all time".
inline constexpr int64_t kStatsWindows[] = {600, 10800, 86400, 0};
// Storm's spelling of a window: "600", "10800", "86400" or ":all-time".
std::string StatsWindowName(int64_t window_secs);
// Storm UI's windowPretty: "10m 0s", "3h 0m 0s", "1d 0h 0m 0s", "All time".
std::string StatsWindowPretty(int64_t window_secs);
// Parses the `window` query parameter (Storm's values, plus "all-time");
// an empty text is all time; nullopt for anything else.
std::optional<int64_t> ParseStatsWindow(std::string_view text);

// The executors' statistics of each topology as this nimbus has watched
// them, so that the REST pages can show Storm's windows (10 min, 3 h, 1 day)
// and all-time totals that never go backwards.
//
// Workers report all-time counts per executor, carried across the worker
// restarts of a slot (WorkerHeartbeat.executor_stats). Two things still
// make a report smaller than the last one: the executor moved to another
// slot (rebalance, a dead supervisor), or its slot lost the carried counts.
// Record notices a drop and from then on adds the counts seen before it
// (the executor's earlier incarnations), and keeps the counts of executors
// that no longer exist (a rebalance changed the task ranges) in their
// component's totals.
//
// Windows subtract the snapshot taken closest before the window began.
// Snapshots are kept densely for the last minutes and thinned with age
// (about 250 per topology). Before this nimbus has watched a topology for
// a whole window, a window longer than the topology's life is its all-time
// count, and one shorter starts at the oldest snapshot (so it may show less
// than really happened).
//
// In memory only: a new leader starts watching afresh (its all-time counts
// are still the workers' carried totals). Thread-safe: REST handlers and the
// control loop record and read concurrently.
class StatsHistory {
 public:
  // Executors of a topology, keyed by (component, start task, end task).
  using Key = std::tuple<std::string, int, int>;

  // Records the executors' statistics reported now by the topology's
  // current workers. `current_executors` are the executors the topology
  // has today (those absent from it are retired into their component).
  void Record(const std::string& topology_id, int64_t now_secs,
              const std::vector<v1::ExecutorStats>& reported,
              const std::vector<Key>& current_executors);

  // Record for one topology as nimbus read it: each executor's statistics
  // from the beat of the slot the assignment gives it (a stale beat of
  // another slot that still lists it is ignored).
  void RecordTopology(const StoredTopology& topology,
                      const std::optional<v1::Assignment>& assignment,
                      const std::vector<StoredBeat>& beats, int64_t now_secs);

  // Every executor's counts within the window ending now (0 = all time),
  // retired executors included (each as its own entry, spout flag and
  // component kept). `launch_time_secs`: when the topology started.
  std::vector<v1::ExecutorStats> Window(const std::string& topology_id, int64_t window_secs,
                                        int64_t now_secs, int64_t launch_time_secs) const;

  // Drops what is kept of topologies not in `live`.
  void Retain(const std::vector<std::string>& live);

 private:
  struct Snapshot {
    int64_t time_secs = 0;
    std::map<Key, v1::ExecutorStats> totals;
  };
  struct TopologyStats {
    std::map<Key, v1::ExecutorStats> last_reported;  // as the workers said
    std::map<Key, v1::ExecutorStats> carried;        // earlier incarnations
    std::map<Key, v1::ExecutorStats> totals;         // carried + last reported
    std::deque<Snapshot> snapshots;                  // oldest first
  };
  static void Thin(std::deque<Snapshot>& snapshots, int64_t now_secs);

  mutable absl::Mutex mu_;
  std::map<std::string, TopologyStats> topologies_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_STATS_HISTORY_H_
