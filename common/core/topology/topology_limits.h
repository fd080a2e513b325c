#ifndef TEMPEST_COMMON_CORE_TOPOLOGY_LIMITS_H_
#define TEMPEST_COMMON_CORE_TOPOLOGY_LIMITS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/api/config.h"
#include "common/core/topology/topology_def.h"

namespace tempest::core {

// Config keys that raise (or lower) the size limits of a topology. Each is
// capped by a hard ceiling (kHardMax*), which keeps every allocation made
// for a topology's tasks, executors and workers bounded.
inline constexpr std::string_view kTempestLimitsMaxParallelism = "tempest.limits.max.parallelism";
inline constexpr std::string_view kTempestLimitsMaxTasks = "tempest.limits.max.tasks";
inline constexpr std::string_view kTempestLimitsMaxComponents = "tempest.limits.max.components";
inline constexpr std::string_view kTempestLimitsMaxStreams = "tempest.limits.max.streams";
inline constexpr std::string_view kTempestLimitsMaxWorkers = "tempest.limits.max.workers";
inline constexpr std::string_view kTempestLimitsMaxAckers = "tempest.limits.max.ackers";
// Executors (one thread each) that one worker of the topology may run.
inline constexpr std::string_view kTempestLimitsMaxExecutorsPerWorker =
    "tempest.limits.max.executors.per.worker";

// The limits one topology is checked against (defaults; FromConfig reads
// the keys above, clamped to the hard ceilings).
struct TopologyLimits {
  static constexpr int64_t kHardMaxParallelism = 10000;
  static constexpr int64_t kHardMaxTasks = 100000;
  static constexpr int64_t kHardMaxComponents = 10000;
  static constexpr int64_t kHardMaxStreams = 100000;
  static constexpr int64_t kHardMaxWorkers = 10000;
  static constexpr int64_t kHardMaxAckers = 10000;
  // Every executor is a thread of its worker; well past this the host's
  // thread limits (RLIMIT_NPROC, kernel.threads-max) and the scheduler's
  // fairness are the problem, whatever a topology's config says.
  static constexpr int64_t kHardMaxExecutorsPerWorker = 2000;
  // Names (topology, component id, stream id): fixed, not configurable,
  // because they end up in ZooKeeper paths, URLs and process arguments.
  static constexpr size_t kMaxNameLength = 128;

  int64_t max_parallelism = 1000;  // executors of one component
  int64_t max_tasks = 10000;       // tasks of one component, and of the topology
  int64_t max_components = 1000;   // spouts + bolts
  int64_t max_streams = 10000;     // subscriptions (Flux streams)
  int64_t max_workers = 1000;      // topology.workers
  int64_t max_ackers = 1000;       // topology.acker.executors
  int64_t max_executors_per_worker = 500;  // spread evenly over topology.workers

  // Defaults overridden by the tempest.limits.* keys found in `config`; a
  // key that is not an integer in 1..ceiling is reported into `errors`.
  static TopologyLimits FromConfig(const api::Config& config, std::vector<std::string>* errors);
};

// What a name may hold: 1..kMaxNameLength characters. A topology name is
// ASCII letters, digits, '-' and '_' (it becomes part of ZooKeeper paths,
// topology ids, URLs and worker arguments); component and stream ids may
// also hold '.', '$' and ':'. `what` names the thing in the message, e.g.
// "topology name".
absl::Status CheckTopologyName(std::string_view name);
absl::Status CheckComponentOrStreamId(std::string_view what, std::string_view id);
// A topology's owner (who submitted it): empty, or at most kMaxNameLength
// bytes with no control character (C0, DEL, and U+0080..U+009F in UTF-8),
// because owners are printed in tables and terminals.
absl::Status CheckOwnerName(std::string_view owner);

// The executors the busiest of `workers` workers runs when `executors` are
// spread evenly (the even scheduler's spread): ceil(executors / workers).
int64_t ExecutorsPerWorker(int64_t executors, int64_t workers);

// InvalidArgument when ExecutorsPerWorker(executors, workers) exceeds
// `max` (the kTempestLimitsMaxExecutorsPerWorker limit): one line naming
// the counts, the limit and the key. Shared by submit and rebalance.
absl::Status CheckExecutorsPerWorker(int64_t executors, int64_t workers, int64_t max);

// Every limit `def` exceeds, each "file:line: message", in definition order;
// checked before anything is allocated per task or executor. Reads the
// limits and topology.workers / topology.acker.executors from def.config.
std::vector<std::string> CheckTopologyLimits(const TopologyDef& def);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_TOPOLOGY_LIMITS_H_
