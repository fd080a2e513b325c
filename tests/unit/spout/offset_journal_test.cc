// The offset journal's pure parts: entry codec, node names, trimming choice,
// and what ExplainOffset says about a record from a partition's entries.
#include "spout/kafka/offsets/offset_journal.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tempest::spout {
namespace {

using Verdict = OffsetExplanation::Verdict;

JournalEntry Commit(int64_t from, int64_t to, int64_t time_ms = 1'700'000'000'000) {
  JournalEntry e;
  e.type = JournalEntryType::kCommit;
  e.from = from;
  e.to = to;
  e.time_ms = time_ms;
  e.owner = "topo-1:reader:3";
  e.session = "1a2b";
  e.topology = "topo-1";
  e.guarantee = "AT_LEAST_ONCE";
  return e;
}

JournalEntry Reset(int64_t from, int64_t to) {
  JournalEntry e;
  e.type = JournalEntryType::kReset;
  e.from = from;
  e.to = to;
  e.time_ms = 1'700'000'100'000;
  e.reason = "offset 4100 out of range, log holds [5000, 9000); outOfRangePolicy earliest";
  return e;
}

JournalEntry DeadLetter(int64_t offset, int64_t failures) {
  JournalEntry e;
  e.type = JournalEntryType::kDeadLetter;
  e.offset = offset;
  e.target_topic = "events-dead";
  e.failures = failures;
  e.time_ms = 1'700'000'200'000;
  return e;
}

JournalEntry Move(JournalEntryType type, int64_t from, int64_t to) {
  JournalEntry e;
  e.type = type;
  e.from = from;
  e.to = to;
  e.time_ms = 1'700'000'300'000;
  e.owner = "tempest offsets set";
  return e;
}

const TopicPartition kTp{"legacy", 2};

TEST(OffsetJournalCodecTest, EveryFieldRoundTrips) {
  JournalEntry e = DeadLetter(17, 4);
  e.owner = "o";
  e.session = "ff";
  e.topology = "t";
  e.reason = "why";
  absl::StatusOr<JournalEntry> back = DecodeJournalEntry(EncodeJournalEntry(e));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->type, JournalEntryType::kDeadLetter);
  EXPECT_EQ(back->offset, 17);
  EXPECT_EQ(back->failures, 4);
  EXPECT_EQ(back->target_topic, "events-dead");
  EXPECT_EQ(back->time_ms, e.time_ms);
  EXPECT_EQ(back->owner, "o");
  EXPECT_EQ(back->session, "ff");
  EXPECT_EQ(back->topology, "t");
  EXPECT_EQ(back->reason, "why");
  EXPECT_EQ(back->from, -1);  // not encoded, not invented
  absl::StatusOr<JournalEntry> c = DecodeJournalEntry(EncodeJournalEntry(Commit(5, 9)));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->from, 5);
  EXPECT_EQ(c->to, 9);
  EXPECT_EQ(c->guarantee, "AT_LEAST_ONCE");
}

TEST(OffsetJournalCodecTest, HostileBytesAreRefusedWithAReason) {
  for (const char* bad : {"", "[]", "{", "{\"type\":\"commit\"}", "{\"type\":\"nope\",\"time\":1}",
                          "{\"type\":\"commit\",\"time\":\"x\"}",
                          "{\"type\":\"commit\",\"time\":1,\"from\":\"5\"}", "\xff\xfe"}) {
    absl::StatusOr<JournalEntry> e = DecodeJournalEntry(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(e.status())) << bad;
    EXPECT_FALSE(e.status().message().empty());
  }
  EXPECT_TRUE(DecodeJournalEntry("{\"type\":\"released\",\"time\":1,\"extra\":[1]}").ok());
}

TEST(OffsetJournalPathsTest, SitNextToTheOffsetNodesUnderAtJournal) {
  EXPECT_EQ(JournalDirPath("/kafkaspout", "legacy", "events", 2, false),
            "/kafkaspout/legacy/@journal/partition_2");
  EXPECT_EQ(JournalDirPath("/kafkaspout/", "legacy", "events", 2, true),
            "/kafkaspout/legacy/@journal/events/partition_2");
  EXPECT_EQ(JournalEntryPrefix("/d", 42), "/d/e-42-");
  std::optional<JournalNodeName> n = ParseJournalNodeName("e-1700000000000-0000000042");
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->time_ms, 1700000000000);
  EXPECT_EQ(n->sequence, 42);
  for (const char* bad : {"e-1-42", "x-1-0000000042", "e--0000000042", "e-a-0000000042",
                          "partition_0", "e-1-00000000x2"}) {
    EXPECT_FALSE(ParseJournalNodeName(bad).has_value()) << bad;
  }
}

std::string Name(int64_t time_ms, int seq) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "e-%lld-%010d", static_cast<long long>(time_ms), seq);
  return buf;
}

TEST(OffsetJournalTrimTest, OldestPastTheBoundGoFirstInBoundedBatches) {
  std::vector<std::string> children;
  for (int i = 0; i < 250; ++i) children.push_back(Name(1000 + i, i));
  children.push_back("not-ours");
  // Keep 100: the 150 oldest are over, at most one batch of 100 at a time.
  std::vector<std::string> doomed = JournalNamesToTrim(children, 100, std::chrono::seconds(0),
                                                       5000, 100);
  ASSERT_EQ(doomed.size(), 100u);
  EXPECT_EQ(doomed.front(), Name(1000, 0));
  EXPECT_EQ(doomed.back(), Name(1099, 99));
  // Order comes from the sequence, not the listing.
  std::vector<std::string> shuffled = {Name(9, 3), Name(7, 1), Name(8, 2)};
  EXPECT_EQ(JournalNamesToTrim(shuffled, 2, std::chrono::seconds(0), 10),
            std::vector<std::string>{Name(7, 1)});
  EXPECT_TRUE(JournalNamesToTrim(shuffled, 3, std::chrono::seconds(0), 10).empty());
}

TEST(OffsetJournalTrimTest, RetentionDropsOldEntriesButKeepsTheNewest) {
  const int64_t now = 10'000'000;
  std::vector<std::string> children = {Name(now - 9'000'000, 1), Name(now - 8'000'000, 2),
                                       Name(now - 1'000, 3)};
  EXPECT_EQ(JournalNamesToTrim(children, 1000, std::chrono::seconds(60), now),
            (std::vector<std::string>{Name(now - 9'000'000, 1), Name(now - 8'000'000, 2)}));
  std::vector<std::string> all_old = {Name(1, 1), Name(2, 2)};
  EXPECT_EQ(JournalNamesToTrim(all_old, 1000, std::chrono::seconds(60), now),
            std::vector<std::string>{Name(1, 1)});
}

TEST(ExplainOffsetTest, CommittedPastNamesTimeOwnerAndGuarantee) {
  std::vector<JournalEntry> journal = {Commit(0, 100), Commit(100, 250)};
  OffsetExplanation x = ExplainOffset(journal, 250, kTp, 120);
  EXPECT_EQ(x.verdict, Verdict::kCommitted);
  ASSERT_TRUE(x.entry.has_value());
  EXPECT_EQ(x.entry->to, 250);
  EXPECT_NE(x.text.find("committed past"), std::string::npos) << x.text;
  EXPECT_NE(x.text.find("topo-1:reader:3"), std::string::npos) << x.text;
  EXPECT_NE(x.text.find("AT_LEAST_ONCE"), std::string::npos) << x.text;
  EXPECT_NE(x.text.find("2023-11-14T22:13:20.000Z"), std::string::npos) << x.text;
}

TEST(ExplainOffsetTest, ResetGapIsLostWithTheReasonEvenThoughTheCommitSpansIt) {
  // The reset entry rides in the same multi as the commit that jumps the gap.
  std::vector<JournalEntry> journal = {Commit(3000, 4100), Reset(4100, 5000), Commit(4100, 5200)};
  OffsetExplanation lost = ExplainOffset(journal, 5200, kTp, 4500);
  EXPECT_EQ(lost.verdict, Verdict::kLost);
  EXPECT_NE(lost.text.find("4100-4999 (900 records)"), std::string::npos) << lost.text;
  EXPECT_NE(lost.text.find("outOfRangePolicy earliest"), std::string::npos) << lost.text;
  EXPECT_EQ(ExplainOffset(journal, 5200, kTp, 5000).verdict, Verdict::kCommitted);
  EXPECT_EQ(ExplainOffset(journal, 5200, kTp, 4099).verdict, Verdict::kCommitted);
  EXPECT_EQ(ExplainOffset(journal, 5200, kTp, 5200).verdict, Verdict::kNotReached);
}

TEST(ExplainOffsetTest, DeadLetterNamesTopicAndFailures) {
  std::vector<JournalEntry> journal = {Commit(0, 7), DeadLetter(7, 3), Commit(7, 20)};
  OffsetExplanation x = ExplainOffset(journal, 20, kTp, 7);
  EXPECT_EQ(x.verdict, Verdict::kDeadLettered);
  EXPECT_NE(x.text.find("events-dead after 3 failures"), std::string::npos) << x.text;
  EXPECT_EQ(ExplainOffset(journal, 20, kTp, 8).verdict, Verdict::kCommitted);
}

TEST(ExplainOffsetTest, NotReachedAndNothingStored) {
  EXPECT_EQ(ExplainOffset({Commit(0, 10)}, 10, kTp, 10).verdict, Verdict::kNotReached);
  OffsetExplanation none = ExplainOffset({}, std::nullopt, kTp, 0);
  EXPECT_EQ(none.verdict, Verdict::kNotReached);
  EXPECT_NE(none.text.find("no offset is stored"), std::string::npos) << none.text;
}

TEST(ExplainOffsetTest, BeforeTheJournalIsUnknownAndSaysSo) {
  OffsetExplanation x = ExplainOffset({Commit(500, 600)}, 600, kTp, 20);
  EXPECT_EQ(x.verdict, Verdict::kUnknown);
  EXPECT_NE(x.text.find("reaches back only to offset 500"), std::string::npos) << x.text;
  OffsetExplanation empty = ExplainOffset({}, 600, kTp, 20);
  EXPECT_EQ(empty.verdict, Verdict::kUnknown);
  EXPECT_NE(empty.text.find("no journal entries"), std::string::npos) << empty.text;
  // A journal that starts with the partition's first commit reaches back to 0.
  EXPECT_EQ(ExplainOffset({Commit(-1, 600)}, 600, kTp, 20).verdict, Verdict::kCommitted);
}

TEST(ExplainOffsetTest, ManualSetForwardLosesAndARewindReplays) {
  std::vector<JournalEntry> skipped = {Commit(0, 100), Move(JournalEntryType::kManualSet, 100, 300),
                                       Commit(300, 400)};
  OffsetExplanation lost = ExplainOffset(skipped, 400, kTp, 150);
  EXPECT_EQ(lost.verdict, Verdict::kLost);
  EXPECT_NE(lost.text.find("manual set skipped 100-299"), std::string::npos) << lost.text;

  std::vector<JournalEntry> rewound = {Commit(0, 100), Move(JournalEntryType::kRewind, 100, 40),
                                       Commit(40, 120)};
  OffsetExplanation again = ExplainOffset(rewound, 120, kTp, 50);
  EXPECT_EQ(again.verdict, Verdict::kCommitted);
  ASSERT_TRUE(again.replayed_by.has_value());
  EXPECT_EQ(again.entry->from, 40);
  EXPECT_NE(again.text.find("delivered again after the rewind to 40"), std::string::npos)
      << again.text;
  // Rewound and not yet re-committed: not reached.
  std::vector<JournalEntry> pending = {Commit(0, 100), Move(JournalEntryType::kRewind, 100, 40)};
  EXPECT_EQ(ExplainOffset(pending, 40, kTp, 50).verdict, Verdict::kNotReached);
}

TEST(DescribeJournalEntryTest, OneReadableLinePerType) {
  EXPECT_EQ(DescribeJournalEntry(Reset(4100, 5000)),
            "2023-11-14T22:15:00.000Z reset skipped 4100-4999 (900 records): offset 4100 out of "
            "range, log holds [5000, 9000); outOfRangePolicy earliest");
  EXPECT_EQ(DescribeJournalEntry(Commit(1, 2)),
            "2023-11-14T22:13:20.000Z commit 1 -> 2 AT_LEAST_ONCE by topo-1:reader:3 session 1a2b "
            "topology topo-1");
  EXPECT_EQ(DescribeJournalEntry(DeadLetter(7, 3)),
            "2023-11-14T22:16:40.000Z dead-letter offset 7 to events-dead after 3 failures");
}

}  // namespace
}  // namespace tempest::spout
