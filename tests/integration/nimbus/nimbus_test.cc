// The nimbus daemon against a real ZooKeeper: registration, leader election
// between two instances, writes on the leader only, kill removal, scheduling
// onto fake supervisors.

#include "nimbus/nimbus.h"

#include "absl/strings/str_cat.h"
#include "tests/integration/nimbus/nimbus_fixture.h"
#include "tests/support/eventually.h"

namespace tempest::nimbus::testing {
namespace {

using tempest::testing::Eventually;

constexpr milliseconds kWait(20000);

TEST_F(NimbusTest, SingleNimbusRegistersLeadsAndRunsTheStateMachine) {
  auto n = StartNimbus();
  ASSERT_NE(n, nullptr);
  ASSERT_TRUE(Eventually(kWait, [&] { return n->IsLeader(); }));
  EXPECT_EQ(CountChildren(root_ + "/nimbuses"), 1);
  EXPECT_TRUE(zk().Exists(absl::StrCat(root_, "/nimbuses/", n->id()))->has_value());

  auto id = n->Submit(Demo());
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(n->Deactivate(*id)->status(), v1::INACTIVE);
  EXPECT_EQ(n->Activate(*id)->status(), v1::ACTIVE);
  auto killed = n->Kill(*id, 0);
  ASSERT_TRUE(killed.ok()) << killed.status();
  EXPECT_EQ(killed->status(), v1::KILLED);
  // Wait 0: the leader removes it (storms/ and assignments/) by itself.
  EXPECT_TRUE(Eventually(kWait, [&] { return CountChildren(root_ + "/storms") == 0; }));
  EXPECT_TRUE(absl::IsNotFound(n->Activate(*id).status()));
}

TEST_F(NimbusTest, KilledTopologyStaysUntilItsWaitIsOver) {
  auto n = StartNimbus();
  ASSERT_NE(n, nullptr);
  ASSERT_TRUE(Eventually(kWait, [&] { return n->IsLeader(); }));
  auto id = n->Submit(Demo());
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(n->Kill(*id, 3600).ok());
  ASSERT_TRUE(n->ReconcileNow().ok());
  auto t = n->Topology(*id);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->base.status(), v1::KILLED);
  // The name stays taken while it is KILLED, as in Storm.
  EXPECT_TRUE(absl::IsAlreadyExists(n->Submit(Demo()).status()));
  // A second kill re-arms the wait.
  ASSERT_TRUE(n->Kill(*id, 0).ok());
  EXPECT_TRUE(Eventually(kWait, [&] { return CountChildren(root_ + "/storms") == 0; }));
}

TEST_F(NimbusTest, NoSupervisorsMeansNoAssignmentThenSlotsGetAssignedEvenly) {
  auto n = StartNimbus();
  ASSERT_NE(n, nullptr);
  ASSERT_TRUE(Eventually(kWait, [&] { return n->IsLeader(); }));
  auto id = n->Submit(Demo());
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(n->ReconcileNow().ok());
  EXPECT_FALSE(n->AssignmentOf(*id)->has_value());
  EXPECT_EQ(CountChildren(root_ + "/assignments"), 0);

  AddSupervisor("sup-a", {6700, 6701});
  AddSupervisor("sup-b", {6700, 6701});
  ASSERT_TRUE(n->ReconcileNow().ok());
  auto a = n->AssignmentOf(*id);
  ASSERT_TRUE(a.ok() && a->has_value());
  const v1::Assignment& as = **a;
  ASSERT_EQ(as.executors_size(), 7);
  // Two workers, one per supervisor (interleaved slots), executors dealt
  // round-robin in task order.
  EXPECT_EQ(as.executors(0).node(), "sup-a");
  EXPECT_EQ(as.executors(0).port(), 6700);
  EXPECT_EQ(as.executors(1).node(), "sup-b");
  EXPECT_EQ(as.executors(1).port(), 6700);
  EXPECT_EQ(as.executors(2).node(), "sup-a");
  EXPECT_EQ(as.node_host().at("sup-a"), "127.0.0.1");

  // sup-b goes away: its executors move to a free slot, sup-a's stay.
  ASSERT_TRUE(zk().Delete(absl::StrCat(root_, "/supervisors/sup-b")).ok());
  ASSERT_TRUE(n->ReconcileNow().ok());
  auto moved = n->AssignmentOf(*id);
  ASSERT_TRUE(moved.ok() && moved->has_value());
  for (const auto& e : (*moved)->executors()) EXPECT_EQ(e.node(), "sup-a");
  EXPECT_EQ((*moved)->executors(0).port(), 6700);
  EXPECT_EQ((*moved)->executors(1).port(), 6701);
  EXPECT_EQ((*moved)->executors(0).start_time_secs(), as.executors(0).start_time_secs());
}

TEST_F(NimbusTest, StandbyRefusesWritesNamingTheLeaderAndTakesOverWhenTheLeaderGoes) {
  auto first = StartNimbus();
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(Eventually(kWait, [&] { return first->IsLeader(); }));
  auto second = StartNimbus();
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(Eventually(kWait, [&] { return CountChildren(root_ + "/nimbuses") == 2; }));
  EXPECT_FALSE(second->IsLeader());
  EXPECT_EQ(*second->Leader(), first->id());

  auto refused = second->Submit(Demo());
  EXPECT_TRUE(absl::IsUnavailable(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("the leader is " + first->id()), std::string::npos)
      << refused.status();
  EXPECT_EQ(CountChildren(root_ + "/storms"), 0);

  auto id = first->Submit(Demo());
  ASSERT_TRUE(id.ok()) << id.status();
  // Reads work on the standby.
  auto seen = second->Topology(*id);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(seen->base.name(), "demo");

  auto peers = second->Nimbuses();
  ASSERT_TRUE(peers.ok());
  ASSERT_EQ(peers->size(), 2u);
  int leaders = 0;
  for (const NimbusPeer& p : *peers) leaders += p.leader ? 1 : 0;
  EXPECT_EQ(leaders, 1);

  // The leader's session closes (as when its process dies): the standby
  // takes over and accepts writes.
  first->CloseSessionForTest();
  ASSERT_TRUE(Eventually(kWait, [&] { return second->IsLeader(); }));
  EXPECT_TRUE(Eventually(kWait, [&] { return CountChildren(root_ + "/nimbuses") == 1; }));
  EXPECT_EQ(second->Deactivate(*id)->status(), v1::INACTIVE);
  auto other = second->Submit(Demo("demo-two"));
  EXPECT_TRUE(other.ok()) << other.status();
  first.reset();
}

}  // namespace
}  // namespace tempest::nimbus::testing
