#include "nimbus/topology_state.h"

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"

namespace tempest::nimbus {

std::string_view TopologyEventName(TopologyEvent event) {
  switch (event) {
    case TopologyEvent::kActivate:
      return "activate";
    case TopologyEvent::kDeactivate:
      return "deactivate";
    case TopologyEvent::kKill:
      return "kill";
    case TopologyEvent::kRebalance:
      return "rebalance";
  }
  return "unknown";
}

std::string_view TopologyStatusName(v1::TopologyStatus status) {
  switch (status) {
    case v1::ACTIVE:
      return "ACTIVE";
    case v1::INACTIVE:
      return "INACTIVE";
    case v1::REBALANCING:
      return "REBALANCING";
    case v1::KILLED:
      return "KILLED";
    default:
      return "UNKNOWN";
  }
}

absl::StatusOr<v1::TopologyStatus> NextTopologyStatus(v1::TopologyStatus current,
                                                      TopologyEvent event) {
  switch (current) {
    case v1::ACTIVE:
    case v1::INACTIVE:
      switch (event) {
        case TopologyEvent::kActivate:
          return v1::ACTIVE;
        case TopologyEvent::kDeactivate:
          return v1::INACTIVE;
        case TopologyEvent::kKill:
          return v1::KILLED;
        case TopologyEvent::kRebalance:
          return v1::REBALANCING;
      }
      break;
    case v1::KILLED:
    case v1::REBALANCING:
      if (event == TopologyEvent::kKill) return v1::KILLED;
      break;
    default:
      break;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("cannot ", api::Sv(TopologyEventName(event)), " a topology that is ",
                   api::Sv(TopologyStatusName(current))));
}

}  // namespace tempest::nimbus
