#ifndef TEMPEST_NIMBUS_TOPOLOGY_STATE_H_
#define TEMPEST_NIMBUS_TOPOLOGY_STATE_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// The user-driven events of Storm's topology state machine
// (Nimbus.TOPO_STATE_TRANSITIONS).
enum class TopologyEvent { kActivate, kDeactivate, kKill, kRebalance };

std::string_view TopologyEventName(TopologyEvent event);
// "ACTIVE", "INACTIVE", "REBALANCING", "KILLED" (Storm UI spelling).
std::string_view TopologyStatusName(v1::TopologyStatus status);

// The status after `event` in `current`, as in Storm:
//   ACTIVE:      activate -> ACTIVE (no-op), deactivate -> INACTIVE, kill -> KILLED,
//                rebalance -> REBALANCING
//   INACTIVE:    activate -> ACTIVE, deactivate -> INACTIVE (no-op), kill -> KILLED,
//                rebalance -> REBALANCING
//   KILLED:      kill -> KILLED (re-arms the removal delay); nothing else
//   REBALANCING: kill -> KILLED; nothing else
// FailedPrecondition for a transition Storm does not have. Pure.
absl::StatusOr<v1::TopologyStatus> NextTopologyStatus(v1::TopologyStatus current,
                                                      TopologyEvent event);

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_TOPOLOGY_STATE_H_
