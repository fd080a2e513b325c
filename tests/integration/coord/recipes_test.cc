// Recipes (leader election, fenced CAS, watch re-arm)
// against a real standalone ZooKeeper, including real session expiry.

#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

#include "common/coord/chunked_blob.h"
#include "common/coord/leader_election.h"
#include "common/coord/versioned_cas.h"
#include "common/coord/zk_node_watch.h"
#include "common/coord/zk_session.h"
#include "gtest/gtest.h"
#include "tests/integration/coord/test_util.h"
#include "tests/support/eventually.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::coord {
namespace {

using std::chrono::milliseconds;
using testing::Eventually;
using testutil::AcquireOwnership;
using testutil::Connect;
using testutil::EventLog;
using testutil::TestOptions;
using testutil::WaitForOwnership;

class RecipesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = testing::ZkEnsemble::Start();
    ASSERT_TRUE(e.ok()) << e.status();
    ensemble_ = std::move(*e).release();
  }
  static void TearDownTestSuite() {
    delete ensemble_;
    ensemble_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(ensemble_, nullptr); }
  std::unique_ptr<ZkSession> NewSession() {
    return Connect(TestOptions(ensemble_->ConnectString(), metrics_));
  }
  absl::Status Expire(ZkSession& s) {
    return ensemble_->ExpireSession(s.session_id(), s.session_password());
  }

  static testing::ZkEnsemble* ensemble_;
  core::MetricsRegistry metrics_;
};
testing::ZkEnsemble* RecipesTest::ensemble_ = nullptr;

TEST_F(RecipesTest, LeadershipAndWatchesSurviveSessionExpiry) {
  auto s = NewSession();
  ASSERT_NE(s, nullptr);
  EventLog log(*s);
  std::mutex mu;
  std::vector<bool> leader_changes;
  std::vector<std::string> watched_values;

  LeaderElection::Options el;
  el.path = "/expiry-recipes/leader";
  el.participant_id = "a";
  el.on_change = [&](bool leader) {
    std::lock_guard<std::mutex> lock(mu);
    leader_changes.push_back(leader);
  };
  auto election = LeaderElection::Create(*s, el);
  ASSERT_TRUE(election.ok()) << election.status();
  ASSERT_TRUE(s->EnsurePath("/expiry-recipes/watched").ok());
  auto watch =
      ZkNodeWatch::Create(*s, "/expiry-recipes/watched", [&](const std::optional<ZkNode>& n) {
        std::lock_guard<std::mutex> lock(mu);
        watched_values.push_back(n ? n->data : "<absent>");
      });
  ASSERT_TRUE(watch.ok());

  ASSERT_TRUE(Eventually(milliseconds(10000), [&] { return (*election)->IsLeader(); }));
  const int64_t old_session = s->session_id();

  ASSERT_TRUE(Expire(*s).ok());

  // Lost, then a new session, on which leadership comes back.
  ASSERT_TRUE(Eventually(milliseconds(20000), [&] {
    return s->session_id() != 0 && s->session_id() != old_session && (*election)->IsLeader();
  }));
  EXPECT_TRUE(log.Saw(ZkSessionState::kLost));
  {
    // Held, then lost, then held again. ExpireSession attaches a second
    // client to our session first, so our client may briefly get the old
    // session back (and leadership with it) before it finally expires:
    // more rounds are legitimate, but changes always alternate.
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_GE(leader_changes.size(), 3u);
    EXPECT_TRUE(leader_changes.front());
    EXPECT_TRUE(leader_changes.back());
    for (size_t i = 1; i < leader_changes.size(); ++i) {
      EXPECT_NE(leader_changes[i], leader_changes[i - 1]);
    }
  }
  auto leader = (*election)->CurrentLeader();
  ASSERT_TRUE(leader.ok());
  EXPECT_EQ(*leader, "a");

  // Watches keep firing on the new session.
  auto other = NewSession();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Set("/expiry-recipes/watched", "after-expiry").ok());
  EXPECT_TRUE(Eventually(milliseconds(10000), [&] {
    std::lock_guard<std::mutex> lock(mu);
    return !watched_values.empty() && watched_values.back() == "after-expiry";
  }));
  ASSERT_TRUE(other->Delete("/expiry-recipes/watched").ok());
  EXPECT_TRUE(Eventually(milliseconds(10000), [&] {
    std::lock_guard<std::mutex> lock(mu);
    return watched_values.back() == "<absent>";
  }));
}

TEST_F(RecipesTest, ElectionOfThreeElectsExactlyOneNewLeaderWhenTheLeadersSessionDies) {
  std::vector<std::unique_ptr<ZkSession>> sessions;
  std::vector<std::unique_ptr<LeaderElection>> elections;
  for (const char* id : {"c0", "c1", "c2"}) {
    sessions.push_back(NewSession());
    ASSERT_NE(sessions.back(), nullptr);
    LeaderElection::Options o;
    o.path = "/election3";
    o.participant_id = id;
    auto e = LeaderElection::Create(*sessions.back(), o);
    ASSERT_TRUE(e.ok()) << e.status();
    elections.push_back(std::move(*e));
  }
  auto leaders = [&] {
    std::vector<int> out;
    for (int i = 0; i < 3; ++i) {
      if (elections[i]->IsLeader()) out.push_back(i);
    }
    return out;
  };
  ASSERT_TRUE(Eventually(milliseconds(10000), [&] { return leaders().size() == 1; }));
  const int old_leader = leaders()[0];
  auto reported = elections[(old_leader + 1) % 3]->CurrentLeader();
  ASSERT_TRUE(reported.ok());
  EXPECT_EQ(*reported, "c" + std::to_string(old_leader));

  ASSERT_TRUE(Expire(*sessions[old_leader]).ok());
  ASSERT_TRUE(Eventually(milliseconds(20000), [&] {
    auto l = leaders();
    return l.size() == 1 && l[0] != old_leader &&
           sessions[old_leader]->state() == ZkSessionState::kConnected;
  }));
  const int new_leader = leaders()[0];
  // Everyone, the old leader included (it re-joined at the back), agrees.
  for (int i = 0; i < 3; ++i) {
    auto r = elections[i]->CurrentLeader();
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(*r, "c" + std::to_string(new_leader));
  }
  // The old leader re-joins (at the back) on its new session.
  EXPECT_TRUE(Eventually(milliseconds(10000), [&] {
    auto kids = sessions[0]->Children("/election3");
    return kids.ok() && kids->size() == 3u;
  }));
  EXPECT_FALSE(elections[old_leader]->IsLeader());
}

TEST_F(RecipesTest, FencedCompareAndSetRejectsAnOldOwner) {
  auto a = NewSession();
  auto b = NewSession();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(a->EnsurePath("/cas/offset").ok());
  auto owner_a = AcquireOwnership(*a, "/cas/owner", "a");
  ASSERT_TRUE(owner_a.ok()) << owner_a.status();
  EXPECT_TRUE(absl::IsAlreadyExists(AcquireOwnership(*b, "/cas/owner", "b").status()));  // a's

  const FencingToken token_a = *owner_a;
  auto w1 = CompareAndSet(*a, "/cas/offset", "10", 0, &token_a);
  ASSERT_TRUE(w1.ok()) << w1.status();
  EXPECT_EQ(w1->version, 1);
  auto stale = CompareAndSet(*a, "/cas/offset", "11", 0, &token_a);
  EXPECT_TRUE(absl::IsAborted(stale.status())) << stale.status();

  ASSERT_TRUE(Expire(*a).ok());
  const std::optional<FencingToken> owner_b =
      WaitForOwnership(*b, "/cas/owner", "b", milliseconds(20000));
  ASSERT_TRUE(owner_b.has_value());
  const FencingToken token_b = *owner_b;
  EXPECT_GT(token_b.czxid, token_a.czxid);
  ASSERT_TRUE(CompareAndSet(*b, "/cas/offset", "20", 1, &token_b).ok());

  // The old owner's write, even with the right data version, is fenced.
  auto zombie = CompareAndSet(*a, "/cas/offset", "12", 2, &token_a, ZkCall{milliseconds(5000)});
  EXPECT_TRUE(absl::IsFailedPrecondition(zombie.status())) << zombie.status();
  auto n = b->Get("/cas/offset");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->data, "20");
  EXPECT_EQ(n->stat.version, 2);

  // Ops compose into one multi with several writes under one ownership check.
  ASSERT_TRUE(b->EnsurePath("/cas/offset2").ok());
  auto multi = b->Multi({OwnershipCheckOp(token_b), VersionedSetOp("/cas/offset", "21", 2),
                         VersionedSetOp("/cas/offset2", "5", 0)},
                        ZkCall{milliseconds(5000), token_b.session_id});
  ASSERT_TRUE(multi.ok()) << multi.status();
}

}  // namespace
}  // namespace tempest::coord

namespace tempest::coord {
namespace {

TEST_F(RecipesTest, ChunkedBlobRoundTripsAndRefusesAShortOne) {
  auto s = NewSession();
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->WaitConnected(std::chrono::seconds(20)).ok());
  // 1.3 MiB: three chunks, more than one znode may hold.
  std::string data(1300 << 10, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + (i >> 12));
  absl::StatusOr<int> chunks = WriteChunkedBlob(*s, "/blobs-test/a", data);
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  EXPECT_EQ(*chunks, 3);
  absl::StatusOr<std::string> back =
      ReadChunkedBlob(*s, "/blobs-test/a", *chunks, static_cast<int64_t>(data.size()));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(*back == data);
  // A record that promises more than is stored is refused, not used.
  EXPECT_TRUE(absl::IsDataLoss(
      ReadChunkedBlob(*s, "/blobs-test/a", *chunks, static_cast<int64_t>(data.size()) + 1)
          .status()));
  EXPECT_FALSE(ReadChunkedBlob(*s, "/blobs-test/a", *chunks + 1, 0).ok());
  // An empty blob is one empty chunk.
  absl::StatusOr<int> empty = WriteChunkedBlob(*s, "/blobs-test/empty", "");
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(*empty, 1);
  EXPECT_EQ(*ReadChunkedBlob(*s, "/blobs-test/empty", 1, 0), "");
  ASSERT_TRUE(DeleteChunkedBlob(*s, "/blobs-test/a").ok());
  EXPECT_FALSE(s->Exists("/blobs-test/a")->has_value());
  EXPECT_TRUE(DeleteChunkedBlob(*s, "/blobs-test/a").ok());  // absent is fine
}

}  // namespace
}  // namespace tempest::coord
