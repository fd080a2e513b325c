// ZkSession against a real standalone ZooKeeper (one server shared by every
// test in this file; each test works under its own path).

#include "common/coord/zk_session.h"

#include <zookeeper/zookeeper.h>

#include <atomic>
#include <future>

#include "common/coord/zk_status.h"
#include "gtest/gtest.h"
#include "tests/integration/coord/tcp_proxy.h"
#include "tests/integration/coord/test_util.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_clock.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::coord {
namespace {

using std::chrono::milliseconds;
using testing::Eventually;
using testutil::Connect;
using testutil::CounterValue;
using testutil::EventLog;
using testutil::TestOptions;

class ZkSessionTest : public ::testing::Test {
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
  ZkSession::Options Opts() { return TestOptions(ensemble_->ConnectString(), metrics_); }

  static testing::ZkEnsemble* ensemble_;
  core::MetricsRegistry metrics_;
};
testing::ZkEnsemble* ZkSessionTest::ensemble_ = nullptr;

TEST_F(ZkSessionTest, BasicOperationsMapCodes) {
  auto s = Connect(Opts());
  ASSERT_NE(s, nullptr);
  EXPECT_NE(s->session_id(), 0);
  EXPECT_EQ(s->session_password().size(), 16u);
  EXPECT_GT(s->negotiated_timeout().count(), 0);

  ZkCreateOptions parents;
  parents.create_parents = true;
  auto created = s->Create("/basic/a/b", "v0", parents);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(*created, "/basic/a/b");
  EXPECT_TRUE(absl::IsAlreadyExists(s->Create("/basic/a/b", "x").status()));
  EXPECT_TRUE(absl::IsNotFound(s->Create("/basic/missing/x", "x").status()));

  auto node = s->Get("/basic/a/b");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->data, "v0");
  EXPECT_EQ(node->stat.version, 0);

  auto st = s->Set("/basic/a/b", "v1", 0);
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->version, 1);
  auto bad = s->Set("/basic/a/b", "v2", 0);
  EXPECT_TRUE(absl::IsAborted(bad.status())) << bad.status();
  EXPECT_EQ(ZkCodeOf(bad.status()), ZBADVERSION);
  EXPECT_TRUE(absl::IsNotFound(s->Get("/basic/nope").status()));

  auto ex = s->Exists("/basic/a/b");
  ASSERT_TRUE(ex.ok());
  ASSERT_TRUE(ex->has_value());
  EXPECT_EQ((*ex)->version, 1);
  auto absent = s->Exists("/basic/nope");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());

  ZkCreateOptions eph;
  eph.mode = ZkCreateMode::kEphemeral;
  ASSERT_TRUE(s->Create("/basic/a/eph", "e", eph).ok());
  auto eph_node = s->Get("/basic/a/eph");
  ASSERT_TRUE(eph_node.ok());
  EXPECT_EQ(eph_node->stat.ephemeral_owner, s->session_id());

  ZkCreateOptions seq;
  seq.mode = ZkCreateMode::kPersistentSequential;
  auto s1 = s->Create("/basic/a/q_", "1", seq);
  auto s2 = s->Create("/basic/a/q_", "2", seq);
  ASSERT_TRUE(s1.ok() && s2.ok());
  EXPECT_LT(*s1, *s2);

  auto kids = s->Children("/basic/a");
  ASSERT_TRUE(kids.ok());
  EXPECT_EQ(kids->size(), 4u);

  EXPECT_TRUE(absl::IsFailedPrecondition(s->Delete("/basic/a")));  // not empty
  EXPECT_TRUE(absl::IsAborted(s->Delete("/basic/a/b", 0)));
  EXPECT_TRUE(s->Delete("/basic/a/b", 1).ok());
  EXPECT_TRUE(absl::IsNotFound(s->Delete("/basic/a/b")));

  EXPECT_GE(CounterValue(metrics_, "tempest_zk_ops_total", {{"op", "set"}}), 2);
  EXPECT_GE(CounterValue(metrics_, "tempest_zk_op_failures_total",
                         {{"op", "set"}, {"code", "ZBADVERSION"}}),
            1);
  EXPECT_GE(metrics_.GetHistogram("tempest_zk_op_latency_us", {{"op", "get"}}).Count(), 1);
  EXPECT_GE(CounterValue(metrics_, "tempest_zk_session_transitions_total",
                         {{"from", "connecting"}, {"to", "connected"}}),
            1);
}

TEST_F(ZkSessionTest, MultiIsAtomic) {
  auto s = Connect(Opts());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->EnsurePath("/multi").ok());
  ASSERT_TRUE(s->Create("/multi/x", "0").ok());
  int failed = -2;
  auto bad = s->Multi({ZkOp::Create("/multi/y", "y"), ZkOp::Set("/multi/x", "1", 5)}, {}, &failed);
  EXPECT_TRUE(absl::IsAborted(bad.status())) << bad.status();
  EXPECT_EQ(failed, 1);
  EXPECT_TRUE(absl::IsNotFound(s->Get("/multi/y").status()));  // nothing applied

  auto ok = s->Multi(
      {ZkOp::Create("/multi/y", "y"), ZkOp::Check("/multi/x", 0), ZkOp::Set("/multi/x", "1", 0)});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].created_path, "/multi/y");
  EXPECT_EQ((*ok)[2].stat.version, 1);
  EXPECT_EQ(s->Get("/multi/x")->data, "1");
}

TEST_F(ZkSessionTest, ChrootIsCreatedAndIsolates) {
  auto opts = Opts();
  opts.connect_string += "/tempest-chroot/t1";
  auto s = Connect(opts);
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Create("/inside", "c").ok());
  auto raw = Connect(Opts());
  ASSERT_NE(raw, nullptr);
  auto n = raw->Get("/tempest-chroot/t1/inside");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->data, "c");
  EXPECT_TRUE(absl::IsNotFound(raw->Get("/inside").status()));
}

TEST_F(ZkSessionTest, DigestAclRejectsUnauthenticatedWriter) {
  auto alice_opts = Opts();
  alice_opts.auth = {{"digest", "alice:secret"}};
  auto alice = Connect(alice_opts);
  ASSERT_NE(alice, nullptr);
  ZkCreateOptions acl;
  acl.acl = CreatorAllWorldReadAcl();
  acl.create_parents = true;
  ASSERT_TRUE(alice->Create("/acl/guarded", "a", acl).ok());

  auto anon = Connect(Opts());
  ASSERT_NE(anon, nullptr);
  auto denied = anon->Set("/acl/guarded", "evil");
  EXPECT_TRUE(absl::IsPermissionDenied(denied.status())) << denied.status();
  EXPECT_EQ(ZkCodeOf(denied.status()), ZNOAUTH);
  EXPECT_TRUE(absl::IsPermissionDenied(anon->Delete("/acl/guarded")));
  EXPECT_EQ(anon->Get("/acl/guarded")->data, "a");  // world-readable

  auto mallory_opts = Opts();
  mallory_opts.auth = {{"digest", "alice:wrong"}};
  auto mallory = Connect(mallory_opts);
  ASSERT_NE(mallory, nullptr);
  EXPECT_TRUE(absl::IsPermissionDenied(mallory->Set("/acl/guarded", "evil").status()));

  EXPECT_TRUE(alice->Set("/acl/guarded", "b").ok());
  EXPECT_EQ(anon->Get("/acl/guarded")->data, "b");
}

TEST_F(ZkSessionTest, OneShotWatchesFireOnTheDispatcher) {
  auto s = Connect(Opts());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->EnsurePath("/watch").ok());
  std::atomic<int> data_events{0}, child_events{0}, created_events{0};
  ASSERT_TRUE(s->Create("/watch/n", "0").ok());
  ASSERT_TRUE(s->GetAndWatch("/watch/n", [&](const ZkWatchEvent& e) {
                 if (e.type == ZkWatchEventType::kChanged) data_events++;
               }).ok());
  ASSERT_TRUE(s->ChildrenAndWatch("/watch", [&](const ZkWatchEvent& e) {
                 if (e.type == ZkWatchEventType::kChildren) child_events++;
               }).ok());
  auto absent = s->ExistsAndWatch("/watch/later", [&](const ZkWatchEvent& e) {
    if (e.type == ZkWatchEventType::kCreated) created_events++;
  });
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());

  auto other = Connect(Opts());
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Set("/watch/n", "1").ok());
  ASSERT_TRUE(other->Create("/watch/later", "").ok());
  EXPECT_TRUE(Eventually(milliseconds(5000), [&] {
    return data_events == 1 && child_events == 1 && created_events == 1;
  }));
  // One-shot: a second change does not fire again.
  ASSERT_TRUE(other->Set("/watch/n", "2").ok());
  ASSERT_TRUE(s->Get("/watch/n").ok());  // the server has answered us after the change
  EXPECT_EQ(data_events, 1);
}

TEST_F(ZkSessionTest, SetAsyncCompletesOnDispatcher) {
  auto s = Connect(Opts());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->EnsurePath("/async/n").ok());
  std::atomic<int> ok{0}, bad{0};
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> other_thread{true};
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(s->SetAsync("/async/n", std::to_string(i), -1, [&](absl::StatusOr<ZkStat> r) {
                   if (std::this_thread::get_id() == caller) other_thread = false;
                   (r.ok() ? ok : bad)++;
                 }).ok());
  }
  ASSERT_TRUE(s->SetAsync("/async/n", "v", 12345, [&](absl::StatusOr<ZkStat> r) {
                 if (absl::IsAborted(r.status())) bad++;
               }).ok());
  EXPECT_TRUE(Eventually(milliseconds(10000), [&] { return ok == 100 && bad == 1; }));
  EXPECT_TRUE(other_thread);
  EXPECT_EQ(s->Get("/async/n")->data, "99");  // pipelined in order
}

// "Applied" branch, deterministic: the request reaches the server and is
// applied, but the proxy between client and server discards the reply (and
// everything after it), exactly as if the member died right after applying.
// The client times out (ZOPERATIONTIMEOUT), reconnects once the proxy lets
// replies through again, reads the node back and finds version+1 with our
// data: it reports success and does not write again.
TEST_F(ZkSessionTest, AmbiguousSetWhoseReplyIsLostResolvesAsApplied) {
  testing::TcpProxy proxy(
      std::stoi(ensemble_->ConnectString().substr(ensemble_->ConnectString().rfind(':') + 1)));
  auto opts = TestOptions("127.0.0.1:" + std::to_string(proxy.port()), metrics_);
  auto s = Connect(opts);
  ASSERT_NE(s, nullptr);
  auto observer = Connect(Opts());
  ASSERT_NE(observer, nullptr);
  ASSERT_TRUE(observer->EnsurePath("/ambig/applied").ok());
  ASSERT_TRUE(observer->Set("/ambig/applied", "before", 0).ok());  // version 1
  EventLog log(*s);

  proxy.DropToClient(true);
  auto write = std::async(std::launch::async, [&] {
    return s->Set("/ambig/applied", "mine", 1, ZkCall{milliseconds(30000)});
  });
  // The server has applied it while the client still waits for the reply.
  ASSERT_TRUE(Eventually(milliseconds(10000), [&] {
    auto n = observer->Get("/ambig/applied");
    return n.ok() && n->stat.version == 2;
  }));
  ASSERT_TRUE(Eventually(milliseconds(15000), [&] { return log.Saw(ZkSessionState::kSuspended); }));
  proxy.DropToClient(false);
  auto result = write.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->version, 2);
  auto n = observer->Get("/ambig/applied");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->data, "mine");
  EXPECT_EQ(n->stat.version, 2);  // applied exactly once
  EXPECT_EQ(CounterValue(metrics_, "tempest_zk_ambiguous_writes_total",
                         {{"op", "set"}, {"outcome", "applied"}}),
            1);
  EXPECT_EQ(CounterValue(metrics_, "tempest_zk_ambiguous_writes_total",
                         {{"op", "set"}, {"outcome", "not_applied"}}),
            0);
}

// "Not applied" branch, deterministic: the proxy discards the request, so it
// never reaches the server. The client times out, reconnects, reads back
// the unchanged version, and only then sends the (versioned) write again.
TEST_F(ZkSessionTest, AmbiguousSetThatNeverArrivedResolvesAsNotAppliedAndRetries) {
  testing::TcpProxy proxy(
      std::stoi(ensemble_->ConnectString().substr(ensemble_->ConnectString().rfind(':') + 1)));
  auto opts = TestOptions("127.0.0.1:" + std::to_string(proxy.port()), metrics_);
  auto s = Connect(opts);
  ASSERT_NE(s, nullptr);
  auto observer = Connect(Opts());
  ASSERT_NE(observer, nullptr);
  ASSERT_TRUE(observer->EnsurePath("/ambig/lost").ok());
  ASSERT_TRUE(observer->Set("/ambig/lost", "before", 0).ok());  // version 1
  EventLog log(*s);

  proxy.DropToServer(true);
  auto write = std::async(std::launch::async, [&] {
    return s->Set("/ambig/lost", "mine", 1, ZkCall{milliseconds(30000)});
  });
  ASSERT_TRUE(Eventually(milliseconds(15000), [&] { return log.Saw(ZkSessionState::kSuspended); }));
  auto mid = observer->Get("/ambig/lost");
  ASSERT_TRUE(mid.ok());
  EXPECT_EQ(mid->stat.version, 1);  // the write never arrived
  proxy.DropToServer(false);
  auto result = write.get();
  ASSERT_TRUE(result.ok()) << result.status();
  auto n = observer->Get("/ambig/lost");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->data, "mine");
  EXPECT_EQ(n->stat.version, 2);  // applied exactly once, by the retry
  EXPECT_EQ(CounterValue(metrics_, "tempest_zk_ambiguous_writes_total",
                         {{"op", "set"}, {"outcome", "not_applied"}}),
            1);
  EXPECT_EQ(CounterValue(metrics_, "tempest_zk_ambiguous_writes_total",
                         {{"op", "set"}, {"outcome", "applied"}}),
            0);
}

// The server itself is paused (SIGSTOP) while a write is in flight. Whether
// the server later processes the buffered request is up to it; either way
// the write must end up applied exactly once.
TEST_F(ZkSessionTest, SetWhileServerPausedIsAppliedExactlyOnce) {
  auto s = Connect(Opts());
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->EnsurePath("/ambig/paused").ok());
  EventLog log(*s);
  ensemble_->Pause(0);
  auto write = std::async(std::launch::async, [&] {
    return s->Set("/ambig/paused", "mine", 0, ZkCall{milliseconds(30000)});
  });
  const bool suspended =
      Eventually(milliseconds(15000), [&] { return log.Saw(ZkSessionState::kSuspended); });
  ensemble_->Resume(0);
  ASSERT_TRUE(suspended);
  auto result = write.get();
  ASSERT_TRUE(result.ok()) << result.status();
  auto n = s->Get("/ambig/paused");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->data, "mine");
  EXPECT_EQ(n->stat.version, 1);
  const int64_t resolved = CounterValue(metrics_, "tempest_zk_ambiguous_writes_total",
                                        {{"op", "set"}, {"outcome", "applied"}}) +
                           CounterValue(metrics_, "tempest_zk_ambiguous_writes_total",
                                        {{"op", "set"}, {"outcome", "not_applied"}});
  EXPECT_EQ(resolved, 1);
}

// The local session timer runs on the injected Clock: while disconnected,
// Lost is declared when *that* clock passes a quarter of the negotiated
// timeout (SuspensionBudget), not before, and without any word from the
// server.
TEST_F(ZkSessionTest, LocalTimerDeclaresLostOnTheInjectedClock) {
  testing::TcpProxy proxy(std::stoi(
      ensemble_->ConnectString().substr(ensemble_->ConnectString().rfind(':') + 1)));
  testing::FakeClock clock;
  auto opts = TestOptions("127.0.0.1:" + std::to_string(proxy.port()), metrics_);
  opts.clock = &clock;
  auto s = Connect(opts);
  ASSERT_NE(s, nullptr);
  EventLog log(*s);
  proxy.DropToServer(true);
  proxy.DropToClient(true);
  ASSERT_TRUE(Eventually(milliseconds(15000), [&] { return log.Saw(ZkSessionState::kSuspended); }));
  // Real time is already past 2/3 of the timeout, but the fake clock has not moved.
  clock.Advance(ZkSession::SuspensionBudget(s->negotiated_timeout()) - milliseconds(1));
  ASSERT_TRUE(s->Get("/", ZkCall{milliseconds(200)}).status().code() ==
              absl::StatusCode::kUnavailable);
  EXPECT_EQ(s->state(), ZkSessionState::kSuspended);
  clock.Advance(milliseconds(1));
  // The event log, not state(): listeners run on the dispatcher thread
  // after the state has changed, so the event may trail the state.
  ASSERT_TRUE(Eventually(milliseconds(5000), [&] { return log.Saw(ZkSessionState::kLost); }));
  bool by_timer = false;
  for (const auto& e : log.events()) {
    if (e.state == ZkSessionState::kLost) by_timer = e.by_local_timer;
  }
  EXPECT_TRUE(by_timer);
  proxy.DropToServer(false);
  proxy.DropToClient(false);
  // Whether the server kept the session or expired it meanwhile, the
  // session comes back without a restart.
  EXPECT_TRUE(Eventually(milliseconds(20000), [&] { return s->IsConnected(); }));
  EXPECT_TRUE(s->Get("/").ok());
}

TEST_F(ZkSessionTest, ExpiryGivesLostThenANewSession) {
  auto s = Connect(Opts());
  ASSERT_NE(s, nullptr);
  EventLog log(*s);
  const int64_t old_id = s->session_id();
  ZkCreateOptions eph;
  eph.mode = ZkCreateMode::kEphemeral;
  eph.create_parents = true;
  ASSERT_TRUE(s->Create("/expiry/mine", "x", eph).ok());
  std::atomic<int> lost_watch{0};
  ASSERT_TRUE(s->GetAndWatch("/expiry/mine", [&](const ZkWatchEvent& e) {
                 if (e.type == ZkWatchEventType::kSessionLost ||
                     e.type == ZkWatchEventType::kDeleted) {
                   lost_watch++;
                 }
               }).ok());

  ASSERT_TRUE(ensemble_->ExpireSession(old_id, s->session_password()).ok());
  ASSERT_TRUE(Eventually(milliseconds(20000), [&] {
    return s->state() == ZkSessionState::kConnected && s->session_id() != old_id &&
           s->session_id() != 0;
  }));
  // Lost came before the new session's Connected.
  auto events = log.events();
  int lost_at = -1, reconnected_at = -1;
  for (int i = 0; i < static_cast<int>(events.size()); ++i) {
    if (events[i].state == ZkSessionState::kLost && lost_at < 0) lost_at = i;
    if (events[i].state == ZkSessionState::kConnected && lost_at >= 0) reconnected_at = i;
  }
  ASSERT_GE(lost_at, 0);
  ASSERT_GT(reconnected_at, lost_at);
  EXPECT_GT(events[reconnected_at].generation, events[lost_at].generation);
  EXPECT_TRUE(Eventually(milliseconds(5000), [&] { return lost_watch >= 1; }));
  EXPECT_TRUE(absl::IsNotFound(s->Get("/expiry/mine").status()));  // the ephemeral went
  // A call bound to the old session is fenced, not replayed on the new one.
  auto fenced = s->Set("/expiry", "z", -1, ZkCall{milliseconds(2000), old_id});
  EXPECT_TRUE(absl::IsFailedPrecondition(fenced.status())) << fenced.status();
  EXPECT_TRUE(s->Set("/expiry", "z").ok());
}

}  // namespace
}  // namespace tempest::coord
