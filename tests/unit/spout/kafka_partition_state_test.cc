// Pure offset rules of one partition: commit points, never-backwards,
// uncommitted limit, retries / dead letters, out-of-range policy math.
#include "spout/kafka/kafka_partition_state.h"

#include <gtest/gtest.h>

#include "spout/kafka/kafka_metadata_worker.h"
#include "tests/support/fake_clock.h"

namespace tempest::spout {
namespace {

using Fail = KafkaPartitionState::FailAction;

KafkaPartitionState::Options Opts(ProcessingGuarantee g, int64_t limit = 1000, int retry_limit = -1,
                                  bool dead_letter = false) {
  KafkaPartitionState::Options o;
  o.guarantee = g;
  o.max_uncommitted = limit;
  o.retry.retry_limit = retry_limit;
  o.retry.retry_initial_delay_ms = 10;
  o.retry.retry_delay_multiplier = 2.0;
  o.retry.retry_delay_max_ms = 1000;
  o.has_dead_letter = dead_letter;
  return o;
}

TEST(KafkaPartitionStateTest, AtLeastOnceCommitsFirstIncompleteOffset) {
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtLeastOnce), 10, 10);
  EXPECT_FALSE(s.CommitCandidate().has_value());
  for (int64_t o = 10; o < 15; ++o) {
    s.OnFetched(o);
    s.OnEmitted(o);
  }
  EXPECT_EQ(s.CommitPoint(), 10);
  EXPECT_TRUE(s.OnAck(11));
  EXPECT_TRUE(s.OnAck(12));
  EXPECT_EQ(s.CommitPoint(), 10);  // 10 still in flight holds the commit
  EXPECT_TRUE(s.OnAck(10));
  EXPECT_EQ(s.CommitPoint(), 13);
  EXPECT_TRUE(s.OnAck(13));
  EXPECT_TRUE(s.OnAck(14));
  EXPECT_EQ(s.CommitPoint(), 15);  // nothing pending: the next offset to emit
  EXPECT_EQ(s.CommitCandidate(), 15);
  EXPECT_FALSE(s.OnAck(14));  // duplicate ack
}

TEST(KafkaPartitionStateTest, FetchedButNotEmittedIsNotCommittedAtLeastOnce) {
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtLeastOnce), 0, 0);
  for (int64_t o = 0; o < 5; ++o) s.OnFetched(o);
  s.OnEmitted(0);
  s.OnAck(0);
  EXPECT_EQ(s.CommitPoint(), 1);
}

TEST(KafkaPartitionStateTest, NoGuaranteeAndAtMostOnceCommitTheFetchedPosition) {
  for (auto g : {ProcessingGuarantee::kNoGuarantee, ProcessingGuarantee::kAtMostOnce}) {
    KafkaPartitionState s(Opts(g), 0, 0);
    for (int64_t o = 0; o < 5; ++o) s.OnFetched(o);
    EXPECT_EQ(s.CommitPoint(), 5);
    EXPECT_TRUE(s.pending().empty());
  }
}

TEST(KafkaPartitionStateTest, AtMostOnceEmitsOnlyWhatACommitCovers) {
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtMostOnce), 0, 0);
  s.OnFetched(0);
  s.OnFetched(1);
  EXPECT_FALSE(s.MayEmit(0));
  s.OnCommitted(1);
  EXPECT_TRUE(s.MayEmit(0));
  EXPECT_FALSE(s.MayEmit(1));
  s.OnCommitted(2);
  EXPECT_TRUE(s.MayEmit(1));
  KafkaPartitionState alo(Opts(ProcessingGuarantee::kAtLeastOnce), 0, 0);
  EXPECT_TRUE(alo.MayEmit(0));
}

TEST(KafkaPartitionStateTest, CommittedOffsetNeverMovesBackwards) {
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtLeastOnce), 100, 40);
  s.OnEmitted(40);
  s.OnAck(40);
  // The point (41) is below what ZooKeeper holds (100): nothing to write.
  EXPECT_FALSE(s.CommitCandidate().has_value());
  s.OnCommitted(120);
  s.OnCommitted(110);  // a late, lower confirmation is ignored
  EXPECT_EQ(s.committed(), 120);
}

TEST(KafkaPartitionStateTest, UncommittedLimitPausesAndCommitsResume) {
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtLeastOnce, 3), 0, 0);
  s.OnFetched(0);
  s.OnFetched(1);
  EXPECT_FALSE(s.OverUncommittedLimit());
  s.OnFetched(2);
  EXPECT_TRUE(s.OverUncommittedLimit());
  for (int64_t o = 0; o < 3; ++o) {
    s.OnEmitted(o);
    s.OnAck(o);
  }
  EXPECT_TRUE(s.OverUncommittedLimit());  // acked, but not yet committed
  s.OnCommitted(*s.CommitCandidate());
  EXPECT_FALSE(s.OverUncommittedLimit());
  EXPECT_EQ(s.Uncommitted(), 0);
}

TEST(KafkaPartitionStateTest, FailedTupleRetriesWithBackoffThenDeadLetters) {
  testing::FakeClock clock;
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtLeastOnce, 1000, 3, true), 0, 0);
  s.OnEmitted(0);
  s.OnEmitted(1);
  EXPECT_EQ(s.OnFail(0, clock.Now()), Fail::kRetry);
  EXPECT_FALSE(s.NextRetry(clock.Now()).has_value());  // 10 ms backoff
  clock.Advance(std::chrono::milliseconds(10));
  EXPECT_EQ(s.NextRetry(clock.Now()), 0);
  s.Retrying(0);
  EXPECT_EQ(s.OnFail(0, clock.Now()), Fail::kRetry);
  clock.Advance(std::chrono::milliseconds(19));
  EXPECT_FALSE(s.NextRetry(clock.Now()).has_value());  // 20 ms after the 2nd failure
  clock.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(s.NextRetry(clock.Now()), 0);
  s.Retrying(0);
  EXPECT_EQ(s.OnFail(0, clock.Now()), Fail::kDeadLetter);  // 3rd failure = limit
  EXPECT_FALSE(s.NextRetry(clock.Now() + std::chrono::hours(1)).has_value());
  EXPECT_EQ(s.CommitPoint(), 0);  // not complete until the dead letter is delivered
  s.OnAck(1);
  EXPECT_TRUE(s.OnDeadLettered(0));
  EXPECT_EQ(s.CommitPoint(), 2);
}

TEST(KafkaPartitionStateTest, WithoutDeadLetterTopicPastLimitStillRetries) {
  testing::FakeClock clock;
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtLeastOnce, 1000, 1, false), 0, 0);
  s.OnEmitted(0);
  EXPECT_EQ(s.OnFail(0, clock.Now()), Fail::kRetry);
  EXPECT_EQ(s.OnFail(0, clock.Now()), Fail::kRetry);
  EXPECT_EQ(s.CommitPoint(), 0);  // never acked past
}

TEST(KafkaPartitionStateTest, LateFailOfUnknownOffsetIsIgnored) {
  testing::FakeClock clock;
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtLeastOnce), 0, 0);
  EXPECT_EQ(s.OnFail(5, clock.Now()), Fail::kIgnore);
}

TEST(KafkaPartitionStateTest, OutOfRangeEarliestSkipsToLogStartAndCountsTheGap) {
  testing::FakeClock clock;
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtLeastOnce), 5, 5);
  s.OnEmitted(5);
  s.OnEmitted(6);
  s.OnFail(6, clock.Now());
  auto r = s.OnOutOfRange(7, 100, 150, OutOfRangePolicy::kEarliest);
  EXPECT_FALSE(r.fail);
  EXPECT_EQ(r.position, 100);
  EXPECT_EQ(r.skipped, 93);         // [7, 100) is gone
  EXPECT_EQ(r.dropped_pending, 2);  // 5 and 6 were in flight
  EXPECT_EQ(s.fetched_to(), 100);
  EXPECT_EQ(s.CommitPoint(), 100);
  EXPECT_FALSE(s.NextRetry(clock.Now() + std::chrono::hours(1)).has_value());
}

TEST(KafkaPartitionStateTest, OutOfRangeLatestAndFail) {
  KafkaPartitionState latest(Opts(ProcessingGuarantee::kAtLeastOnce), 5, 5);
  auto r = latest.OnOutOfRange(5, 100, 150, OutOfRangePolicy::kLatest);
  EXPECT_EQ(r.position, 150);
  EXPECT_EQ(r.skipped, 145);
  KafkaPartitionState fail(Opts(ProcessingGuarantee::kAtLeastOnce), 5, 5);
  auto f = fail.OnOutOfRange(5, 100, 150, OutOfRangePolicy::kFail);
  EXPECT_TRUE(f.fail);
  EXPECT_EQ(fail.fetched_to(), 5);  // nothing moved
}

TEST(KafkaPartitionStateTest, OutOfRangeBeyondLogEndLosesNothingButCannotCommitBackwards) {
  KafkaPartitionState s(Opts(ProcessingGuarantee::kAtLeastOnce), 500, 500);
  auto r = s.OnOutOfRange(500, 0, 20, OutOfRangePolicy::kEarliest);
  EXPECT_EQ(r.position, 0);
  EXPECT_EQ(r.skipped, 0);
  EXPECT_FALSE(s.CommitCandidate().has_value());  // only `tempest offsets set` goes back
}

TEST(DecideStartTest, FollowsStormKafkaRules) {
  StormKafkaOffset stored{"topo-1", "t", 40, 0, "", 0, "x"};
  // Nothing stored: startOffsetTime's offset.
  auto d = DecideStart(std::nullopt, "topo-1", false, INT64_MAX, 7);
  EXPECT_EQ(d.start, 7);
  EXPECT_EQ(d.committed, 7);
  // Stored: resume there (same or other topology without ignoreZkOffsets).
  d = DecideStart(stored, "topo-2", false, INT64_MAX, 7);
  EXPECT_EQ(d.start, 40);
  EXPECT_EQ(d.committed, 40);
  // ignoreZkOffsets only matters for another topology's offsets.
  EXPECT_EQ(DecideStart(stored, "topo-1", true, INT64_MAX, 7).start, 40);
  d = DecideStart(stored, "topo-2", true, INT64_MAX, 7);
  EXPECT_EQ(d.start, 7);
  EXPECT_EQ(d.committed, 40);  // the never-backwards floor stays
  // maxOffsetBehind: too far behind the startOffsetTime offset -> jump.
  EXPECT_EQ(DecideStart(stored, "topo-1", false, 100, 200).start, 200);
  EXPECT_EQ(DecideStart(stored, "topo-1", false, 200, 200).start, 40);
  // A stored 0 is a real position (storm-kafka would reset it).
  stored.offset = 0;
  EXPECT_EQ(DecideStart(stored, "topo-1", false, INT64_MAX, 7).start, 0);
}

}  // namespace
}  // namespace tempest::spout
