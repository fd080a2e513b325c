// Proves the ZkEnsemble fixture against real ZooKeeper servers, using the bare
// C client so that no Tempest coordination code is involved.
#include "tests/support/zk_ensemble.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <thread>

#include "tests/support/eventually.h"
#include "tests/support/raw_zk_client.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kSessionTimeoutMs = 4000;

// Runs a synchronous C-client call on its own thread and reports whether it
// returned within `deadline`: that is how "no hang" is asserted. A call that
// hangs leaves its thread behind (detached); the test has failed by then.
template <typename Fn>
std::optional<int> CallWithin(milliseconds deadline, Fn fn) {
  auto task = std::make_shared<std::packaged_task<int()>>(std::move(fn));
  auto result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(deadline) != std::future_status::ready) return std::nullopt;
  return result.get();
}

class ThreeNodeEnsembleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto started = ZkEnsemble::Start({.size = 3});
    ASSERT_TRUE(started.ok()) << started.status();
    ensemble_ = started->release();
  }
  static void TearDownTestSuite() {
    delete ensemble_;
    ensemble_ = nullptr;
  }
  static ZkEnsemble* ensemble_;
};
ZkEnsemble* ThreeNodeEnsembleTest::ensemble_ = nullptr;

TEST_F(ThreeNodeEnsembleTest, HasOneLeaderAndServesWrites) {
  ASSERT_NE(ensemble_, nullptr);
  EXPECT_GE(ensemble_->LeaderIndex(), 0);
  int followers = 0;
  for (int i = 0; i < 3; ++i) {
    auto mode = ensemble_->Mode(i);
    ASSERT_TRUE(mode.ok()) << mode.status();
    if (*mode == "follower") ++followers;
  }
  EXPECT_EQ(followers, 2);
  auto client = RawZkClient::Connect(ensemble_->ConnectString(), kSessionTimeoutMs, seconds(20));
  ASSERT_NE(client, nullptr);
  ASSERT_EQ(client->Create("/served", "yes"), ZOK);
  // Every member sees the write (read from each one directly).
  for (int i = 0; i < 3; ++i) {
    auto member = RawZkClient::Connect(ensemble_->MemberConnectString(i), kSessionTimeoutMs,
                                       seconds(20));
    ASSERT_NE(member, nullptr);
    EXPECT_TRUE(Eventually(seconds(10), [&] { return member->Get("/served").second == "yes"; }));
  }
}

TEST_F(ThreeNodeEnsembleTest, PausedMemberIsDetected) {
  ASSERT_NE(ensemble_, nullptr);
  const int victim = 2;
  ASSERT_TRUE(ensemble_->IsServing(victim));
  ensemble_->Pause(victim);
  EXPECT_FALSE(ensemble_->IsServing(victim, milliseconds(500)));
  ensemble_->Resume(victim);
  EXPECT_TRUE(Eventually(seconds(30), [&] { return ensemble_->IsServing(victim); }));
  ASSERT_TRUE(ensemble_->WaitServing(victim, seconds(30)).ok());
}

TEST_F(ThreeNodeEnsembleTest, RefusesWritesWithoutQuorumAndRecovers) {
  ASSERT_NE(ensemble_, nullptr);
  auto client = RawZkClient::Connect(ensemble_->ConnectString(), kSessionTimeoutMs, seconds(20));
  ASSERT_NE(client, nullptr);
  ASSERT_EQ(client->Create("/before-loss", ""), ZOK);

  ensemble_->Kill(0);
  ensemble_->Kill(1);
  // The survivor stops serving once it notices it lost its quorum.
  EXPECT_TRUE(Eventually(seconds(30), [&] { return !ensemble_->IsServing(2); }));

  // A write must come back with an error (no quorum) within a deadline.
  // The C client fails requests once its receive timeout (2/3 of the session
  // timeout) passes, so 20 s is generous and still bounds a hang.
  auto rc = CallWithin(seconds(20), [&] { return client->Create("/during-loss", ""); });
  ASSERT_TRUE(rc.has_value()) << "write hung without quorum";
  EXPECT_NE(*rc, ZOK) << "write succeeded without quorum";
  std::printf("write without quorum returned %s\n", zerror(*rc));

  const auto restart_at = std::chrono::steady_clock::now();
  // Both members come back; neither serves until they form a quorum, so
  // start both before waiting on either.
  ASSERT_TRUE(ensemble_->Relaunch(0).ok());
  ASSERT_TRUE(ensemble_->Relaunch(1).ok());
  for (int i = 0; i < 3; ++i) {
    auto s = ensemble_->WaitServing(i, seconds(90));
    ASSERT_TRUE(s.ok()) << s;
  }

  // The same client handle (same process, no restart) writes again. Its
  // session may have expired during the outage; a fresh one must work then.
  int final_rc = ZSYSTEMERROR;
  EXPECT_TRUE(Eventually(seconds(60), [&] {
    if (client->State() == ZOO_EXPIRED_SESSION_STATE) {
      client = RawZkClient::Connect(ensemble_->ConnectString(), kSessionTimeoutMs, seconds(20));
      if (client == nullptr) return false;
    }
    final_rc = client->Create("/after-restore", "");
    return final_rc == ZOK || final_rc == ZNODEEXISTS;
  }, milliseconds(100)));
  std::printf("quorum restored; first successful write %.1f s after the restart began\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - restart_at)
                  .count());
  EXPECT_EQ(client->Exists("/before-loss"), ZOK);
}

TEST(StandaloneEnsembleTest, ExpiredSessionIsReallyExpired) {
  auto ensemble = ZkEnsemble::Start();
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  auto owner = RawZkClient::Connect((*ensemble)->ConnectString(), kSessionTimeoutMs, seconds(20));
  auto observer =
      RawZkClient::Connect((*ensemble)->ConnectString(), kSessionTimeoutMs, seconds(20));
  ASSERT_NE(owner, nullptr);
  ASSERT_NE(observer, nullptr);
  ASSERT_EQ(owner->Create("/ephemeral", "mine", ZOO_EPHEMERAL), ZOK);
  ASSERT_EQ(observer->Exists("/ephemeral"), ZOK);

  ASSERT_TRUE((*ensemble)->ExpireSession(owner->SessionId(), owner->Password()).ok());

  // The ephemeral node is gone for everyone...
  EXPECT_TRUE(Eventually(seconds(15), [&] { return observer->Exists("/ephemeral") == ZNONODE; }));
  // ...and the owner's own handle learns that its session expired.
  EXPECT_TRUE(Eventually(seconds(15), [&] {
    owner->Exists("/ephemeral");  // any request makes the client notice
    return owner->State() == ZOO_EXPIRED_SESSION_STATE;
  }, milliseconds(100)));
}

TEST(StandaloneEnsembleTest, StandaloneRestartKeepsData) {
  auto ensemble = ZkEnsemble::Start();
  ASSERT_TRUE(ensemble.ok()) << ensemble.status();
  {
    auto client = RawZkClient::Connect((*ensemble)->ConnectString(), kSessionTimeoutMs, seconds(20));
    ASSERT_NE(client, nullptr);
    ASSERT_EQ(client->Create("/durable", "kept"), ZOK);
  }
  (*ensemble)->Kill(0);
  EXPECT_FALSE((*ensemble)->IsServing(0));
  ASSERT_TRUE((*ensemble)->Restart(0).ok());
  auto client = RawZkClient::Connect((*ensemble)->ConnectString(), kSessionTimeoutMs, seconds(20));
  ASSERT_NE(client, nullptr);
  EXPECT_EQ(client->Get("/durable").second, "kept");
}

TEST(StandaloneEnsembleTest, OwnTempDirIsRemovedAndAGivenDirIsKept) {
  namespace fs = std::filesystem;
  std::string own_dir;
  {
    auto ensemble = ZkEnsemble::Start();
    ASSERT_TRUE(ensemble.ok()) << ensemble.status();
    own_dir = (*ensemble)->dir();
    EXPECT_TRUE(fs::exists(own_dir + "/zk1/zoo.cfg")) << own_dir;
  }
  if (std::getenv("TEMPEST_KEEP_TEST_DIRS") == nullptr) {
    EXPECT_FALSE(fs::exists(own_dir));
  }

  TempDir parent("zk-given-dir");
  const std::string given = parent.File("ensemble");  // missing: Start creates it
  {
    auto ensemble = ZkEnsemble::Start({.dir = given});
    ASSERT_TRUE(ensemble.ok()) << ensemble.status();
    EXPECT_EQ((*ensemble)->dir(), given);
    EXPECT_TRUE((*ensemble)->IsServing(0, seconds(5)));
  }
  EXPECT_TRUE(fs::exists(given + "/zk1/zoo.cfg"));
  EXPECT_TRUE(fs::exists(given + "/zk1/data"));
}

}  // namespace
}  // namespace tempest::testing
