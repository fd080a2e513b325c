// Rebalance validation and the recomputed StormBase (Storm's rebalance
// transition and DO_REBALANCE), without ZooKeeper.

#include "nimbus/rebalance.h"

#include "absl/strings/str_replace.h"
#include "bolts/builtin_bolts.h"
#include "gtest/gtest.h"
#include "nimbus/topology_store.h"
#include "spout/builtin_spouts.h"
#include "tests/support/demo_flux.h"

namespace tempest::nimbus {
namespace {

// The demo topology with 4 tasks for gen's 2 executors: gen 2 executors /
// 4 tasks; sink 3 executors / 3 tasks; 2 workers, so 2 ackers: 7 executors,
// 9 tasks.
const std::string kFlux = absl::StrReplaceAll(
    testing::kGenSinkFlux, {{"    parallelism: 2\n", "    parallelism: 2\n    numTasks: 4\n"}});

class RebalanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(spout::RegisterBuiltinSpouts(registry_).ok());
    ASSERT_TRUE(bolts::RegisterBuiltinBolts(registry_).ok());
    SubmitRequest r;
    r.flux_text = kFlux;
    r.file_name = "demo.yaml";
    auto b = TopologyStore::Prepare(r, registry_, 1000);
    ASSERT_TRUE(b.ok()) << b.status();
    base_ = *b;
  }
  api::ComponentRegistry registry_;
  v1::StormBase base_;
};

RebalanceRequest Req(std::optional<int> wait, std::optional<int> workers,
                     std::map<std::string, int> executors) {
  RebalanceRequest r;
  r.wait_secs = wait;
  r.num_workers = workers;
  r.executors = std::move(executors);
  return r;
}

int ExecutorsOf(const v1::StormBase& b, const std::string& component) {
  int n = 0;
  for (const auto& e : b.executors()) n += e.component() == component ? 1 : 0;
  return n;
}

TEST_F(RebalanceTest, SubmittedLayoutIsAsExpected) {
  EXPECT_EQ(base_.num_executors(), 7);
  EXPECT_EQ(base_.num_tasks(), 9);
  EXPECT_EQ(ExecutorsOf(base_, "gen"), 2);
}

TEST_F(RebalanceTest, ValidationRejectsEachBadRequestWithAClearMessage) {
  auto request = [](std::optional<int> wait, std::optional<int> workers,
                    std::map<std::string, int> executors) {
    RebalanceRequest r;
    r.wait_secs = wait;
    r.num_workers = workers;
    r.executors = std::move(executors);
    return r;
  };
  struct Case {
    RebalanceRequest request;
    std::string message;
  };
  const std::vector<Case> cases = {
      {request(std::nullopt, 0, {}), "at least 1, not 0"},
      {request(std::nullopt, -3, {}), "at least 1, not -3"},
      {request(-1, std::nullopt, {}), "wait must not be negative"},
      {request(std::nullopt, std::nullopt, {{"nope", 1}}), "has no component 'nope'"},
      {request(std::nullopt, std::nullopt, {{"__acker", 1}}), "has no component '__acker'"},
      {request(std::nullopt, std::nullopt, {{"snik", 2}}),
       "has no component 'snik'; did you mean 'sink'? (its components: gen, sink)"},
      {request(std::nullopt, std::nullopt, {{"sink", 0}}), "needs at least 1 executor, not 0"},
      {request(std::nullopt, std::nullopt, {{"sink", 4}}), "has 3 tasks, so it cannot have 4"},
  };
  for (const Case& c : cases) {
    absl::Status s = ValidateRebalance(base_, c.request);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << c.message << ": " << s;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s;
    EXPECT_FALSE(BeginRebalance(base_, c.request, 2000).ok());
  }
  EXPECT_TRUE(ValidateRebalance(base_, request(std::nullopt, 4, {{"gen", 4}, {"sink", 1}})).ok());
}

TEST_F(RebalanceTest, ExecutorThreadsPerWorkerAreLimitedAsAtSubmit) {
  SubmitRequest r;
  r.flux_text = kFlux;
  r.file_name = "demo.yaml";
  r.config_overrides["tempest.limits.max.executors.per.worker"] = "4";
  auto limited = TopologyStore::Prepare(r, registry_, 1000);
  ASSERT_TRUE(limited.ok()) << limited.status();
  // 7 executors (ackers included): 4 per worker over 2 workers, 7 over 1.
  EXPECT_TRUE(ValidateRebalance(*limited, Req(std::nullopt, 2, {})).ok());
  absl::Status s = ValidateRebalance(*limited, Req(std::nullopt, 1, {}));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_EQ(s.message(),
            "7 executors over 1 worker make 7 executor threads in one worker; at most 4 are "
            "allowed (tempest.limits.max.executors.per.worker, at most 2000): add workers or "
            "lower parallelism");
  s = ValidateRebalance(*limited, Req(std::nullopt, std::nullopt, {{"gen", 4}}));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << "9 executors over 2 workers: " << s;
  EXPECT_FALSE(BeginRebalance(*limited, Req(std::nullopt, 1, {}), 2000).ok());
  // The default limit (500) leaves the demo's rebalances alone.
  EXPECT_TRUE(ValidateRebalance(base_, Req(std::nullopt, 1, {{"gen", 4}})).ok());
}

TEST_F(RebalanceTest, RequestsBeyondTheSubmissionLimitsAreRefusedNamingTheLimit) {
  absl::Status workers = ValidateRebalance(base_, Req(std::nullopt, 100000, {}));
  EXPECT_TRUE(absl::IsInvalidArgument(workers)) << workers;
  EXPECT_NE(
      workers.message().find("100000 is above the limit of 1000 (tempest.limits.max.workers)"),
      std::string::npos)
      << workers;
  EXPECT_FALSE(BeginRebalance(base_, Req(std::nullopt, 100000, {}), 2000).ok());
  EXPECT_TRUE(ValidateRebalance(base_, Req(std::nullopt, 1000, {})).ok());

  // A topology submitted with its own limits is held to those.
  SubmitRequest r;
  r.flux_text = kFlux;
  r.file_name = "demo.yaml";
  r.config_overrides = {{"tempest.limits.max.workers", "2000"},
                        {"tempest.limits.max.parallelism", "3"}};
  auto raised = TopologyStore::Prepare(r, registry_, 1000);
  ASSERT_TRUE(raised.ok()) << raised.status();
  EXPECT_TRUE(ValidateRebalance(*raised, Req(std::nullopt, 1500, {})).ok());
  absl::Status above = ValidateRebalance(*raised, Req(std::nullopt, 2001, {}));
  EXPECT_NE(above.message().find("limit of 2000"), std::string::npos) << above;
  absl::Status executors =
      ValidateRebalance(*raised, Req(std::nullopt, std::nullopt, {{"gen", 4}}));
  EXPECT_NE(executors.message().find("component 'gen': 4 executors is above the limit of 3 "
                                     "(tempest.limits.max.parallelism)"),
            std::string::npos)
      << executors;
}

TEST_F(RebalanceTest, BeginSavesTheStatusAndTheWait) {
  base_.set_status(v1::INACTIVE);
  auto begun = BeginRebalance(base_, Req(5, 4, {{"gen", 4}}), 2000);
  ASSERT_TRUE(begun.ok()) << begun.status();
  EXPECT_EQ(begun->status(), v1::REBALANCING);
  EXPECT_EQ(begun->prev_status(), v1::INACTIVE);
  EXPECT_EQ(begun->rebalance_at_secs(), 2005);
  EXPECT_EQ(begun->rebalance_num_workers(), 4);
  // The counts wait outside component_executors, so a worker started
  // meanwhile still loads the layout its assignment was made for.
  EXPECT_TRUE(begun->component_executors().empty());
  EXPECT_EQ(PendingExecutors(*begun), (std::map<std::string, int>{{"gen", 4}}));
  // The running layout is untouched until the reschedule.
  EXPECT_EQ(begun->num_executors(), 7);
  EXPECT_EQ(begun->num_workers(), 2);
  // Default wait: the message timeout (30 s).
  EXPECT_EQ(BeginRebalance(base_, RebalanceRequest(), 2000)->rebalance_at_secs(), 2030);
  // REBALANCING and KILLED cannot be rebalanced again.
  EXPECT_TRUE(absl::IsFailedPrecondition(BeginRebalance(*begun, RebalanceRequest(), 2000).status()));
  base_.set_status(v1::KILLED);
  EXPECT_TRUE(absl::IsFailedPrecondition(BeginRebalance(base_, RebalanceRequest(), 2000).status()));
}

TEST_F(RebalanceTest, FinishRecomputesTheLayoutAndRestoresTheStatus) {
  auto begun = BeginRebalance(base_, Req(0, 4, {{"gen", 4}, {"sink", 1}}), 2000);
  ASSERT_TRUE(begun.ok());
  auto done = FinishRebalance(*begun);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->status(), v1::ACTIVE);
  EXPECT_EQ(done->num_workers(), 4);
  EXPECT_EQ(done->rebalance_at_secs(), 0);
  EXPECT_EQ(done->rebalance_num_workers(), 0);
  EXPECT_FALSE(done->config_overrides().contains(kPendingExecutorsKey));
  EXPECT_EQ(done->component_executors().at("sink"), 1);
  EXPECT_TRUE(PendingExecutors(*done).empty());
  EXPECT_EQ(ExecutorsOf(*done, "gen"), 4);
  EXPECT_EQ(ExecutorsOf(*done, "sink"), 1);
  // Ackers come from the topology's config (topology.workers: 2), as every
  // worker computes them, not from the new worker count.
  EXPECT_EQ(ExecutorsOf(*done, "__acker"), 2);
  EXPECT_EQ(done->num_executors(), 7);
  EXPECT_EQ(done->num_tasks(), 9);  // tasks are fixed at submission
  for (const auto& c : done->components()) {
    if (c.id() == "gen") {
      EXPECT_TRUE(c.spout());
      EXPECT_EQ(c.executors(), 4);
      EXPECT_EQ(c.tasks(), 4);
    }
    if (c.id() == "sink") {
      EXPECT_EQ(c.executors(), 1);
    }
  }
  // Task ranges stay contiguous and cover every task once.
  int next = 1;
  for (const auto& e : done->executors()) {
    EXPECT_EQ(e.start_task(), next);
    next = e.end_task() + 1;
  }
  EXPECT_EQ(next, 10);

  // Workers only: executors unchanged; an INACTIVE topology stays INACTIVE.
  base_.set_status(v1::INACTIVE);
  auto only_workers = FinishRebalance(*BeginRebalance(base_, Req(0, 1, {}), 2000));
  ASSERT_TRUE(only_workers.ok());
  EXPECT_EQ(only_workers->status(), v1::INACTIVE);
  EXPECT_EQ(only_workers->num_workers(), 1);
  EXPECT_EQ(only_workers->num_executors(), 7);
  EXPECT_TRUE(absl::IsFailedPrecondition(FinishRebalance(base_).status()));
  // A damaged pending record is an error, not a guess.
  auto damaged = *BeginRebalance(base_, Req(0, std::nullopt, {{"gen", 4}}), 2000);
  (*damaged.mutable_config_overrides())[kPendingExecutorsKey] = "{oops";
  EXPECT_TRUE(absl::IsDataLoss(FinishRebalance(damaged).status()));
}

}  // namespace
}  // namespace tempest::nimbus
