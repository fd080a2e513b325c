// Storm's topology state machine (Nimbus.TOPO_STATE_TRANSITIONS).

#include "nimbus/topology_state.h"

#include "gtest/gtest.h"

namespace tempest::nimbus {
namespace {

TEST(TopologyStateTest, ActivateAndDeactivateToggleAndAreIdempotent) {
  EXPECT_EQ(*NextTopologyStatus(v1::ACTIVE, TopologyEvent::kDeactivate), v1::INACTIVE);
  EXPECT_EQ(*NextTopologyStatus(v1::INACTIVE, TopologyEvent::kActivate), v1::ACTIVE);
  EXPECT_EQ(*NextTopologyStatus(v1::ACTIVE, TopologyEvent::kActivate), v1::ACTIVE);
  EXPECT_EQ(*NextTopologyStatus(v1::INACTIVE, TopologyEvent::kDeactivate), v1::INACTIVE);
}

TEST(TopologyStateTest, KillWorksFromEveryStatus) {
  for (v1::TopologyStatus s : {v1::ACTIVE, v1::INACTIVE, v1::KILLED, v1::REBALANCING}) {
    EXPECT_EQ(*NextTopologyStatus(s, TopologyEvent::kKill), v1::KILLED) << TopologyStatusName(s);
  }
}

TEST(TopologyStateTest, KilledAndRebalancingRefuseEverythingButKill) {
  for (v1::TopologyStatus s : {v1::KILLED, v1::REBALANCING}) {
    for (TopologyEvent e :
         {TopologyEvent::kActivate, TopologyEvent::kDeactivate, TopologyEvent::kRebalance}) {
      absl::StatusOr<v1::TopologyStatus> next = NextTopologyStatus(s, e);
      EXPECT_TRUE(absl::IsFailedPrecondition(next.status())) << TopologyStatusName(s);
    }
  }
  EXPECT_EQ(NextTopologyStatus(v1::KILLED, TopologyEvent::kActivate).status().message(),
            "cannot activate a topology that is KILLED");
}

TEST(TopologyStateTest, RebalanceFromActiveOrInactive) {
  EXPECT_EQ(*NextTopologyStatus(v1::ACTIVE, TopologyEvent::kRebalance), v1::REBALANCING);
  EXPECT_EQ(*NextTopologyStatus(v1::INACTIVE, TopologyEvent::kRebalance), v1::REBALANCING);
}

}  // namespace
}  // namespace tempest::nimbus
