#include "study/rebalance_run.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "study/pipeline_topology.h"
#include "study/report_markdown.h"
#include "study/results_json.h"
#include "tests/unit/study/study_run_checks.h"

namespace tempest::study {
namespace {

// Production of 10 records/s with the sink 0.2 s behind, except between 3.0
// and 4.0 s, when it receives nothing.
std::vector<Sample> SamplesWithAGap() {
  std::vector<Sample> samples;
  int64_t received = 0;
  for (int i = 0; i <= 40; ++i) {
    const double t = i * 0.2;
    Sample x;
    x.t_s = t;
    x.log_end = static_cast<int64_t>(t * 10) + 2;
    if (t < 2.99 || t > 4.19) received = x.log_end - 2;
    x.sink_received = received;
    x.sink_distinct = received;
    x.committed = received;
    samples.push_back(x);
  }
  return samples;
}

RunResult RebalancedRun(const std::string& guarantee) {
  RunResult r;
  r.scenario = "rebalance-under-load";
  r.guarantee = guarantee;
  r.fault = "rebalance";
  r.records = 80;
  r.fault_start_s = 2.5;
  r.samples = SamplesWithAGap();
  RebalanceFigures f;
  f.workers_before = 2;
  f.kept = 2;
  f.restarted = 0;
  f.applied = 2;
  f.settle_s = {1.25, 0.75};
  f.moved_at_s = {2.5, 5.5};
  FillOutputGaps(r.samples, f);
  r.rebalance = f;
  return r;
}

TEST(RebalanceRunTest, TheLongestOutputGapIsTheSinksLongestSilenceWhileRecordsWaited) {
  const std::vector<Sample> samples = SamplesWithAGap();
  // Last rise at 2.8 s, the next at 4.2 s.
  ASSERT_TRUE(LongestOutputGap(samples, 0).has_value());
  EXPECT_NEAR(*LongestOutputGap(samples, 0), 1.4, 1e-9);
  // A gap that ended before `from` does not count; a steady flow reads as
  // one sample interval.
  EXPECT_NEAR(*LongestOutputGap(samples, 5.0), 0.2, 1e-9);
  EXPECT_FALSE(LongestOutputGap({}, 0).has_value());
  // Only the gaps that end inside the window count.
  EXPECT_NEAR(*LongestOutputGap(samples, 0, 4.0), 0.2, 1e-9);
  EXPECT_NEAR(*LongestOutputGap(samples, 4.0, 5.0), 1.4, 1e-9);
  // A sink with nothing to receive is not in a gap.
  std::vector<Sample> idle = samples;
  for (Sample& x : idle) x.log_end = x.sink_received = x.sink_distinct = 5;
  EXPECT_NEAR(*LongestOutputGap(idle, 0), 0, 1e-9);
}

TEST(RebalanceRunTest, EachRebalanceGetsTheGapUntilTheNext) {
  RebalanceFigures f;
  FillOutputGaps(SamplesWithAGap(), f);
  EXPECT_FALSE(f.output_gap_s.has_value()) << "no rebalance, no gap";
  EXPECT_TRUE(f.gaps_s.empty());
  f.moved_at_s = {2.5, 5.5};
  FillOutputGaps(SamplesWithAGap(), f);
  ASSERT_EQ(f.gaps_s.size(), 2u);
  EXPECT_NEAR(f.gaps_s[0], 1.4, 1e-9);
  EXPECT_NEAR(f.gaps_s[1], 0.2, 1e-9);
  EXPECT_NEAR(*f.output_gap_s, 1.4, 1e-9);
}

TEST(RebalanceRunTest, BoundsHoldLostAtZeroDuplicatesToTheReplayBoundAndEveryWorkerKept) {
  RunResult ok = RebalancedRun("at-least-once");
  ok.dedup_sink = DedupSinkResult{};
  std::vector<BoundCheck> b = CheckRebalanceBounds(ok);
  for (const BoundCheck& c : b) EXPECT_TRUE(c.pass) << c.figure << " " << c.value;
  EXPECT_EQ(BoundOf(b, "workers kept").value, "2 of 2");
  EXPECT_EQ(BoundOf(b, "workers restarted").bound, "= 0");
  EXPECT_EQ(BoundOf(b, "settle (s)").value, "1.2, 0.8");
  EXPECT_EQ(BoundOf(b, "longest output gap (s)").value, "1.4");
  EXPECT_EQ(BoundOf(b, "output gap per rebalance (s)").value, "1.4, 0.2");
  EXPECT_TRUE(RebalanceViolations(ok).empty());

  RunResult bad = RebalancedRun("no-guarantee");
  bad.lost = 3;
  bad.duplicated = 1000;
  bad.rebalance->kept = 0;
  bad.rebalance->restarted = 2;
  bad.rebalance->applied = 1;
  b = CheckRebalanceBounds(bad);
  EXPECT_FALSE(BoundOf(b, "lost").pass) << "a rebalance may not lose, whatever the guarantee";
  EXPECT_FALSE(BoundOf(b, "duplicated").pass);
  EXPECT_FALSE(BoundOf(b, "workers kept").pass);
  EXPECT_FALSE(BoundOf(b, "workers restarted").pass);
  EXPECT_FALSE(BoundOf(b, "rebalances applied").pass);
  EXPECT_EQ(RebalanceViolations(bad).size(), 5u);

  RunResult amo = RebalancedRun("at-most-once");
  amo.duplicated = 1;
  EXPECT_EQ(BoundOf(CheckRebalanceBounds(amo), "duplicated").bound, "= 0");
  // CheckExpectations already reports an at-most-once duplicate.
  EXPECT_TRUE(RebalanceViolations(amo).empty());
}

TEST(RebalanceRunTest, FiguresRoundTripAndFillTheirOwnTable) {
  StudyResults in;
  RunResult r = RebalancedRun("at-least-once");
  r.bounds = CheckRebalanceBounds(r);
  in.runs.push_back(r);
  absl::StatusOr<StudyResults> out = ResultsFromJson(ResultsToJson(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->runs[0].rebalance.has_value());
  const RebalanceFigures& f = *out->runs[0].rebalance;
  EXPECT_EQ(f.workers_before, 2);
  EXPECT_EQ(f.kept, 2);
  EXPECT_EQ(f.restarted, 0);
  EXPECT_EQ(f.applied, 2);
  EXPECT_EQ(f.settle_s, (std::vector<double>{1.25, 0.75}));
  EXPECT_EQ(f.moved_at_s, (std::vector<double>{2.5, 5.5}));
  ASSERT_EQ(f.gaps_s.size(), 2u);
  EXPECT_NEAR(f.gaps_s[1], 0.2, 1e-9);
  ASSERT_TRUE(f.output_gap_s.has_value());
  EXPECT_NEAR(*f.output_gap_s, 1.4, 1e-9);
  EXPECT_EQ(out->runs[0].bounds.size(), r.bounds.size());

  const std::string section = ExpectOwnReportSection(in, "## Rebalance under load",
                                                     "| rebalance-under-load | at-least-once |");
  EXPECT_NE(section.find("2 of 2 (all) pass"), std::string::npos) << section;
}

TEST(RebalanceRunTest, TheRebalancedPipelineGivesItsTransformTasksToSplit) {
  Scenario scenario;
  scenario.name = "rebalance-under-load";
  scenario.fault = FaultKind::kRebalance;
  PipelineSite site;
  site.dir = "/out";
  const PipelineSpec spec = PipelineFor(scenario, "at-least-once", site);
  EXPECT_EQ(spec.transform_tasks, kRebalancedExecutors);
  EXPECT_NE(PipelineTopologyYaml(spec).find("  - id: transform\n    className: "
                                            "tempest.IdentityBolt\n    parallelism: 1\n"
                                            "    numTasks: 2\n"),
            std::string::npos)
      << PipelineTopologyYaml(spec);
  scenario.fault = FaultKind::kKillWorker;
  EXPECT_EQ(PipelineTopologyYaml(PipelineFor(scenario, "at-least-once", site)).find("numTasks"),
            std::string::npos);
}

}  // namespace
}  // namespace tempest::study
