// Read-only mode: a member cut off from its quorum keeps serving reads to
// clients that asked for ZOO_READONLY; ZkSession reports kReadOnly, serves
// reads there and refuses writes, and returns to kConnected once the
// quorum is back.

#include <chrono>

#include "common/coord/zk_session.h"
#include "gtest/gtest.h"
#include "tests/integration/coord/test_util.h"
#include "tests/support/eventually.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::coord {
namespace {

using std::chrono::milliseconds;
using testing::Eventually;
using testutil::Connect;
using testutil::EventLog;
using testutil::TestOptions;

TEST(ZkReadOnlyTest, PartitionedMemberServesReadsOnlyAndSessionReportsIt) {
  testing::ZkEnsemble::Options eo;
  eo.size = 3;
  eo.read_only_mode = true;
  auto ensemble = testing::ZkEnsemble::Start(eo);
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  auto& e = **ensemble;
  core::MetricsRegistry metrics;
  const int leader = e.LeaderIndex();
  ASSERT_GE(leader, 0);
  const int stay = (leader + 1) % 3;

  auto writer = Connect(TestOptions(e.ConnectString(), metrics));
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->EnsurePath("/ro/node").ok());
  ASSERT_TRUE(writer->Set("/ro/node", "v1").ok());

  e.Kill(leader);
  e.Kill((leader + 2) % 3);
  ASSERT_TRUE(Eventually(milliseconds(40000), [&] {
    auto mode = e.Mode(stay);
    return mode.ok() && *mode == "read-only";
  }));
  // A session that allows read-only mode connects to the partitioned member
  // and is reported as kReadOnly, not kConnected. (Read-only servers need
  // local sessions; ZkServer enables them together with read-only mode.)
  auto opts = TestOptions(e.MemberConnectString(stay), metrics);
  opts.allow_read_only = true;
  auto created = ZkSession::Create(opts);
  ASSERT_TRUE(created.ok()) << created.status();
  auto& s = *created;
  EventLog log(*s);
  const bool read_only =
      Eventually(milliseconds(20000), [&] { return s->state() == ZkSessionState::kReadOnly; });
  ASSERT_TRUE(read_only) << "state " << ZkSessionStateName(s->state());
  EXPECT_FALSE(s->IsConnected());
  auto read = s->Get("/ro/node", ZkCall{milliseconds(3000)});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->data, "v1");
  auto write = s->Set("/ro/node", "v2", -1, ZkCall{milliseconds(1500)});
  EXPECT_TRUE(absl::IsUnavailable(write.status())) << write.status();

  ASSERT_TRUE(e.Restart(leader).ok());
  ASSERT_TRUE(e.Restart((leader + 2) % 3).ok());
  ASSERT_TRUE(Eventually(milliseconds(40000), [&] { return s->IsConnected(); }))
      << "state " << ZkSessionStateName(s->state());
  auto after = s->Set("/ro/node", "v2", -1, ZkCall{milliseconds(10000)});
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(writer->Get("/ro/node", ZkCall{milliseconds(10000)})->data, "v2");
}

}  // namespace
}  // namespace tempest::coord
