#include "study/scenario.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace tempest::study {
namespace {

TEST(ScenarioTest, BuiltinsAreTheNamedSeventeenOnOneHostAndSixPartitions) {
  std::set<std::string> names;
  for (const Scenario& s : DefaultScenarios(/*hosts=*/false)) names.insert(s.name);
  const std::set<std::string> expected = {
      "worker-kill",           "supervisor-kill",    "nimbus-kill",      "zk-session-expiry",
      "zk-leader-kill",        "zk-quorum-loss",     "zombie-spout",     "kafka-broker-down",
      "retention-past-offset", "bolt-failures",      "slow-bolt",        "clean-restart",
      "zk-overload",           "zk-permission-lost", "zk-misconfigured", "rebalance-under-load",
      "upgrade-under-load"};
  EXPECT_EQ(names, expected);
  std::set<std::string> partitions;
  for (const Scenario& s : DefaultScenarios(/*hosts=*/true)) {
    EXPECT_TRUE(NeedsHosts(s.fault)) << s.name;
    EXPECT_GT(s.duration_s, 0) << s.name;
    partitions.insert(s.name);
  }
  const std::set<std::string> expected_partitions = {
      "partition-worker-pair",   "partition-spout-zk",    "partition-supervisor-host",
      "partition-nimbus-leader", "partition-zk-minority", "lossy-network"};
  EXPECT_EQ(partitions, expected_partitions);
  EXPECT_EQ(BuiltinScenarios().size(), expected.size() + expected_partitions.size());
  for (const Scenario& s : BuiltinScenarios()) EXPECT_FALSE(s.description.empty()) << s.name;
}

TEST(ScenarioTest, LossPercentBelongsToLossyNetworkAndStaysInRange) {
  absl::StatusOr<std::vector<Scenario>> ok = ParseScenarios(
      "- {name: lossy, fault: lossy-network, duration_s: 5, loss_percent: 20}\n", "f.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)[0].loss_percent, 20);
  EXPECT_EQ(PlanFault((*ok)[0], 1, 10).loss_percent, 20);
  absl::StatusOr<std::vector<Scenario>> wrong_fault = ParseScenarios(
      "- {name: k, fault: kill-worker, loss_percent: 20}\n", "f.yaml");
  ASSERT_FALSE(wrong_fault.ok());
  EXPECT_NE(wrong_fault.status().message().find("loss_percent applies to lossy-network"),
            std::string::npos)
      << wrong_fault.status();
  for (const char* bad : {"0", "51", "x"}) {
    absl::StatusOr<std::vector<Scenario>> r = ParseScenarios(
        absl::StrCat("- {name: l, fault: lossy-network, duration_s: 5, loss_percent: ", bad,
                     "}\n"),
        "f.yaml");
    EXPECT_FALSE(r.ok()) << bad;
  }
  // A partition needs a duration like every fault that acts over a window.
  EXPECT_FALSE(ParseScenarios("- {name: p, fault: partition-spout-zk}\n", "f.yaml").ok());
}

TEST(ScenarioTest, TheOffsetPathScenariosUseTheirFaults) {
  std::map<std::string, std::pair<FaultKind, double>> want = {
      {"zk-overload", {FaultKind::kZkOverload, 10}},
      {"zk-permission-lost", {FaultKind::kZkAclRevoked, 8}},
      {"zk-misconfigured", {FaultKind::kZkMisconfigured, 0}}};
  for (const Scenario& s : BuiltinScenarios()) {
    auto it = want.find(s.name);
    if (it == want.end()) continue;
    EXPECT_EQ(s.fault, it->second.first) << s.name;
    EXPECT_EQ(s.duration_s, it->second.second) << s.name;
    want.erase(it);
  }
  EXPECT_TRUE(want.empty());
  // Overload and a revoked ACL act over a window: a duration is required.
  for (const char* fault : {"zk-overload", "zk-acl-revoked"}) {
    absl::StatusOr<std::vector<Scenario>> parsed =
        ParseScenarios(absl::StrCat("- {name: x, fault: ", fault, "}\n"), "mine.yaml");
    ASSERT_FALSE(parsed.ok()) << fault;
    EXPECT_NE(parsed.status().message().find("needs duration_s > 0"), std::string::npos)
        << parsed.status();
  }
  EXPECT_TRUE(ParseScenarios("- {name: x, fault: zk-misconfigured}\n", "mine.yaml").ok());
}

TEST(ScenarioTest, QuorumLossLastsTenSecondsAndBoltFailuresFailTenPercent) {
  for (const Scenario& s : BuiltinScenarios()) {
    if (s.name == "zk-quorum-loss") {
      EXPECT_EQ(s.fault, FaultKind::kZkQuorumLoss);
      EXPECT_EQ(s.duration_s, 10);
    }
    if (s.name == "bolt-failures") {
      EXPECT_DOUBLE_EQ(s.fail_fraction, 0.1);
    }
  }
}

TEST(ScenarioTest, ParsesAUsersScenario) {
  auto parsed = ParseScenarios(R"(
- name: long-gc
  fault: pause-worker
  at: [0.1, 0.2]
  duration_s: 12.5
  description: a 12 s stop-the-world pause
- name: flaky
  fault: bolt-failures
  at: 0.5
  duration_s: 4
  fail_fraction: 0.3
)",
                               "mine.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].fault, FaultKind::kPauseWorker);
  EXPECT_DOUBLE_EQ((*parsed)[0].at_min, 0.1);
  EXPECT_DOUBLE_EQ((*parsed)[0].at_max, 0.2);
  EXPECT_DOUBLE_EQ((*parsed)[0].duration_s, 12.5);
  EXPECT_DOUBLE_EQ((*parsed)[1].at_min, 0.5);
  EXPECT_DOUBLE_EQ((*parsed)[1].at_max, 0.5);
  EXPECT_DOUBLE_EQ((*parsed)[1].fail_fraction, 0.3);
}

TEST(ScenarioTest, BadScenariosGetOneErrorWithFileAndLine) {
  struct Case {
    const char* yaml;
    const char* message;
  };
  const Case cases[] = {
      {"- name: a\n  fault: meteor\n", "mine.yaml:2: unknown fault 'meteor'"},
      {"- name: a\n  fault: kill-worker\n  colour: red\n", "mine.yaml:3: unknown key 'colour'"},
      {"- fault: kill-worker\n", "needs a name"},
      {"- name: a\n", "needs a fault"},
      {"- name: Big Name\n  fault: kill-worker\n", "must be 1-48 characters"},
      {"- name: a\n  fault: kill-worker\n  at: [0.7, 0.2]\n", "within [0, 1]"},
      {"- name: a\n  fault: kill-worker\n  duration_s: -1\n", "duration_s"},
      {"- name: a\n  fault: kill-worker\n  duration_s: soon\n", "is not a valid value"},
      {"- name: a\n  fault: kill-worker\n- name: a\n  fault: kill-nimbus\n", "defined twice"},
      {"scenarios: [\n", "not valid YAML"},
      {"just text\n", "expected a list"},
      {"[]\n", "no scenarios"},
      {"- name: a\n  fault: pause-worker\n", "needs duration_s > 0"},
      {"- name: a\n  fault: zk-quorum-loss\n  duration_s: 0\n", "mine.yaml:3: fault zk-quorum-loss needs"},
      {"- name: a\n  fault: kill-worker\n  fail_fraction: 0.5\n", "mine.yaml:3: fail_fraction applies to"},
      {"- name: a\n  fault: bolt-failures\n  duration_s: 5\n  delay_ms: 5\n", "delay_ms applies to"},
      {"- name: a\n  fault: kill-worker\n  name: b\n", "mine.yaml:3: key 'name' is given twice"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseScenarios(c.yaml, "mine.yaml");
    ASSERT_FALSE(parsed.ok()) << c.yaml;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(parsed.status().message()).find(c.message), std::string::npos)
        << parsed.status() << " for " << c.yaml;
  }
}

TEST(ScenarioTest, TheSameSeedPlansTheSameFault) {
  const Scenario& s = BuiltinScenarios().front();
  const FaultPlan a = PlanFault(s, 42, 10.0);
  const FaultPlan b = PlanFault(s, 42, 10.0);
  EXPECT_EQ(a.start_s, b.start_s);
  EXPECT_EQ(a.pick, b.pick);
  EXPECT_GE(a.start_s, s.at_min * 10.0);
  EXPECT_LE(a.start_s, s.at_max * 10.0);
  // Another seed moves it (for these two seeds).
  EXPECT_NE(PlanFault(s, 43, 10.0).start_s, a.start_s);
}

TEST(ScenarioTest, AScenariosPlanIgnoresTheOthers) {
  // Planned by name: leaving other scenarios out changes nothing.
  Scenario s = BuiltinScenarios()[3];
  const FaultPlan alone = PlanFault(s, 7, 10.0);
  for (const Scenario& other : BuiltinScenarios()) (void)PlanFault(other, 7, 10.0);
  EXPECT_EQ(PlanFault(s, 7, 10.0).start_s, alone.start_s);
  Scenario renamed = s;
  renamed.name = "another-name";
  EXPECT_NE(PlanFault(renamed, 7, 10.0).start_s, alone.start_s);
}

TEST(ScenarioTest, FaultKindsRoundTripByName) {
  for (const auto& [kind, description] : FaultKinds()) {
    auto parsed = ParseFaultKind(FaultKindName(kind));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, kind);
    EXPECT_FALSE(description.empty());
  }
}

}  // namespace
}  // namespace tempest::study
