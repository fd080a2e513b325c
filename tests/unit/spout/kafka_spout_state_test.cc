// KafkaSpout's state machine against scripted fakes of its offset store,
// partition source and dead-letter sink, on a fake clock: ownership, commits,
// assignment changes, out-of-range, retries and dead letters. No servers.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spout/kafka/kafka_message_id.h"
#include "spout/kafka/kafka_spout.h"
#include "tests/support/component_harness.h"
#include "tests/support/fake_clock.h"
#include "tests/support/log_capture.h"
#include "tests/unit/spout/kafka_spout_fakes.h"

namespace tempest::spout {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using testing::FakeDeadLetterSink;
using testing::FakeOffsetStore;
using testing::FakePartitionSource;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using Kind = OffsetStoreUpdate::Kind;

const TopicPartition kP0{"events", 0};
const TopicPartition kP1{"events", 1};

KafkaSpoutConfig TestConfig() {
  KafkaSpoutConfig c;
  c.bootstrap_servers = "fake:9092";
  c.topics = {"events"};
  c.zk_root = "/kafkaspout";
  c.id = "reader";
  c.zk_servers = {"zk"};
  c.retry = RetryOptions{100, 2.0, 1000, 3};
  return c;
}

class KafkaSpoutStateTest : public ::testing::Test {
 protected:
  void Open(KafkaSpoutConfig config = TestConfig()) {
    KafkaSpout::Hooks hooks;
    hooks.clock = &clock_;
    hooks.metrics = &metrics_;
    hooks.deactivate_commit_wait = deactivate_commit_wait_;
    hooks.backends.offset_store = [this](const KafkaSpoutSite&) {
      auto s = std::make_unique<FakeOffsetStore>();
      store_ = s.get();
      return absl::StatusOr<std::unique_ptr<OffsetStore>>(std::move(s));
    };
    hooks.backends.partition_source = [this](const KafkaSpoutSite&) {
      auto s = std::make_unique<FakePartitionSource>();
      source_ = s.get();
      return std::unique_ptr<PartitionSource>(std::move(s));
    };
    hooks.backends.dead_letter = [this](const std::string&, const KafkaSpoutConfig&,
                                        DeadLetterProducer::OutcomeCallback on_outcome) {
      auto s = std::make_unique<FakeDeadLetterSink>(std::move(on_outcome));
      dead_letter_ = s.get();
      return absl::StatusOr<std::unique_ptr<DeadLetterSink>>(std::move(s));
    };
    spout_ = std::make_unique<KafkaSpout>(std::move(config), std::move(hooks));
    ASSERT_TRUE(spout_->Open({}, context_, collector_).ok());
  }

  // Discovers `partitions`, acquires and resolves each at `start`, each with
  // a log of `records` values.
  void OwnAll(const std::vector<TopicPartition>& partitions, int records, int64_t start = 0) {
    for (const TopicPartition& tp : partitions) {
      for (int i = 0; i < records; ++i) source_->log[tp].push_back(absl::StrCat("v", i));
    }
    source_->Discovered(partitions);
    spout_->NextTuple();
    uint64_t acquisition = 1;
    for (const TopicPartition& tp : partitions) store_->Acquired(tp, acquisition++);
    spout_->NextTuple();
    for (const FakePartitionSource::Request& r : source_->resolves) {
      source_->Resolved(r.tp, r.tag, start, start);
    }
    source_->resolves.clear();
  }

  std::vector<int64_t> EmittedOffsets() const {
    std::vector<int64_t> out;
    for (const auto& e : collector_.emitted) out.push_back(e.values[2].AsInt());
    return out;
  }
  const api::MessageId& IdOf(size_t i) const { return collector_.emitted.at(i).message_id; }
  KafkaSpout::PartitionStats StatsOf(const TopicPartition& tp) const {
    return spout_->Stats().at(tp);
  }
  // Steps the clock to the next commit interval (2 s by default).
  void NextCommitRound() {
    clock_.Advance(milliseconds(2000));
    spout_->NextTuple();
  }

  tempest::testing::FakeClock clock_;
  std::chrono::milliseconds deactivate_commit_wait_{2000};
  core::MetricsRegistry metrics_;
  api::TopologyContext context_ = tempest::testing::MakeContext("kafka");
  tempest::testing::FakeSpoutCollector collector_;
  std::unique_ptr<KafkaSpout> spout_;
  FakeOffsetStore* store_ = nullptr;
  FakePartitionSource* source_ = nullptr;
  FakeDeadLetterSink* dead_letter_ = nullptr;
};

TEST_F(KafkaSpoutStateTest, OpenConnectsDiscoversAndAssignsWhatIsDiscovered) {
  Open();
  EXPECT_EQ(source_->bootstrap, "fake:9092");
  EXPECT_EQ(source_->discovers, 1);
  source_->Discovered({kP1, kP0});
  spout_->NextTuple();
  EXPECT_THAT(store_->calls, ElementsAre("assign events/0 events/1"));
  store_->Acquired(kP0, 7, 40);
  spout_->NextTuple();
  ASSERT_THAT(source_->resolves, SizeIs(1));
  EXPECT_EQ(source_->resolves[0].tag, 7u);
  EXPECT_EQ(source_->resolves[0].offset, 40);  // the stored offset goes to DecideStart
}

TEST_F(KafkaSpoutStateTest, EmitsFromTheResolvedStartAndCommitsTheAckedPrefix) {
  Open();
  OwnAll({kP0}, 8, 3);
  spout_->NextTuple();
  EXPECT_THAT(EmittedOffsets(), ElementsAre(3, 4, 5, 6, 7));
  spout_->Ack(IdOf(0));
  spout_->Ack(IdOf(1));
  spout_->Ack(IdOf(3));  // 6 acked, 5 not: the commit stops at 5
  NextCommitRound();
  ASSERT_THAT(store_->requested, SizeIs(1));
  EXPECT_EQ(store_->requested[0].state.offset, 5);
  EXPECT_EQ(store_->requested[0].acquisition, 1u);
  store_->Push(Kind::kCommitted, kP0, {}, 5);
  spout_->NextTuple();
  EXPECT_EQ(StatsOf(kP0).committed, 5);
  EXPECT_EQ(StatsOf(kP0).pending, 2);
}

TEST_F(KafkaSpoutStateTest, OwnershipLostMidFlightStopsAndIgnoresTheOldEpoch) {
  Open();
  OwnAll({kP0}, 4);
  spout_->NextTuple();
  ASSERT_THAT(EmittedOffsets(), ElementsAre(0, 1, 2, 3));
  store_->Push(Kind::kLost, kP0, absl::UnavailableError("session expired"));
  spout_->NextTuple();
  EXPECT_FALSE(StatsOf(kP0).owned);
  EXPECT_FALSE(source_->position.contains(kP0));  // fetching stopped
  // Re-acquired from the stored offset 0: everything in flight is replayed.
  store_->Acquired(kP0, 2, 0);
  spout_->NextTuple();
  source_->Resolved(kP0, 2, 0, 0);
  spout_->NextTuple();
  ASSERT_THAT(EmittedOffsets(), ElementsAre(0, 1, 2, 3, 0, 1, 2, 3));
  EXPECT_EQ(StatsOf(kP0).acquisitions, 2);
  // Acks of the first ownership change nothing.
  for (size_t i = 0; i < 4; ++i) spout_->Ack(IdOf(i));
  EXPECT_EQ(StatsOf(kP0).pending, 4);
  spout_->Ack(IdOf(4));
  EXPECT_EQ(StatsOf(kP0).pending, 3);
  NextCommitRound();
  ASSERT_THAT(store_->requested, SizeIs(1));
  EXPECT_EQ(store_->requested[0].acquisition, 2u);  // commits quote the new epoch
  EXPECT_EQ(store_->requested[0].state.offset, 1);
}

TEST_F(KafkaSpoutStateTest, AmbiguousCommitIsRequestedAgainAndNeverGoesBackwards) {
  Open();
  OwnAll({kP0}, 4);
  spout_->NextTuple();
  for (size_t i = 0; i < 4; ++i) spout_->Ack(IdOf(i));
  NextCommitRound();
  ASSERT_THAT(store_->requested, SizeIs(1));
  // The outcome of the write is unknown (e.g. a timeout after sending).
  store_->Push(Kind::kCommitFailed, {}, absl::DeadlineExceededError("outcome unknown"));
  spout_->NextTuple();
  EXPECT_TRUE(StatsOf(kP0).owned);  // keeps ownership and emitting
  NextCommitRound();
  ASSERT_THAT(store_->requested, SizeIs(2));
  EXPECT_EQ(store_->requested[1].state.offset, 4);
  // The first write had landed: the store fences the retry and we re-acquire
  // at what it holds, without re-emitting what was committed.
  store_->Push(Kind::kLost, kP0, absl::AbortedError("version conflict"));
  store_->Acquired(kP0, 2, 4);
  spout_->NextTuple();
  source_->Resolved(kP0, 2, 4, 4);
  source_->log[kP0].push_back("v4");
  spout_->NextTuple();
  EXPECT_THAT(EmittedOffsets(), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_EQ(StatsOf(kP0).committed, 4);
}

TEST_F(KafkaSpoutStateTest, CommitFailureWithoutAnAnswerIsRetriedNextRound) {
  Open();
  OwnAll({kP0}, 2);
  spout_->NextTuple();
  spout_->Ack(IdOf(0));
  NextCommitRound();
  NextCommitRound();  // still in flight: not sent twice
  EXPECT_THAT(store_->requested, SizeIs(1));
  store_->Push(Kind::kCommitFailed, {}, absl::UnavailableError("connection loss"));
  NextCommitRound();
  EXPECT_THAT(store_->requested, SizeIs(2));
}

TEST_F(KafkaSpoutStateTest, PartitionAddedThenRemovedCommitsBeforeReleasing) {
  Open();
  OwnAll({kP0}, 3);
  spout_->NextTuple();
  // Partition 1 appears.
  source_->log[kP1] = {"a", "b"};
  source_->Discovered({kP0, kP1});
  spout_->NextTuple();
  EXPECT_EQ(store_->calls.back(), "assign events/0 events/1");
  store_->Acquired(kP1, 2);
  spout_->NextTuple();
  source_->Resolved(kP1, 2, 0, 0);
  spout_->NextTuple();
  EXPECT_THAT(EmittedOffsets(), ElementsAre(0, 1, 2, 0, 1));
  // Partition 0 goes to another task: its acked prefix is committed first.
  spout_->Ack(IdOf(0));
  spout_->Ack(IdOf(1));
  store_->calls.clear();
  source_->Discovered({kP1});
  spout_->NextTuple();
  EXPECT_THAT(store_->calls, ElementsAre("commit events/0@2", "assign events/1"));
  EXPECT_FALSE(spout_->Stats().contains(kP0));
  EXPECT_FALSE(source_->position.contains(kP0));
  // A late ack of partition 0 finds nothing.
  spout_->Ack(IdOf(2));
  EXPECT_TRUE(StatsOf(kP1).owned);
}

TEST_F(KafkaSpoutStateTest, RetriesBackOffThenTheRecordGoesToTheDeadLetterSink) {
  KafkaSpoutConfig config = TestConfig();
  config.dead_letter_topic = "dlq";
  Open(config);
  OwnAll({kP0}, 2);
  spout_->NextTuple();
  ASSERT_THAT(EmittedOffsets(), ElementsAre(0, 1));
  spout_->Ack(IdOf(1));
  spout_->Fail(IdOf(0));
  clock_.Advance(milliseconds(99));
  spout_->NextTuple();
  EXPECT_THAT(EmittedOffsets(), SizeIs(2));  // not before 100 ms
  clock_.Advance(milliseconds(1));
  spout_->NextTuple();
  ASSERT_THAT(EmittedOffsets(), ElementsAre(0, 1, 0));
  EXPECT_EQ(IdOf(2), IdOf(0));
  spout_->Fail(IdOf(2));
  clock_.Advance(milliseconds(199));
  spout_->NextTuple();
  EXPECT_THAT(EmittedOffsets(), SizeIs(3));  // the second delay doubles
  clock_.Advance(milliseconds(1));
  spout_->NextTuple();
  ASSERT_THAT(EmittedOffsets(), SizeIs(4));
  EXPECT_THAT(dead_letter_->sent, IsEmpty());
  spout_->Fail(IdOf(3));  // the third failed delivery reaches retryLimit 3
  ASSERT_THAT(dead_letter_->sent, SizeIs(1));
  EXPECT_EQ(dead_letter_->sent[0].source, kP0);
  EXPECT_EQ(dead_letter_->sent[0].value, "v0");
  EXPECT_EQ(dead_letter_->sent[0].ref.offset, 0);
  EXPECT_EQ(StatsOf(kP0).pending, 1);  // until the delivery is confirmed
  dead_letter_->Outcome(0);
  EXPECT_EQ(StatsOf(kP0).pending, 0);
  EXPECT_EQ(StatsOf(kP0).dead_lettered, 1);
  NextCommitRound();
  ASSERT_THAT(store_->requested, SizeIs(1));
  EXPECT_EQ(store_->requested[0].state.offset, 2);  // commits move past it
}

TEST_F(KafkaSpoutStateTest, AFailedDeadLetterSendOrDeliveryIsSentAgain) {
  KafkaSpoutConfig config = TestConfig();
  config.dead_letter_topic = "dlq";
  config.retry.retry_limit = 1;
  Open(config);
  OwnAll({kP0}, 1);
  spout_->NextTuple();
  dead_letter_->refuse_sends = 1;
  spout_->Fail(IdOf(0));
  EXPECT_THAT(dead_letter_->sent, IsEmpty());
  spout_->NextTuple();
  ASSERT_THAT(dead_letter_->sent, SizeIs(1));
  dead_letter_->Outcome(0, "broker down");
  spout_->NextTuple();
  ASSERT_THAT(dead_letter_->sent, SizeIs(2));
  dead_letter_->Outcome(1);
  EXPECT_EQ(StatsOf(kP0).dead_lettered, 1);
}

TEST_F(KafkaSpoutStateTest, RetryLimitWithoutDeadLetterTopicIsReportedOnceAndKeepsRetrying) {
  KafkaSpoutConfig config = TestConfig();
  config.retry.retry_limit = 2;
  Open(config);
  OwnAll({kP0}, 1);
  spout_->NextTuple();
  spout_->Fail(IdOf(0));
  clock_.Advance(milliseconds(100));
  spout_->NextTuple();
  spout_->Fail(IdOf(1));
  ASSERT_THAT(collector_.errors, SizeIs(1));
  EXPECT_THAT(collector_.errors[0], ::testing::HasSubstr("retryLimit"));
  clock_.Advance(milliseconds(1000));  // retryDelayMaxMs
  spout_->NextTuple();
  ASSERT_THAT(EmittedOffsets(), ElementsAre(0, 0, 0));
  spout_->Fail(IdOf(2));
  EXPECT_THAT(collector_.errors, SizeIs(1));
  NextCommitRound();
  EXPECT_THAT(store_->requested, IsEmpty());  // the commit stays at the stalled offset
}

TEST_F(KafkaSpoutStateTest, UnreadableStoredOffsetIsReportedAtMostEvery30Seconds) {
  Open();
  source_->Discovered({kP0});
  spout_->NextTuple();
  store_->Push(Kind::kReadFailed, kP0, absl::DataLossError("malformed offset node"));
  spout_->NextTuple();
  store_->Push(Kind::kReadFailed, kP0, absl::DataLossError("malformed offset node"));
  clock_.Advance(milliseconds(29'000));
  spout_->NextTuple();
  EXPECT_THAT(collector_.errors, SizeIs(1));
  store_->Push(Kind::kReadFailed, kP0, absl::DataLossError("malformed offset node"));
  clock_.Advance(milliseconds(1'000));
  spout_->NextTuple();
  EXPECT_THAT(collector_.errors, SizeIs(2));
  EXPECT_THAT(source_->resolves, IsEmpty());  // never guesses a position
}

TEST_F(KafkaSpoutStateTest, FetchErrorsAndCommitFailuresAreLoggedAtMostEvery10SecondsEach) {
  Open();
  OwnAll({kP0}, 2);
  spout_->NextTuple();
  tempest::testing::LogCapture log;
  const std::string fetch = "fetch error on events/0";
  const std::string commit = "offset commit failed";
  // A broker that refuses every fetch, polled every 100 ms for 25 s: one line
  // at once, then one per 10 s saying how many were held back.
  for (int i = 0; i < 250; ++i) {
    source_->events.push_back({kafka::PartitionEvent::Kind::kError, kP0, 0, "broker down"});
    spout_->NextTuple();
    clock_.Advance(milliseconds(100));
  }
  EXPECT_EQ(log.Count(fetch), 3);
  EXPECT_EQ(log.Count("broker down (99 more fetch errors since the last line)"), 2);
  // Commit failures have their own throttle: fetch errors just logged do
  // not hide the first one.
  store_->Push(Kind::kCommitFailed, {}, absl::UnavailableError("connection loss"));
  spout_->NextTuple();
  EXPECT_EQ(log.Count(commit), 1);
  store_->Push(Kind::kCommitFailed, {}, absl::UnavailableError("connection loss"));
  clock_.Advance(milliseconds(9'000));
  spout_->NextTuple();
  EXPECT_EQ(log.Count(commit), 1);
  store_->Push(Kind::kCommitFailed, {}, absl::UnavailableError("connection loss"));
  clock_.Advance(milliseconds(1'000));
  spout_->NextTuple();
  EXPECT_EQ(log.Count(commit), 2);
  EXPECT_EQ(log.Count(fetch), 3);  // and commit failures do not count as fetch errors
}

TEST_F(KafkaSpoutStateTest, OutOfRangeRepositionsAtTheLogStartAndCountsTheLoss) {
  Open();
  OwnAll({kP0}, 5, 5);  // stored offset 5 = the log end at acquisition, so it is in range
  spout_->NextTuple();
  source_->events.push_back({kafka::PartitionEvent::Kind::kOutOfRange, kP0, 5, ""});
  spout_->NextTuple();
  ASSERT_THAT(source_->watermarks, SizeIs(1));
  EXPECT_EQ(source_->watermarks[0].offset, 5);
  EXPECT_FALSE(source_->position.contains(kP0));
  source_->WatermarksAre(kP0, source_->watermarks[0].tag, 5, 12, 20);
  spout_->NextTuple();
  EXPECT_EQ(source_->position.at(kP0), 12);
  EXPECT_EQ(StatsOf(kP0).lost, 7);
}

TEST_F(KafkaSpoutStateTest, CloseCommitsClosesTheStoreAndStopsMetadata) {
  Open();
  OwnAll({kP0}, 2);
  spout_->NextTuple();
  spout_->Ack(IdOf(0));
  spout_->Close();
  ASSERT_THAT(store_->requested, SizeIs(1));
  EXPECT_EQ(store_->requested[0].state.offset, 1);
}

KafkaSpoutConfig AtMostOnceConfig() {
  KafkaSpoutConfig c = TestConfig();
  c.guarantee = ProcessingGuarantee::kAtMostOnce;
  return c;
}

TEST_F(KafkaSpoutStateTest, AtMostOnceEmitsOnlyWhatACommitCovers) {
  Open(AtMostOnceConfig());
  OwnAll({kP0}, 5);
  spout_->NextTuple();
  ASSERT_THAT(store_->requested, SizeIs(1));
  EXPECT_EQ(store_->requested[0].state.offset, 5);
  EXPECT_THAT(EmittedOffsets(), IsEmpty()) << "emitted before its commit was stored";
  store_->Push(Kind::kCommitted, kP0, {}, 5);
  spout_->NextTuple();
  EXPECT_THAT(EmittedOffsets(), ElementsAre(0, 1, 2, 3, 4));
}

// An upgrade or a kill with a wait deactivates the spout, then stops it. The
// records a commit in flight covers were committed: they must be emitted,
// not left in the spout to vanish with it.
TEST_F(KafkaSpoutStateTest, AtMostOnceDeactivationEmitsWhatItsCommitInFlightCovers) {
  Open(AtMostOnceConfig());
  OwnAll({kP0, kP1}, 3);
  spout_->NextTuple();
  ASSERT_THAT(store_->requested, SizeIs(2));
  EXPECT_THAT(EmittedOffsets(), IsEmpty());
  // The store answers while the spout is being deactivated.
  store_->Push(Kind::kCommitted, kP0, {}, 3);
  store_->Push(Kind::kCommitted, kP1, {}, 3);
  spout_->Deactivate();
  EXPECT_THAT(EmittedOffsets(), SizeIs(6));
  EXPECT_THAT(store_->requested, SizeIs(2)) << "deactivation committed more than it emitted";
  spout_->NextTuple();
  EXPECT_THAT(EmittedOffsets(), SizeIs(6)) << "a deactivated spout emitted";
}

TEST_F(KafkaSpoutStateTest, AtMostOnceDeactivationWaitsOnlySoLongForAnUnansweredCommit) {
  deactivate_commit_wait_ = milliseconds(20);
  Open(AtMostOnceConfig());
  OwnAll({kP0}, 4);
  spout_->NextTuple();
  ASSERT_THAT(store_->requested, SizeIs(1));
  tempest::testing::LogCapture log;
  spout_->Deactivate();
  EXPECT_THAT(EmittedOffsets(), IsEmpty()) << "emitted records no stored commit covers";
  EXPECT_EQ(log.Count("commit unanswered"), 1);
  // The answer comes later: the records go out once the spout is active again.
  store_->Push(Kind::kCommitted, kP0, {}, 4);
  spout_->Activate();
  spout_->NextTuple();
  EXPECT_THAT(EmittedOffsets(), ElementsAre(0, 1, 2, 3));
}

TEST_F(KafkaSpoutStateTest, NoGuaranteeDeactivationEmitsWhatItFetchedBeforeCommittingIt) {
  KafkaSpoutConfig config = TestConfig();
  config.guarantee = ProcessingGuarantee::kNoGuarantee;
  Open(config);
  OwnAll({kP0}, 100);
  spout_->NextTuple();
  const size_t emitted_active = EmittedOffsets().size();
  ASSERT_LT(emitted_active, 100u) << "one NextTuple emitted every fetched record";
  spout_->Deactivate();
  std::vector<int64_t> all(100);
  for (int i = 0; i < 100; ++i) all[i] = i;
  EXPECT_EQ(EmittedOffsets(), all);
  ASSERT_THAT(store_->requested, SizeIs(1));
  EXPECT_EQ(store_->requested[0].state.offset, 100);
}

TEST(KafkaMessageIdTest, CompactIdRoundTripsWithTheEpochModulo256) {
  const api::MessageId id = EncodeKafkaMessageId(5, 300, 123456789);
  ASSERT_TRUE(id.is_int());
  std::optional<KafkaMessageId> d = DecodeKafkaMessageId(id);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->slot, 5);
  EXPECT_EQ(d->offset, 123456789);
  EXPECT_TRUE(d->compact);
  EXPECT_TRUE(d->IsOfEpoch(300));
  EXPECT_TRUE(d->IsOfEpoch(44));  // 300 mod 256
  EXPECT_FALSE(d->IsOfEpoch(301));
}

TEST(KafkaMessageIdTest, LargeSlotOrOffsetUsesTheListForm) {
  for (const auto& [slot, offset] :
       {std::pair<int, int64_t>{2048, 1}, std::pair<int, int64_t>{1, int64_t{1} << 44}}) {
    const api::MessageId id = EncodeKafkaMessageId(slot, 300, offset);
    ASSERT_FALSE(id.is_int());
    std::optional<KafkaMessageId> d = DecodeKafkaMessageId(id);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->slot, slot);
    EXPECT_EQ(d->offset, offset);
    EXPECT_FALSE(d->compact);
    EXPECT_TRUE(d->IsOfEpoch(300));
    EXPECT_FALSE(d->IsOfEpoch(44));
  }
}

TEST(KafkaMessageIdTest, ForeignIdsDoNotDecode) {
  EXPECT_FALSE(DecodeKafkaMessageId(api::MessageId(int64_t{-1})).has_value());
  EXPECT_FALSE(DecodeKafkaMessageId(api::MessageId("x")).has_value());
  EXPECT_FALSE(
      DecodeKafkaMessageId(api::MessageId(api::ValueList{int64_t{1}, int64_t{2}})).has_value());
  EXPECT_FALSE(DecodeKafkaMessageId(api::MessageId()).has_value());
}

}  // namespace
}  // namespace tempest::spout
