#include "study/run_analysis.h"

#include <algorithm>
#include <fstream>
#include <functional>

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

}  // namespace
}  // namespace tempest::study
