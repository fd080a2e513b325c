// ConnectionGate: per-address and total caps, and which connection makes
// room (the oldest idle one) — the policy every accept loop shares.

#include "common/net/connection_gate.h"

#include "common/api/config.h"
#include "common/core/metrics_registry.h"
#include "common/net/http_server.h"
#include "common/net/transport_server.h"
#include "gtest/gtest.h"

namespace tempest::net {
namespace {

ConnectionLimits Limits(size_t total, size_t per_peer) {
  // No reserve: these cases must not depend on the test process's own
  // descriptors.
  return ConnectionLimits{
      .max_connections = total, .max_per_peer = per_peer, .descriptor_reserve = 0};
}

class ConnectionGateTest : public ::testing::Test {
 protected:
  core::MetricsRegistry metrics_;
};

TEST_F(ConnectionGateTest, AdmitsUnderTheCaps) {
  ConnectionGate gate(Limits(4, 2), "test", metrics_);
  const ConnectionGate::Verdict v = gate.Admit("10.0.0.1");
  EXPECT_TRUE(v.admit);
  EXPECT_TRUE(v.evict.empty());
  gate.Add(1, "10.0.0.1", true);
  EXPECT_EQ(gate.size(), 1u);
  EXPECT_EQ(gate.count_of("10.0.0.1"), 1u);
}

TEST_F(ConnectionGateTest, APeerAtItsCapLosesItsOldestIdleConnection) {
  ConnectionGate gate(Limits(100, 3), "test", metrics_);
  gate.Add(1, "a", true);
  gate.Add(2, "b", true);  // another peer's idle connection is not taken
  gate.Add(3, "a", true);
  gate.Add(4, "a", true);
  ConnectionGate::Verdict v = gate.Admit("a");
  EXPECT_TRUE(v.admit);
  ASSERT_EQ(v.evict.size(), 1u);
  EXPECT_EQ(v.evict[0], 1u);
  EXPECT_STREQ(v.reason, "peer_limit");
  // Busy connections are never taken: with all three busy, refused.
  for (ConnectionGate::Key k : {1, 3, 4}) gate.SetIdle(k, false);
  v = gate.Admit("a");
  EXPECT_FALSE(v.admit);
  EXPECT_TRUE(v.evict.empty());
  EXPECT_TRUE(gate.Admit("b").admit) << "another address is not affected";
}

TEST_F(ConnectionGateTest, IdleOrderIsWhenAConnectionBecameIdle) {
  ConnectionGate gate(Limits(3, 100), "test", metrics_);
  gate.Add(1, "a", true);
  gate.Add(2, "b", true);
  gate.Add(3, "c", true);
  // 1 serves a request and goes back to waiting: now the youngest idle.
  gate.SetIdle(1, false);
  gate.SetIdle(1, true);
  ConnectionGate::Verdict v = gate.Admit("d");
  EXPECT_TRUE(v.admit);
  ASSERT_EQ(v.evict.size(), 1u);
  EXPECT_EQ(v.evict[0], 2u);
  EXPECT_STREQ(v.reason, "total_limit");
  gate.Remove(2);
  gate.Add(5, "d", false);
  gate.SetIdle(3, false);
  gate.SetIdle(1, false);
  v = gate.Admit("e");
  EXPECT_FALSE(v.admit) << "every connection busy";
}

TEST_F(ConnectionGateTest, RemoveForgetsThePeer) {
  ConnectionGate gate(Limits(10, 1), "test", metrics_);
  gate.Add(1, "a", false);
  EXPECT_FALSE(gate.Admit("a").admit);
  gate.Remove(1);
  gate.Remove(1);  // twice: no effect
  EXPECT_EQ(gate.count_of("a"), 0u);
  EXPECT_TRUE(gate.Admit("a").admit);
}

TEST(ConnectionLimitsOfTest, ReadsTheKeysStrictly) {
  api::Config config;
  config.Set("tempest.transport.max.connections.per.peer", api::Value(int64_t{8}));
  absl::StatusOr<ConnectionLimits> l =
      ConnectionLimitsOf(config, kTransportLimitKeys, ConnectionLimits{});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->max_per_peer, 8u);
  EXPECT_EQ(l->max_connections, ConnectionLimits{}.max_connections);
  for (const api::Value& bad :
       {api::Value(int64_t{0}), api::Value(std::string("lots")), api::Value(int64_t{1} << 40)}) {
    config.Set("tempest.transport.max.connections", bad);
    l = ConnectionLimitsOf(config, kTransportLimitKeys, ConnectionLimits{});
    ASSERT_FALSE(l.ok()) << bad.DebugString();
    EXPECT_NE(l.status().message().find("tempest.transport.max.connections"), std::string::npos)
        << l.status();
  }
  config = api::Config();
  config.Set("tempest.api.descriptor.reserve", api::Value(int64_t{-1}));
  EXPECT_FALSE(ConnectionLimitsOf(config, kApiLimitKeys, ConnectionLimits{}).ok());
}

}  // namespace
}  // namespace tempest::net
