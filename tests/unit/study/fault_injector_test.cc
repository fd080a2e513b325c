#include "study/fault_injector.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::study {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Records what a fault asked of its scenario, on a clock the test moves.
class RecordingTargets : public FaultTargets {
 public:
  double Now() const override { return now; }
  std::vector<StudyWorld::Worker> SpoutWorkers() const override { return {}; }
  std::vector<StudyWorld::Worker> TopologyWorkers() const override { return {}; }
  absl::Status KillTopologies() override {
    calls.push_back("kill");
    return absl::OkStatus();
  }
  absl::Status SubmitTopologies() override {
    calls.push_back("submit");
    return absl::OkStatus();
  }
  void HoldProduction(bool held) override { calls.push_back(held ? "hold" : "release"); }
  void ProduceBigRecords() override { calls.push_back("big records"); }
  absl::Status RecordRetentionLoss() override {
    calls.push_back("retention loss");
    return absl::OkStatus();
  }
  void Note(std::string note) override { notes.push_back(std::move(note)); }
  std::vector<std::string> OffsetNodes() override { return {}; }
  absl::Status SubmitTopologiesWith(ZkServers servers) override {
    calls.push_back(servers == ZkServers::kMissingChroot ? "submit missing-chroot"
                                                         : "submit dead-first");
    return absl::OkStatus();
  }
  absl::Status WaitWorkerLogs(std::string_view needle, std::chrono::seconds) override {
    calls.push_back(absl::StrCat("wait for '", std::string(needle), "'"));
    return logs_refuse ? absl::OkStatus() : absl::NotFoundError("0 of 3");
  }
  absl::Status WaitSpoutsRunning(std::chrono::seconds) override {
    calls.push_back("wait running");
    return absl::OkStatus();
  }
  absl::Status RebalanceTopologies(int executors) override {
    calls.push_back(absl::StrCat("rebalance transform=", executors));
    return absl::OkStatus();
  }
  absl::Status UpgradeTopologies() override {
    calls.push_back("upgrade");
    return absl::OkStatus();
  }

  bool logs_refuse = true;
  double now = 0;
  std::vector<std::string> calls;
  std::vector<std::string> notes;
};

TEST(FaultInjectorTest, TheTransformSwitchIsOnFromInjectUntilHeal) {
  testing::TempDir dir("study-fault");
  const std::string switch_file = dir.File("fault-on");
  RecordingTargets targets;
  FaultInjector injector(nullptr, FaultKind::kSlowBolt, FaultPlan{3, 5, 0}, switch_file, targets);
  EXPECT_FALSE(injector.injected());
  EXPECT_FALSE(injector.start_s().has_value());

  targets.now = 3.25;
  ASSERT_TRUE(injector.Inject().ok());
  EXPECT_TRUE(injector.injected());
  EXPECT_FALSE(injector.healed());
  EXPECT_EQ(injector.start_s(), 3.25);
  EXPECT_TRUE(std::filesystem::exists(switch_file));

  targets.now = 8.5;
  ASSERT_TRUE(injector.Heal().ok());
  EXPECT_TRUE(injector.healed());
  EXPECT_EQ(injector.end_s(), 8.5);
  EXPECT_FALSE(std::filesystem::exists(switch_file));
  EXPECT_TRUE(targets.calls.empty());
}

TEST(FaultInjectorTest, RetentionHoldsProductionWhileTheTopologiesDieAndResubmitsOnHeal) {
  RecordingTargets targets;
  FaultInjector injector(nullptr, FaultKind::kRetention, FaultPlan{}, "unused", targets);
  ASSERT_TRUE(injector.Inject().ok());
  EXPECT_THAT(targets.calls, ElementsAre("hold", "kill", "big records", "release"));
  targets.calls.clear();
  ASSERT_TRUE(injector.Heal().ok());
  EXPECT_THAT(targets.calls, ElementsAre("retention loss", "submit"));
}

TEST(FaultInjectorTest, ARebalanceSplitsTheTransformAndHealingMergesItBack) {
  RecordingTargets targets;
  FaultInjector injector(nullptr, FaultKind::kRebalance, FaultPlan{2, 8, 0}, "unused", targets);
  ASSERT_TRUE(injector.Inject().ok());
  EXPECT_THAT(targets.calls, ElementsAre("rebalance transform=2"));
  targets.calls.clear();
  ASSERT_TRUE(injector.Heal().ok());
  EXPECT_THAT(targets.calls, ElementsAre("rebalance transform=1"));
}

TEST(FaultInjectorTest, AnUpgradeIsOneEventWithNothingToHeal) {
  RecordingTargets targets;
  FaultInjector injector(nullptr, FaultKind::kUpgrade, FaultPlan{}, "unused", targets);
  ASSERT_TRUE(injector.Inject().ok());
  EXPECT_THAT(targets.calls, ElementsAre("upgrade"));
  targets.calls.clear();
  ASSERT_TRUE(injector.Heal().ok());
  EXPECT_TRUE(targets.calls.empty());
}

TEST(FaultInjectorTest, AWorkerKillWithoutSpoutWorkersIsNoted) {
  RecordingTargets targets;
  FaultInjector injector(nullptr, FaultKind::kKillWorker, FaultPlan{}, "unused", targets);
  ASSERT_TRUE(injector.Inject().ok());
  EXPECT_THAT(targets.notes, ElementsAre(HasSubstr("no spout worker")));
  ASSERT_TRUE(injector.Heal().ok());
  EXPECT_TRUE(injector.end_s().has_value());
}

TEST(FaultInjectorTest, ARestartKillsThenSubmits) {
  RecordingTargets targets;
  FaultInjector injector(nullptr, FaultKind::kRestartTopology, FaultPlan{}, "unused", targets);
  ASSERT_TRUE(injector.Inject().ok());
  EXPECT_THAT(targets.calls, ElementsAre("kill", "submit"));
}

TEST(FaultInjectorTest, MisconfigurationRefusesAMissingChrootThenRunsWithADeadServerFirst) {
  RecordingTargets targets;
  FaultInjector injector(nullptr, FaultKind::kZkMisconfigured, FaultPlan{}, "unused", targets);
  ASSERT_TRUE(injector.Inject().ok());
  EXPECT_THAT(targets.calls, ElementsAre("kill", "submit missing-chroot",
                                         absl::StrCat("wait for 'the ZooKeeper chroot ",
                                                      kMissingChroot, " of zkServers'"),
                                         "kill", "submit dead-first", "wait running"));
  EXPECT_TRUE(targets.notes.empty());
  ASSERT_TRUE(injector.Heal().ok());
}

TEST(FaultInjectorTest, ASpoutThatOpensWithAMissingChrootIsNoted) {
  RecordingTargets targets;
  targets.logs_refuse = false;
  FaultInjector injector(nullptr, FaultKind::kZkMisconfigured, FaultPlan{}, "unused", targets);
  ASSERT_TRUE(injector.Inject().ok());
  EXPECT_THAT(targets.notes, ElementsAre(HasSubstr("did not refuse to open")));
}

TEST(FaultInjectorTest, TheOverloadPauseStaysBelowTheClientsReadTimeout) {
  // The world's session timeout is 4 s: clients give up on a connection
  // after 2/3 of it; the servers' sync limit is 3 s.
  EXPECT_GT(kOverloadPaused, std::chrono::milliseconds(500));  // the spouts' commit interval
  EXPECT_LT(kOverloadPaused, std::chrono::milliseconds(4000 * 2 / 3));
  EXPECT_LT(kOverloadPaused, kOverloadPeriod);
}

}  // namespace
}  // namespace tempest::study
