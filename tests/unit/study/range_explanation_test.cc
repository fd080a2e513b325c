#include "study/range_explanation.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tempest::study {
namespace {

using spout::JournalEntry;
using spout::JournalEntryType;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kRecords = 100;  // one partition: offset == seq

// Copies per record: 1 everywhere, except `c` copies over [from, to].
struct Span {
  int64_t from;
  int64_t to;
  uint32_t copies;
};
DeliveryCounts Counts(const std::vector<Span>& spans) {
  DeliveryCounts counts{std::vector<uint32_t>(kRecords, 1), 0, 0};
  for (const Span& s : spans) {
    for (int64_t o = s.from; o <= s.to; ++o) counts.copies[o] = s.copies;
  }
  return counts;
}

int64_t next_sequence = 0;
JournalEntry Entry(JournalEntryType type, int64_t from, int64_t to, std::string owner = "",
                   std::string session = "", std::string reason = "") {
  JournalEntry e;
  e.type = type;
  e.time_ms = 1700000000000 + next_sequence;
  e.sequence = next_sequence++;
  e.from = from;
  e.to = to;
  e.owner = std::move(owner);
  e.session = std::move(session);
  e.reason = std::move(reason);
  return e;
}
JournalEntry Acquired(std::string owner, std::string session) {
  return Entry(JournalEntryType::kAcquired, -1, -1, std::move(owner), std::move(session));
}
JournalEntry Commit(int64_t from, int64_t to) {
  JournalEntry e = Entry(JournalEntryType::kCommit, from, to, "s-1:kafka:3", "a1");
  e.guarantee = "AT_MOST_ONCE";
  return e;
}
JournalEntry DeadLetter(int64_t offset) {
  JournalEntry e = Entry(JournalEntryType::kDeadLetter, -1, -1);
  e.offset = offset;
  e.target_topic = "study-dlq";
  e.failures = 3;
  return e;
}

struct Expected {
  RangeKind kind;
  int64_t first;
  int64_t last;
  int64_t count;
  std::string cause;  // a part of it
  std::optional<JournalEntryType> entry;
};

struct Case {
  std::string name;
  DeliveryCounts counts;
  std::vector<JournalEntry> journal;
  std::optional<int64_t> stored;
  std::vector<Expected> expected;
};

std::vector<Case> Cases() {
  const std::string reset_reason =
      "offset 40 out of range, log holds [60, 100); outOfRangePolicy earliest";
  return {
      {"ResetGapQuotesItsReason",
       Counts({{40, 59, 0}}),
       {Acquired("s-1:kafka:3", "a1"), Commit(-1, 40),
        Entry(JournalEntryType::kReset, 40, 60, "", "", reset_reason), Commit(60, 100)},
       100,
       {{RangeKind::kLost, 40, 59, 20, "out-of-range reset skipped 40–59 (" + reset_reason + ")",
         JournalEntryType::kReset}}},
      {"DeadLetterQuotesTopicAndFailures",
       Counts({{17, 17, 0}}),
       {Acquired("s-1:kafka:3", "a1"), DeadLetter(17), Commit(-1, 100)},
       100,
       {{RangeKind::kLost, 17, 17, 1, "dead-lettered to study-dlq after 3 failures",
         JournalEntryType::kDeadLetter}}},
      {"ReAcquiredDuplicateQuotesTheAcquisition",
       Counts({{30, 49, 2}}),
       {Acquired("s-1:kafka:3", "a1"), Commit(-1, 30), Acquired("s-1:kafka:3", "b2"),
        Commit(30, 100)},
       100,
       {{RangeKind::kDuplicated, 30, 49, 20,
         "re-read after s-1:kafka:3 re-acquired the partition at 30 (session b2, was a1)",
         JournalEntryType::kAcquired}}},
      {"OwnershipChangeDuplicateQuotesTheNewOwner",
       Counts({{30, 34, 3}}),
       {Acquired("s-1:kafka:3", "a1"), Commit(-1, 30), Acquired("s-2:kafka:5", "c3")},
       30,
       {{RangeKind::kDuplicated, 30, 34, 10,
         "re-read after s-2:kafka:5 took the partition over at 30", JournalEntryType::kAcquired}}},
      {"RewindDuplicateQuotesTheRewind",
       Counts({{50, 59, 2}}),
       {Acquired("s-1:kafka:3", "a1"), Commit(-1, 80),
        Entry(JournalEntryType::kRewind, 80, 50, "s-1:kafka:3", "a1", "requested by ops@host"),
        Commit(50, 100)},
       100,
       {{RangeKind::kDuplicated, 50, 59, 10,
         "re-read after a rewind from 80 back to 50 by s-1:kafka:3 (requested by ops@host)",
         JournalEntryType::kRewind}}},
      {"WhatTheJournalDoesNotCoverIsNotExplained",
       Counts({{5, 6, 0}, {31, 33, 2}}),
       {Acquired("s-1:kafka:3", "a1"), Commit(-1, 30), Acquired("s-1:kafka:3", "b2")},
       30,
       {{RangeKind::kLost, 5, 6, 2, "committed past without reaching the sink (commit none -> 30",
         JournalEntryType::kCommit},
        // Starts one past the re-acquisition's offset: not guessed at.
        {RangeKind::kDuplicated, 31, 33, 3, kNotExplained, std::nullopt}}},
      {"NoJournalExplainsNothing",
       Counts({{90, 99, 0}, {10, 11, 2}}),
       {},
       std::nullopt,
       {{RangeKind::kDuplicated, 10, 11, 2, kNotExplained, std::nullopt},
        {RangeKind::kLost, 90, 99, 10, kNotExplained, std::nullopt}}},
      {"ALostRunSplitsWhereTheExplanationChanges",
       Counts({{35, 44, 0}}),
       {Acquired("s-1:kafka:3", "a1"), Commit(-1, 35),
        Entry(JournalEntryType::kReset, 40, 60, "", "", reset_reason), Commit(60, 100)},
       100,
       {{RangeKind::kLost, 35, 39, 5, kNotExplained, std::nullopt},
        {RangeKind::kLost, 40, 44, 5, "out-of-range reset skipped 40–59",
         JournalEntryType::kReset}}},
  };
}

class ExplainRangesTest : public ::testing::TestWithParam<Case> {};

TEST_P(ExplainRangesTest, ExplainsEachRangeFromTheJournal) {
  const Case& c = GetParam();
  const RecordLayout layout{kRecords, 1};
  PartitionJournal journal{c.journal, c.stored, ""};
  const ExplainedRanges out = ExplainRanges(c.counts, layout, "study-x", {journal});
  EXPECT_EQ(out.omitted, 0);
  ASSERT_EQ(out.ranges.size(), c.expected.size());
  for (size_t i = 0; i < c.expected.size(); ++i) {
    const RangeExplanation& got = out.ranges[i];
    const Expected& want = c.expected[i];
    SCOPED_TRACE(testing::Message() << "range " << i << ": " << got.cause);
    EXPECT_EQ(got.partition, 0);
    EXPECT_EQ(got.kind, want.kind);
    EXPECT_EQ(got.first, want.first);
    EXPECT_EQ(got.last, want.last);
    EXPECT_EQ(got.count, want.count);
    EXPECT_THAT(got.cause, HasSubstr(want.cause));
    ASSERT_EQ(got.entry.has_value(), want.entry.has_value());
    if (want.entry.has_value()) {
      EXPECT_EQ(got.entry->type, *want.entry);
    } else {
      EXPECT_THAT(got.cause, StartsWith(kNotExplained));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Journal, ExplainRangesTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

TEST(ExplainRangesCapTest, KeepsTheLargestAndCountsTheRest) {
  // 30 single lost offsets (every other one) and one 10-record gap at the end.
  std::vector<Span> spans;
  for (int64_t o = 0; o < 60; o += 2) spans.push_back({o, o, 0});
  spans.push_back({85, 94, 0});
  const ExplainedRanges out =
      ExplainRanges(Counts(spans), RecordLayout{kRecords, 1}, "study-x", {PartitionJournal{}}, 20);
  ASSERT_EQ(out.ranges.size(), 20u);
  EXPECT_EQ(out.omitted, 11);
  // In offset order; the big gap kept, then the earliest single offsets.
  EXPECT_EQ(out.ranges.front().first, 0);
  EXPECT_EQ(out.ranges[18].first, 36);
  EXPECT_EQ(out.ranges.back().first, 85);
  EXPECT_EQ(out.ranges.back().count, 10);
}

TEST(ExplainRangesCapTest, SeveralPartitionsUseTheirOwnJournalsAndOffsets) {
  // Record seq is at partition seq % 2, offset seq / 2: seq 41 is offset 20 of partition 1.
  DeliveryCounts counts{std::vector<uint32_t>(kRecords, 1), 0, 0};
  counts.copies[41] = 0;
  PartitionJournal p1{{DeadLetter(20), Commit(-1, 50)}, 50, ""};
  const ExplainedRanges out =
      ExplainRanges(counts, RecordLayout{kRecords, 2}, "study-x", {PartitionJournal{}, p1});
  ASSERT_EQ(out.ranges.size(), 1u);
  EXPECT_EQ(out.ranges[0].partition, 1);
  EXPECT_EQ(out.ranges[0].first, 20);
  EXPECT_THAT(out.ranges[0].cause, HasSubstr("dead-lettered to study-dlq"));
}

TEST(ExplainRangesCapTest, AnUnreadableJournalSaysSo) {
  PartitionJournal broken;
  broken.unreadable = "connection loss";
  const ExplainedRanges out =
      ExplainRanges(Counts({{3, 3, 0}}), RecordLayout{kRecords, 1}, "study-x", {broken});
  ASSERT_EQ(out.ranges.size(), 1u);
  EXPECT_THAT(out.ranges[0].cause, StartsWith(kNotExplained));
  EXPECT_THAT(out.ranges[0].cause, HasSubstr("could not be read: connection loss"));
}

TEST(ZombieCommitsTest, CountsCommitsByASessionAfterAnotherAcquired) {
  PartitionJournal p0;
  p0.entries = {Entry(JournalEntryType::kCommit, 0, 5, "old", "a"),  // before any acquisition
                Entry(JournalEntryType::kAcquired, -1, 5, "w1", "a"),
                Entry(JournalEntryType::kCommit, 5, 9, "w1", "a"),
                Entry(JournalEntryType::kAcquired, -1, 9, "w2", "b"),
                Entry(JournalEntryType::kCommit, 9, 12, "w2", "b"),
                Entry(JournalEntryType::kCommit, 12, 14, "w1", "a"),  // the replaced owner
                Entry(JournalEntryType::kManualSet, 14, 3, "tempest offsets set", "")};
  PartitionJournal p1;
  p1.entries = {Entry(JournalEntryType::kAcquired, -1, 0, "w2", "b"),
                Entry(JournalEntryType::kCommit, 0, 4, "w2", "b"),
                // The same session taking the partition again is no zombie.
                Entry(JournalEntryType::kAcquired, -1, 4, "w2", "b"),
                Entry(JournalEntryType::kCommit, 4, 8, "w2", "b")};
  EXPECT_EQ(CountZombieCommits({p0, p1}), 1);
  EXPECT_EQ(CountZombieCommits({p1}), 0);
  EXPECT_EQ(CountZombieCommits({}), 0);
}

}  // namespace
}  // namespace tempest::study
