#include "study/run_analysis.h"

#include <algorithm>
#include <fstream>
#include <functional>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::study {
namespace {

DeliveryCounts Counts(std::vector<uint32_t> copies) { return DeliveryCounts{std::move(copies), 0, 0}; }

TEST(RecordLayoutTest, SeqMapsToPartitionAndOffsetAndBack) {
  RecordLayout l{10, 4};
  EXPECT_EQ(l.PartitionOf(6), 2);
  EXPECT_EQ(l.OffsetOf(6), 1);
  EXPECT_EQ(l.SeqAt(2, 1), 6);
  EXPECT_EQ(l.CountIn(0), 3);  // 0, 4, 8
  EXPECT_EQ(l.CountIn(1), 3);  // 1, 5, 9
  EXPECT_EQ(l.CountIn(2), 2);  // 2, 6
  EXPECT_EQ(l.CountIn(3), 2);
}

TEST(RunAnalysisTest, CountsPlainAndKeyedLogLines) {
  testing::TempDir dir("study-analysis");
  const std::string plain = dir.File("sink.log");
  const std::string dedup = dir.File("dedup.log");
  std::ofstream(plain) << "0\n1\n1\n7\n!not a number\n99\n3";  // torn last line
  std::ofstream(dedup) << "@t 0 0 0\n@t 1 0 1\n=t 1 0\n@t 2 0 2\n";
  auto counts = CountDeliveries({plain}, 5);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->copies, (std::vector<uint32_t>{1, 2, 0, 0, 0}));
  EXPECT_EQ(counts->unexpected, 2);  // 7 and 99
  EXPECT_EQ(counts->malformed, 2);   // the '!' line and the torn one
  auto keyed = CountDeliveries({dedup}, 3);
  ASSERT_TRUE(keyed.ok());
  EXPECT_EQ(keyed->copies, (std::vector<uint32_t>{1, 1, 1}));  // '=' lines are not deliveries
  EXPECT_FALSE(CountDeliveries({dir.File("absent.log")}, 3).ok());
}

TEST(RunAnalysisTest, DeliveryFigures) {
  RunResult r;
  FillDeliveryFigures(Counts({1, 0, 3, 2, 1, 0}), r);
  EXPECT_EQ(r.lost, 2);
  EXPECT_EQ(r.duplicated, 3);  // 2 extra + 1 extra
  EXPECT_EQ(r.replayed, 2);
  EXPECT_EQ(r.max_copies, 3);
}

TEST(RunAnalysisTest, OffsetDiffFindsCommittedButUnprocessedAndTheReverse) {
  // 8 records over 2 partitions: p0 holds 0,2,4,6 at offsets 0..3; p1 holds 1,3,5,7.
  RecordLayout l{8, 2};
  RunResult r;
  // p0 committed to 3 but seq 2 (offset 1) never arrived; p1 committed to 2
  // while seq 5 (offset 2) arrived.
  FillOffsetDiff(Counts({1, 1, 0, 1, 1, 1, 0, 0}), l, {3, 2}, r);
  EXPECT_EQ(r.committed_not_processed, 1);
  EXPECT_EQ(r.processed_not_committed, 1);
  // Unknown commits are skipped.
  FillOffsetDiff(Counts({0, 0, 0, 0, 0, 0, 0, 0}), l, {-1, -1}, r);
  EXPECT_EQ(r.committed_not_processed, 0);
}

TEST(RunAnalysisTest, UnreceivedInRangesCountsOnlyWhatNobodySaw) {
  RecordLayout l{8, 2};
  // Deleted: p0 offsets [1, 3) = seqs 2, 4 (4 was received); p1 [0, 1) = seq 1.
  EXPECT_EQ(UnreceivedInRanges(Counts({1, 0, 0, 0, 1, 0, 0, 0}), l, {1, 0}, {3, 1}), 2);
  // A range that retention did not reach (start below committed) is empty.
  EXPECT_EQ(UnreceivedInRanges(Counts({0, 0, 0, 0, 0, 0, 0, 0}), l, {3, 3}, {1, 1}), 0);
}

std::vector<Sample> Steady(double from, double to, int64_t& count, int64_t per_tick,
                           int64_t log_end_per_tick, int64_t& log_end, int64_t committed_lag) {
  std::vector<Sample> out;
  for (double t = from; t < to - 1e-9; t += 0.2) {
    count += per_tick;
    log_end += log_end_per_tick;
    out.push_back({t, count, log_end - committed_lag, log_end});
  }
  return out;
}

TEST(RunAnalysisTest, TimelineFindsTheStallAndTheRecovery) {
  RunResult r;
  int64_t count = 0, log_end = 0;
  auto add = [&](std::vector<Sample> v) { r.samples.insert(r.samples.end(), v.begin(), v.end()); };
  add(Steady(0, 4, count, 200, 200, log_end, 100));  // 1000 records/s
  // Fault at 4 s: the sink stops for 3 s while production goes on and
  // commits stand still.
  const int64_t committed = log_end - 100;
  for (double t = 4; t < 7 - 1e-9; t += 0.2) {
    log_end += 200;
    r.samples.push_back({t, count, committed, log_end});
  }
  add(Steady(7, 10, count, 400, 0, log_end, 0));
  r.fault_start_s = 4.0;
  r.fault_end_s = 4.0;
  FillTimeline(r);
  ASSERT_TRUE(r.recovery_s.has_value());
  EXPECT_NEAR(*r.recovery_s, 3.0, 0.25);
  EXPECT_NEAR(r.throughput_before, 1000, 60);
  EXPECT_LT(r.throughput_during, 200);  // only the first recovered sample
  EXPECT_NEAR(r.throughput_after, 2000, 150);
  EXPECT_GE(r.commit_blocked_s, 2.8);
}

TEST(RunAnalysisTest, TimelineWithoutAStallRecoversAtOnce) {
  RunResult r;
  int64_t count = 0, log_end = 0;
  r.samples = Steady(0, 10, count, 200, 200, log_end, 0);
  r.fault_start_s = 5.0;
  r.fault_end_s = 6.0;
  FillTimeline(r);
  ASSERT_TRUE(r.recovery_s.has_value());
  EXPECT_EQ(*r.recovery_s, 0);
  EXPECT_EQ(r.commit_blocked_s, 0);
}

TEST(RunAnalysisTest, RecoverCountsFromTheHeal) {
  // The sink stands still from the fault at 4 s until 7 s; healed at 6 s.
  RunResult r;
  int64_t count = 0, log_end = 0;
  r.samples = Steady(0, 4, count, 200, 200, log_end, 0);
  for (double t = 4; t < 7 - 1e-9; t += 0.2) {
    log_end += 200;
    r.samples.push_back({t, count, log_end - 600, log_end});
  }
  std::vector<Sample> after = Steady(7, 10, count, 400, 0, log_end, 0);
  r.samples.insert(r.samples.end(), after.begin(), after.end());
  r.fault_start_s = 4.0;
  r.fault_end_s = 6.0;
  FillTimeline(r);
  ASSERT_TRUE(r.recover_s.has_value());
  EXPECT_NEAR(*r.recover_s, 1.0, 0.25);

  // A sink that never moves again after the fault, whose spout commits
  // everything produced by 8 s (what it lacks is given up): recovered then.
  RunResult gave_up;
  count = log_end = 0;
  gave_up.samples = Steady(0, 4, count, 200, 200, log_end, 0);
  for (double t = 4; t < 10 - 1e-9; t += 0.2) {
    gave_up.samples.push_back({t, count, t >= 8 ? log_end : log_end - 100, log_end});
  }
  gave_up.fault_start_s = 4.0;
  gave_up.fault_end_s = 6.0;
  FillTimeline(gave_up);
  ASSERT_TRUE(gave_up.recover_s.has_value());
  EXPECT_NEAR(*gave_up.recover_s, 2.0, 0.25);

  // ... but not before its commits stopped moving.
  RunResult late = gave_up;
  for (Sample& x : late.samples) {
    if (x.t_s >= 4) x.committed = x.log_end - 100 + static_cast<int64_t>(x.t_s * 10);
  }
  FillTimeline(late);
  ASSERT_TRUE(late.recover_s.has_value());
  EXPECT_NEAR(*late.recover_s, 3.8, 0.25);

  // Nothing outstanding any more when it healed: recovered at once.
  RunResult done_before = gave_up;
  done_before.fault_end_s = 9.0;
  FillTimeline(done_before);
  ASSERT_TRUE(done_before.recover_s.has_value());
  EXPECT_EQ(*done_before.recover_s, 0);
}

// 10 s of samples while 2000 records are produced in the first 2 s; `sample`
// shapes each from (t, produced so far); then the timeline is filled in.
RunResult ShortProduction(const std::function<Sample(double, int64_t)>& sample, double fault_start,
                          double fault_end) {
  RunResult r;
  for (double t = 0; t < 10 - 1e-9; t += 0.2) {
    r.samples.push_back(sample(t, std::min<int64_t>(static_cast<int64_t>(t * 1000), 2000)));
  }
  r.fault_start_s = fault_start;
  r.fault_end_s = fault_end;
  FillTimeline(r);
  return r;
}

TEST(RunAnalysisTest, ASinkThatHasEverythingIsNotStalledWhileCommitsAreBlocked) {
  // The sink has every record by 2 s; a ZooKeeper fault from 3 s to 8 s
  // blocks commits. The sink never waited for data, so it did not stall,
  // whatever the commits do.
  RunResult r = ShortProduction(
      [](double t, int64_t produced) {
        Sample x{t, produced, t < 3 || t >= 8 ? produced : 1500, produced};
        x.sink_distinct = produced;
        return x;
      },
      3.0, 8.0);
  ASSERT_TRUE(r.recovery_s.has_value());
  EXPECT_EQ(*r.recovery_s, 0);
  EXPECT_GE(r.commit_blocked_s, 4.8);
}

TEST(RunAnalysisTest, ASinkMissingRecordsThatWereCommittedAwayIsNotStalled) {
  // At-most-once lost 100 records for good: the sink stops short of the log
  // end, but the commits reached it, so nothing is outstanding.
  RunResult r = ShortProduction(
      [](double t, int64_t produced) {
        Sample x{t, std::max<int64_t>(produced - 100, 0), produced, produced};
        x.sink_distinct = x.sink_received;
        return x;
      },
      1.0, 1.5);
  ASSERT_TRUE(r.recovery_s.has_value());
  EXPECT_EQ(*r.recovery_s, 0);
}

TEST(RunAnalysisTest, ExpectationsFollowTheGuarantee) {
  RunResult r;
  r.guarantee = "at-least-once";
  EXPECT_TRUE(CheckExpectations(r).empty());
  r.lost = 2;
  r.committed_not_processed = 2;
  EXPECT_EQ(CheckExpectations(r).size(), 2u);
  r.expected_loss = 2;  // retention: exactly the deleted range
  EXPECT_TRUE(CheckExpectations(r).empty());
  r.dedup_sink = DedupSinkResult{2, 1, 40, 2};
  EXPECT_EQ(CheckExpectations(r).size(), 1u);  // the dedup sink applied a duplicate

  RunResult amo;
  amo.guarantee = "at-most-once";
  amo.lost = 50;  // allowed
  EXPECT_TRUE(CheckExpectations(amo).empty());
  amo.duplicated = 1;
  EXPECT_EQ(CheckExpectations(amo).size(), 1u);
  amo.duplicated = 0;
  amo.offset_regressions = 1;
  EXPECT_EQ(CheckExpectations(amo).size(), 1u);

  RunResult none;
  none.guarantee = "no-guarantee";
  none.lost = 3;
  none.duplicated = 3;
  EXPECT_TRUE(CheckExpectations(none).empty());
}

// --- Recovery: from the fault to the sink's first new record -------------

TEST(RunAnalysisTest, ASinkStandingStillWhileItsSpoutCommitsAheadHasStalled) {
  // At-most-once commits each offset before emitting the record, so its
  // commits keep up with the log end while the sink receives nothing for 5 s
  // after the fault: the chart shows the sink at 0, so recovery is not 0.
  RunResult r;
  int64_t sink = 0, log_end = 0;
  for (int i = 0; i < 70; ++i) {
    const double t = i * 0.2;
    if (i < 50) log_end += 200;                                   // 1000 records/s for 10 s
    if (i < 20 || i >= 45) sink = std::min(log_end, sink + 400);  // still from 4 s to 9 s
    Sample x{t, sink, log_end, log_end};
    x.sink_distinct = sink;
    r.samples.push_back(x);
  }
  r.fault_start_s = 4.0;
  r.fault_end_s = 4.05;  // a kill: healed at once
  FillTimeline(r);
  ASSERT_TRUE(r.recovery_s.has_value());
  EXPECT_NEAR(*r.recovery_s, 5.0, 0.25);
}

TEST(RunAnalysisTest, ASinkThatNeverFlowedRecoversAtItsFirstRecord) {
  // 100 records produced at once; the fault fires at 0.025 s, before the
  // sink got anything, and the sink's first record arrives at 5 s.
  RunResult r;
  for (int i = 0; i < 40; ++i) {
    const double t = i * 0.2;
    const int64_t sink = i >= 25 ? 100 : 0;  // from 5 s
    Sample x{t, sink, sink, 100};
    x.sink_distinct = sink;
    r.samples.push_back(x);
  }
  r.records = 100;
  r.fault_start_s = 0.025;
  r.fault_end_s = 0.03;
  FillTimeline(r);
  ASSERT_TRUE(r.recovery_s.has_value());
  EXPECT_NEAR(*r.recovery_s, 5.0, 0.25);
  EXPECT_EQ(r.throughput_before, 0);
}

// --- Not tested ------------------------------------------------------------

// A run of `records` at 1000/s sampled every 200 ms for 6 s, whose sink
// receives everything produced from `flow_from_s` on; fault at `fault_s`.
RunResult Flowing(int64_t records, double flow_from_s, double fault_s) {
  RunResult r;
  r.guarantee = "at-least-once";
  r.fault = "kill-worker";
  r.records = records;
  for (int i = 0; i < 30; ++i) {
    const double t = i * 0.2;
    const int64_t produced = std::min<int64_t>(records, i * 200);
    const int64_t sink = t >= flow_from_s - 1e-9 ? produced : 0;
    Sample x{t, sink, sink, produced};
    x.sink_distinct = sink;
    r.samples.push_back(x);
  }
  r.fault_start_s = fault_s;
  r.fault_end_s = fault_s;
  FillTimeline(r);
  MarkNotTested(r);
  return r;
}

TEST(NotTestedTest, AFaultBeforeTheFirstRecordReachedTheSinkTestsNothing) {
  RunResult r = Flowing(2000, 1.0, 0.6);
  EXPECT_TRUE(r.not_tested);
  EXPECT_THAT(r.not_tested_reason, ::testing::HasSubstr("the fault fired at 0.6 s, before any "
                                                        "record had reached the sink"));
  // The same run with its fault after the records flowed is a test.
  RunResult flowed = Flowing(2000, 0.4, 1.5);
  EXPECT_FALSE(flowed.not_tested) << flowed.not_tested_reason;
  EXPECT_TRUE(flowed.not_tested_reason.empty());
}

TEST(NotTestedTest, AFaultBeforeAnyThroughputTestsNothing) {
  // The sink holds a record at the very first sample, but the fault fires
  // before one sample interval passed: there is no throughput before it.
  RunResult r;
  r.records = 100;
  r.samples = {{0.0, 5, 0, 100}, {0.2, 5, 0, 100}, {0.4, 100, 100, 100}};
  r.fault_start_s = 0.1;
  r.fault_end_s = 0.1;
  FillTimeline(r);
  EXPECT_EQ(r.throughput_before, 0);
  EXPECT_THAT(NotTestedReason(r), ::testing::HasSubstr("throughput was still 0"));
}

TEST(NotTestedTest, NothingMeasuredTestsNothing) {
  RunResult none;
  none.records = 100;
  EXPECT_THAT(NotTestedReason(none), ::testing::HasSubstr("no samples"));

  RunResult unproduced;
  unproduced.records = 100;
  unproduced.samples = {{0.0, 0, 0, 0}, {0.2, 0, 0, 0}};
  EXPECT_THAT(NotTestedReason(unproduced), ::testing::HasSubstr("no records were produced"));
  unproduced.records = 0;
  EXPECT_THAT(NotTestedReason(unproduced), ::testing::HasSubstr("no records were produced"));

  RunResult undelivered;
  undelivered.records = 100;
  undelivered.samples = {{0.0, 0, 0, 50}, {0.2, 0, 100, 100}};
  EXPECT_THAT(NotTestedReason(undelivered), ::testing::HasSubstr("no record reached the sink"));

  // Without a fault, records that flowed are a test.
  RunResult control;
  control.records = 100;
  control.samples = {{0.0, 0, 0, 50}, {0.2, 100, 100, 100}};
  EXPECT_EQ(NotTestedReason(control), "");
}

// --- Explanations ------------------------------------------------------------

// 5000 records in 5 s; commits stand at 1000 from the fault (1 s) to 4 s.
RunResult ExpiredSession(const std::string& guarantee) {
  RunResult r;
  r.scenario = "zk-session-expiry";
  r.guarantee = guarantee;
  r.fault = "zk-session-expiry";
  r.records = 5000;
  for (int i = 0; i < 40; ++i) {
    const double t = i * 0.2;
    const int64_t produced = std::min<int64_t>(5000, i * 200);
    const int64_t committed = i < 5 || i >= 20 ? produced : 1000;
    // ZooKeeper is unreadable for a while in the middle.
    r.samples.push_back({t, produced, i > 10 && i < 15 ? -1 : committed, produced});
  }
  r.fault_start_s = 1.0;
  r.fault_end_s = 4.0;
  return r;
}

TEST(ExplainRunTest, ReplayDuplicatesNameTheMechanismAndTheBound) {
  RunResult r = ExpiredSession("at-least-once");
  // From the fault on, the largest log end minus the commit one sample
  // earlier: 4000 at 4 s, while the commit seen at 3.8 s was still 1000.
  EXPECT_EQ(ReplayBound(r), 3000);
  r.duplicated = 2500;
  r.replayed = 2500;
  r.max_copies = 2;
  const Explanation e = ExplainRun(r);
  EXPECT_THAT(e.sentence,
              ::testing::AllOf(::testing::HasSubstr("session expired"),
                               ::testing::HasSubstr("re-read from its last committed offset"),
                               ::testing::HasSubstr("duplicates are bounded by the records read "
                                                    "since that commit (3000)")));
  EXPECT_EQ(e.guide_sections, std::vector<std::string>{"replay-from-the-last-commit"});

  // More duplicates than one replay can make: said so, not hidden.
  r.duplicated = 4000;
  r.max_copies = 3;
  EXPECT_THAT(ExplainRun(r).sentence,
              ::testing::AllOf(::testing::HasSubstr("4000 duplicates exceed"),
                               ::testing::HasSubstr("(3000)"),
                               ::testing::HasSubstr("replayed more than once")));
}

TEST(ExplainRunTest, TheBoundFollowsTheMeasuredFieldsNotTheScenario) {
  RunResult r = ExpiredSession("no-guarantee");
  r.fault = "kill-worker";
  r.duplicated = 10;
  // The same samples bound a kill's replay the same way, but the sentence
  // names the kill.
  EXPECT_THAT(ExplainRun(r).sentence, ::testing::AllOf(::testing::HasSubstr("worker was killed"),
                                                       ::testing::HasSubstr("(3000)")));
  r.samples.resize(10);  // the run ended at 1.8 s: a smaller bound
  EXPECT_THAT(ExplainRun(r).sentence, ::testing::HasSubstr("since that commit (800)"));
}

TEST(ExplainRunTest, LossesNameTheMechanismAndTheBound) {
  RunResult amo = ExpiredSession("at-most-once");
  amo.fault = "kill-supervisor";
  amo.lost = 700;
  amo.committed_not_processed = 700;
  Explanation e = ExplainRun(amo);
  EXPECT_THAT(e.sentence,
              ::testing::AllOf(::testing::HasSubstr("commits each offset before it emits"),
                               ::testing::HasSubstr("700 records in flight when the supervisor"),
                               ::testing::HasSubstr("committed but never received (700)")));
  EXPECT_EQ(e.guide_sections, std::vector<std::string>{"committed-before-processed"});

  RunResult failures = ExpiredSession("no-guarantee");
  failures.fault = "bolt-failures";
  failures.lost = 120;
  failures.committed_not_processed = 120;
  EXPECT_THAT(ExplainRun(failures).sentence,
              ::testing::AllOf(::testing::HasSubstr("does not replay a failure"),
                               ::testing::HasSubstr("(120)")));

  RunResult retention = ExpiredSession("at-least-once");
  retention.fault = "retention";
  retention.lost = 1234;
  retention.expected_loss = 1234;
  retention.committed_not_processed = 1234;
  e = ExplainRun(retention);
  EXPECT_THAT(e.sentence, ::testing::AllOf(::testing::HasSubstr("Retention deleted 1234 records"),
                                           ::testing::HasSubstr("deleted range (1234)")));
  EXPECT_EQ(e.guide_sections, std::vector<std::string>{"retention-deleted-the-records"});

  // A broken promise is named as one.
  RunResult broken = ExpiredSession("at-least-once");
  broken.lost = 3;
  EXPECT_THAT(ExplainRun(broken).sentence, ::testing::HasSubstr("must never do"));

  RunResult clean = ExpiredSession("at-least-once");
  EXPECT_EQ(ExplainRun(clean).sentence, "Nothing was lost or duplicated.");
}

TEST(ExplainRunTest, ANotTestedRunSaysSo) {
  RunResult r = Flowing(2000, 1.0, 0.6);
  r.duplicated = 0;
  const Explanation e = ExplainRun(r);
  EXPECT_THAT(e.sentence, ::testing::AllOf(::testing::StartsWith("Not tested: the fault fired"),
                                           ::testing::HasSubstr("nothing about at-least-once")));
  EXPECT_EQ(e.guide_sections, std::vector<std::string>{"not-tested"});
}

}  // namespace
}  // namespace tempest::study
