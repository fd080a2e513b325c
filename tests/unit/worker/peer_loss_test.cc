// ConnectionLossCounter: losses worked out from what a transport client
// shows at each look (connected, connections so far).

#include "worker/peer_loss.h"

#include <gtest/gtest.h>

namespace tempest::worker {
namespace {

TEST(ConnectionLossCounterTest, TheFirstConnectionIsNoLoss) {
  ConnectionLossCounter c;
  EXPECT_EQ(c.Observe(false, 0), 0);  // not yet connected
  EXPECT_EQ(c.Observe(true, 1), 0);
  EXPECT_EQ(c.Observe(true, 1), 0);
}

TEST(ConnectionLossCounterTest, ADropIsOneLossAndTheOutageIsNotCountedAgain) {
  ConnectionLossCounter c;
  c.Observe(true, 1);
  EXPECT_EQ(c.Observe(false, 1), 1);
  EXPECT_EQ(c.Observe(false, 1), 0);  // still down: the same outage
  EXPECT_EQ(c.Observe(true, 2), 0);   // reconnected
  EXPECT_EQ(c.Observe(false, 2), 1);  // and lost again
}

TEST(ConnectionLossCounterTest, ALossAndAReconnectBetweenTwoLooksStillCount) {
  ConnectionLossCounter c;
  c.Observe(true, 1);
  EXPECT_EQ(c.Observe(true, 2), 1);   // dropped and came back
  EXPECT_EQ(c.Observe(true, 4), 2);   // twice
  EXPECT_EQ(c.Observe(false, 5), 2);  // up once more, then down: two losses
}

TEST(ConnectionLossCounterTest, AConnectionThatCameAndWentBeforeTheFirstLookCounts) {
  ConnectionLossCounter c;
  EXPECT_EQ(c.Observe(false, 1), 1);
}

}  // namespace
}  // namespace tempest::worker
