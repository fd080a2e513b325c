#ifndef TEMPEST_NIMBUS_REBALANCE_H_
#define TEMPEST_NIMBUS_REBALANCE_H_

#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/core/topology/topology_def.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// Storm's RebalanceOptions (what `storm rebalance -w -n -e` sends).
struct RebalanceRequest {
  std::optional<int> wait_secs;    // nullopt: the topology's message timeout
  std::optional<int> num_workers;  // nullopt: unchanged
  std::map<std::string, int> executors;  // component -> executor count
};

// Checks a rebalance request against a stored topology: wait >= 0,
// num_workers >= 1, every component known (the system "__acker" is not
// rebalanced this way) with 1 <= executors <= its task count (tasks are
// fixed at submission, as in Storm), and within the limits a submission is
// held to (num_workers <= tempest.limits.max.workers, executors <=
// tempest.limits.max.parallelism, as the topology's config sets them).
// InvalidArgument naming the problem and the limit's key.
// Pure.
absl::Status ValidateRebalance(const v1::StormBase& base, const RebalanceRequest& request);

// Where a pending rebalance keeps its executor counts until the leader
// applies them: a config override holding {"component": count} as JSON.
// Not component_executors, because a worker (re)started during the wait
// loads the stored definition, and it must still match the assignment it
// runs. The key is in tempest.* so the config loader knows it; the leader
// removes it when it applies the rebalance.
inline constexpr char kPendingExecutorsKey[] = "tempest.rebalance.executors";

// The StormBase of a topology entering REBALANCING: status REBALANCING,
// prev_status saved, rebalance_at_secs = now + wait, rebalance_num_workers,
// and the requested counts under kPendingExecutorsKey. FailedPrecondition
// if the state machine does not allow it (KILLED, REBALANCING). Validates
// first.
absl::StatusOr<v1::StormBase> BeginRebalance(const v1::StormBase& base,
                                             const RebalanceRequest& request, int64_t now_secs);

// The executor counts of a pending rebalance (empty if none or if the
// stored text does not parse).
std::map<std::string, int> PendingExecutors(const v1::StormBase& base);

// DO_REBALANCE: num_workers from rebalance_num_workers (when set), the
// pending executor counts moved into component_executors, the layout (executors, num_executors, num_tasks, components) recomputed from
// core::LoadStoredTopology + core::TaskLayout with the new executor counts,
// status back to prev_status, rebalance fields cleared. Pure.
absl::StatusOr<v1::StormBase> FinishRebalance(const v1::StormBase& base);

// Writes executors, num_executors, num_tasks and components of `base` from
// `def` laid out with core::TaskLayout (acker executors from the
// topology's config, as every worker computes them). Shared by submission
// and rebalance so both lay a topology out the same way.
absl::Status RecomputeLayout(const core::TopologyDef& def, v1::StormBase& base);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_REBALANCE_H_
