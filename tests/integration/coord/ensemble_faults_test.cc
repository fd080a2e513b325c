// Faults of a real 3-member ensemble: a client paused past its session
// timeout (simulated by pausing the member it talks to while the others go
// on) and loss of quorum. One ensemble is shared by the tests; each test
// leaves every member running.

#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <vector>

#include "common/coord/versioned_cas.h"
#include "common/coord/zk_session.h"
#include "gtest/gtest.h"
#include "tests/integration/coord/test_util.h"
#include "tests/support/eventually.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::coord {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;
using testing::Eventually;
using testutil::AcquireOwnership;
using testutil::Connect;
using testutil::EventLog;
using testutil::TestOptions;
using testutil::WaitForOwnership;

class EnsembleFaultsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testing::ZkEnsemble::Options o;
    o.size = 3;
    auto e = testing::ZkEnsemble::Start(o);
    ASSERT_TRUE(e.ok()) << e.status();
    ensemble_ = std::move(*e).release();
  }
  static void TearDownTestSuite() {
    delete ensemble_;
    ensemble_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(ensemble_, nullptr); }
  void TearDown() override {
    for (int i = 0; i < 3; ++i) {
      ensemble_->Resume(i);
      if (!ensemble_->IsServing(i)) (void)ensemble_->Restart(i);
    }
  }
  static testing::ZkEnsemble* ensemble_;
  core::MetricsRegistry metrics_;
};
testing::ZkEnsemble* EnsembleFaultsTest::ensemble_ = nullptr;

TEST_F(EnsembleFaultsTest, PausedOwnerIsFencedAfterAnotherTakesOver) {
  const int leader = ensemble_->LeaderIndex();
  ASSERT_GE(leader, 0);
  const int follower = (leader + 1) % 3;
  const int other = (leader + 2) % 3;
  // A only knows the follower: pausing that member cuts A off completely,
  // as if A itself were paused, while the quorum (leader + other) goes on.
  auto a =
      Connect(TestOptions(ensemble_->MemberConnectString(follower), metrics_, milliseconds(3000)));
  auto b = Connect(TestOptions(
      ensemble_->MemberConnectString(leader) + "," + ensemble_->MemberConnectString(other),
      metrics_, milliseconds(3000)));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->EnsurePath("/fence/offset").ok());
  EventLog a_log(*a);

  auto owner_a = AcquireOwnership(*a, "/fence/owner", "a");
  ASSERT_TRUE(owner_a.ok()) << owner_a.status();
  const FencingToken token_a = *owner_a;
  ASSERT_TRUE(CompareAndSet(*a, "/fence/offset", "a-1", 0, &token_a).ok());

  ensemble_->Pause(follower);
  // A's own timer declares the session lost, without hearing from the
  // server.
  ASSERT_TRUE(Eventually(milliseconds(15000), [&] {
    for (const auto& e : a_log.events()) {
      if (e.state == ZkSessionState::kLost && e.by_local_timer) return true;
    }
    return false;
  }));
  // The ensemble expires A's session; B takes over and writes.
  const std::optional<FencingToken> owner_b =
      WaitForOwnership(*b, "/fence/owner", "b", milliseconds(20000));
  ASSERT_TRUE(owner_b.has_value());
  const FencingToken token_b = *owner_b;
  EXPECT_GT(token_b.czxid, token_a.czxid);
  ASSERT_TRUE(CompareAndSet(*b, "/fence/offset", "b-1", 1, &token_b).ok());

  // A wakes up and, still believing in its old token and the version it saw
  // last, writes. The write is rejected and B's value stays.
  ensemble_->Resume(follower);
  auto zombie = CompareAndSet(*a, "/fence/offset", "a-2", 1, &token_a, ZkCall{milliseconds(20000)});
  EXPECT_FALSE(zombie.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(zombie.status())) << zombie.status();
  // Even an unfenced versioned write with A's stale version loses.
  auto stale = a->Set("/fence/offset", "a-3", 1, ZkCall{milliseconds(20000)});
  EXPECT_TRUE(absl::IsAborted(stale.status())) << stale.status();
  auto n = b->Get("/fence/offset");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->data, "b-1");
  EXPECT_EQ(n->stat.version, 2);
  // A is on a new session and does not own the node (B does).
  EXPECT_NE(a->session_id(), token_a.session_id);
  auto owner = b->Exists("/fence/owner");
  ASSERT_TRUE(owner.ok() && owner->has_value());
  EXPECT_EQ((*owner)->ephemeral_owner, token_b.session_id);
}

TEST_F(EnsembleFaultsTest, QuorumLossFailsFastAndRecoversWithoutRestart) {
  auto s = Connect(TestOptions(ensemble_->ConnectString(), metrics_, milliseconds(4000)));
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->EnsurePath("/quorum/node").ok());
  ASSERT_TRUE(s->EnsurePath("/quorum/gone").ok());
  EventLog log(*s);
  const int survivor = ensemble_->LeaderIndex() >= 0 ? ensemble_->LeaderIndex() : 0;
  const int k1 = (survivor + 1) % 3, k2 = (survivor + 2) % 3;
  ensemble_->Kill(k1);
  ensemble_->Kill(k2);
  // The survivor needs a few ticks to notice it has no quorum; until then it
  // still serves (stale) reads.
  ASSERT_TRUE(Eventually(milliseconds(20000), [&] { return !ensemble_->IsServing(survivor); }));
  ASSERT_TRUE(Eventually(milliseconds(15000), [&] {
    return log.Saw(ZkSessionState::kSuspended) && s->state() != ZkSessionState::kConnected;
  }));

  const milliseconds deadline(1500);
  const ZkCall call{deadline};
  struct Outcome {
    const char* op;
    absl::Status status;
    milliseconds took;
  };
  std::vector<Outcome> outcomes;
  auto run = [&](const char* op, const std::function<absl::Status()>& fn) {
    const auto t0 = steady_clock::now();
    absl::Status st = fn();
    outcomes.push_back(
        {op, st, std::chrono::duration_cast<milliseconds>(steady_clock::now() - t0)});
  };
  run("get", [&] { return s->Get("/quorum/node", call).status(); });
  run("set", [&] { return s->Set("/quorum/node", "x", -1, call).status(); });
  run("create", [&] { return s->Create("/quorum/new", "x", {}, call).status(); });
  run("delete", [&] { return s->Delete("/quorum/gone", -1, call); });
  run("exists", [&] { return s->Exists("/quorum/node", call).status(); });
  run("children", [&] { return s->Children("/quorum", call).status(); });
  run("multi", [&] { return s->Multi({ZkOp::Check("/quorum/node", 0)}, call).status(); });
  run("set_async",
      [&] { return s->SetAsync("/quorum/node", "x", -1, [](absl::StatusOr<ZkStat>) {}); });
  for (const auto& o : outcomes) {
    EXPECT_TRUE(absl::IsUnavailable(o.status)) << o.op << ": " << o.status;
    // "Within its deadline": generous slack for a loaded 2-core machine,
    // but far below anything that could be called a hang.
    EXPECT_LT(o.took, deadline + milliseconds(1000)) << o.op;
  }

  const auto t_restart = steady_clock::now();
  ASSERT_TRUE(ensemble_->Restart(k1).ok());  // with the survivor: a quorum again
  const auto quorum_restored = steady_clock::now();
  // Same process, same ZkSession: keep writing until one succeeds.
  std::optional<steady_clock::time_point> first_write;
  ASSERT_TRUE(Eventually(milliseconds(30000), [&] {
    if (s->Set("/quorum/node", "after", -1, ZkCall{milliseconds(1000)}).ok()) {
      first_write = steady_clock::now();
      return true;
    }
    return false;
  }));
  const auto ms = [](auto d) { return std::chrono::duration_cast<milliseconds>(d).count(); };
  std::printf(
      "[quorum] member restart took %lld ms; quorum restored -> first successful write: "
      "%lld ms (session %s)\n",
      static_cast<long long>(ms(quorum_restored - t_restart)),
      static_cast<long long>(ms(*first_write - quorum_restored)),
      std::string(ZkSessionStateName(s->state())).c_str());
  EXPECT_EQ(s->Get("/quorum/node")->data, "after");
  ASSERT_TRUE(ensemble_->Restart(k2).ok());
  EXPECT_TRUE(s->Set("/quorum/node", "all-back").ok());
}

}  // namespace
}  // namespace tempest::coord
