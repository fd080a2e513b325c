// The effectively-once mode of tempest.VerifierBolt (`dedup: true`) and its
// pieces: AppliedOffsets (watermark + runs per partition) and the dedup log
// line format.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bolts/applied_offsets.h"
#include "bolts/verifier_bolt.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/component_harness.h"
#include "tests/support/fake_clock.h"
#include "tests/support/output_file.h"
#include "tests/support/temp_dir.h"

namespace tempest::bolts {
namespace {

using testing::FakeClock;
using testing::FakeOutputCollector;
using testing::MakeArgs;
using testing::MakeTuple;
using testing::ReadFileOrEmpty;

RecordKey K(int64_t partition, int64_t offset, std::string topic = "t") {
  return RecordKey{std::move(topic), partition, offset};
}

// ---- AppliedOffsets ----

TEST(AppliedOffsetsTest, InOrderOffsetsFoldIntoTheWatermark) {
  AppliedOffsets a;
  EXPECT_EQ(a.Watermark("t", 0), -1);
  for (int64_t o = 0; o < 100; ++o) EXPECT_TRUE(a.Add(K(0, o)));
  EXPECT_EQ(a.Watermark("t", 0), 99);
  EXPECT_EQ(a.RunsAbove("t", 0), 0);
  EXPECT_TRUE(a.Contains(K(0, 0)));
  EXPECT_TRUE(a.Contains(K(0, 99)));
  EXPECT_FALSE(a.Contains(K(0, 100)));
  EXPECT_FALSE(a.Add(K(0, 42)));  // already applied
}

TEST(AppliedOffsetsTest, AnOlderOffsetArrivingAfterNewerOnesIsNotApplied) {
  // The spout retries offset 0 while 1..3 succeeded: 0 must stay unapplied.
  AppliedOffsets a;
  for (int64_t o : {1, 2, 3}) EXPECT_TRUE(a.Add(K(0, o)));
  EXPECT_FALSE(a.Contains(K(0, 0)));
  EXPECT_EQ(a.Watermark("t", 0), -1);
  EXPECT_EQ(a.RunsAbove("t", 0), 1);  // [1, 3]
  EXPECT_TRUE(a.Add(K(0, 0)));        // the retry is applied...
  EXPECT_EQ(a.Watermark("t", 0), 3);  // ...and closes the gap
  EXPECT_EQ(a.RunsAbove("t", 0), 0);
  EXPECT_FALSE(a.Add(K(0, 0)));  // its next replay is a duplicate
}

TEST(AppliedOffsetsTest, GapsKeepSeparateRunsUntilTheyClose) {
  AppliedOffsets a;
  for (int64_t o : {0, 2, 4, 6}) a.Add(K(0, o));
  EXPECT_EQ(a.Watermark("t", 0), 0);
  EXPECT_EQ(a.RunsAbove("t", 0), 3);
  for (int64_t o : {1, 3, 5, 7}) EXPECT_FALSE(a.Contains(K(0, o))) << o;
  a.Add(K(0, 5));  // joins [4] and [6]
  EXPECT_EQ(a.RunsAbove("t", 0), 2);
  a.Add(K(0, 3));
  EXPECT_EQ(a.RunsAbove("t", 0), 1);
  a.Add(K(0, 1));
  EXPECT_EQ(a.Watermark("t", 0), 6);
  EXPECT_EQ(a.RunsAbove("t", 0), 0);
}

TEST(AppliedOffsetsTest, PartitionsAndTopicsAreIndependent) {
  AppliedOffsets a;
  a.Add(K(0, 5));
  EXPECT_TRUE(a.Contains(K(0, 5)));
  EXPECT_FALSE(a.Contains(K(1, 5)));
  EXPECT_FALSE(a.Contains(K(0, 5, "other")));
  a.Add(K(1, 0));
  EXPECT_EQ(a.partitions(), 2);
  EXPECT_EQ(a.Watermark("t", 1), 0);
  EXPECT_EQ(a.Watermark("t", 0), -1);
}

TEST(AppliedOffsetsTest, APartitionStartingLateCostsOneRun) {
  // Retention: the log starts at 5000. Offsets below were never applied
  // (and never come), yet in-order traffic needs only one run.
  AppliedOffsets a;
  for (int64_t o = 5000; o < 6000; ++o) a.Add(K(0, o));
  EXPECT_EQ(a.RunsAbove("t", 0), 1);
  EXPECT_FALSE(a.Contains(K(0, 4999)));
  EXPECT_TRUE(a.Contains(K(0, 5999)));
}

TEST(AppliedOffsetsTest, AHoleOlderThanTheWindowCountsAsApplied) {
  // Offset 1 never arrives (a compacted record, a transaction marker).
  AppliedOffsets a(/*window=*/10);
  a.Add(K(0, 0));
  for (int64_t o = 2; o <= 10; ++o) a.Add(K(0, o));
  EXPECT_FALSE(a.Contains(K(0, 1)));  // still inside the window: may come
  EXPECT_EQ(a.RunsAbove("t", 0), 1);
  a.Add(K(0, 11));  // 11 - 10 = 1: offset 1 falls behind the window
  EXPECT_TRUE(a.Contains(K(0, 1)));
  EXPECT_EQ(a.Watermark("t", 0), 11);
  EXPECT_EQ(a.RunsAbove("t", 0), 0);
}

TEST(AppliedOffsetsTest, MemoryIsBoundedByTheOutOfOrderWindow) {
  // 100000 offsets, each block of 64 applied evens first, then odds: at
  // most 32 runs are ever kept, whatever the stream's length.
  AppliedOffsets a;
  int64_t max_runs = 0;
  for (int64_t block = 0; block < 100000 / 64; ++block) {
    for (int64_t parity : {0, 1}) {
      for (int64_t i = parity; i < 64; i += 2) {
        ASSERT_TRUE(a.Add(K(0, block * 64 + i)));
        max_runs = std::max(max_runs, a.TotalRuns());
      }
    }
  }
  EXPECT_LE(max_runs, 32);
  EXPECT_GT(max_runs, 1);
  EXPECT_EQ(a.Watermark("t", 0), 100000 / 64 * 64 - 1);
  EXPECT_EQ(a.TotalRuns(), 0);
}

// ---- line format ----

TEST(DedupLineTest, RoundTrips) {
  std::string applied = AppliedLine(K(3, 17, "e2e.topic-1"), "42");
  EXPECT_EQ(applied, "@e2e.topic-1 3 17 42\n");
  auto parsed = ParseDedupLine(std::string_view(applied).substr(0, applied.size() - 1));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->kind, DedupLine::Kind::kApplied);
  EXPECT_EQ(parsed->key, K(3, 17, "e2e.topic-1"));
  EXPECT_EQ(parsed->payload, "42");

  std::string dropped = DroppedLine(K(0, 9));
  EXPECT_EQ(dropped, "=t 0 9\n");
  parsed = ParseDedupLine("=t 0 9");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->kind, DedupLine::Kind::kDropped);
  EXPECT_EQ(parsed->key, K(0, 9));

  // A payload may hold spaces (a non-integer value shown as text).
  parsed = ParseDedupLine("@t 0 1 !value=not a number");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(parsed->payload, "!value=not a number");
}

TEST(DedupLineTest, RejectsMalformedLines) {
  for (std::string_view bad :
       {"", "5", "!seq=x", "@", "@t", "@t 1", "@t 1 2", "@t 1 2 ", "@ 1 2 5", "@t x 2 5",
        "@t 1 -2 5", "@t 1 +2 5", "@t 1  2 5", "@t 99999999999999999999 2 5", "=t 1", "=t 1 2 3",
        "=t 1 x", "=", "=t  1 2"}) {
    EXPECT_FALSE(ParseDedupLine(bad).has_value()) << "'" << bad << "'";
  }
  EXPECT_FALSE(IsLoggableTopic(""));
  EXPECT_FALSE(IsLoggableTopic("a b"));
  EXPECT_FALSE(IsLoggableTopic("a\tb"));
  EXPECT_TRUE(IsLoggableTopic("orders_v2.eu-1"));
}

// ---- VerifierBolt dedup mode ----

std::vector<std::string> LogLines(const std::string& path) {
  std::vector<std::string> out = absl::StrSplit(ReadFileOrEmpty(path), '\n', absl::SkipEmpty());
  return out;
}

// A KafkaSpout-shaped record whose value is `value` (as text, like Kafka's).
api::Tuple Rec(int64_t partition, int64_t offset, int64_t value, std::string topic = "t") {
  return MakeTuple({"topic", "partition", "offset", "key", "value"},
                   {api::Value(std::move(topic)), api::Value(partition), api::Value(offset),
                    api::Value(), api::Value(absl::StrCat(value))});
}

class DedupSinkTest : public ::testing::Test {
 protected:
  std::unique_ptr<VerifierBolt> Prepared(api::ValueMap props, FakeOutputCollector& out) {
    props.emplace("logPath", dir_.File("log"));
    props.emplace("dedup", true);
    props.emplace("field", "value");
    auto made = VerifierBolt::Create(MakeArgs("tempest.VerifierBolt", std::move(props)), clock_);
    EXPECT_TRUE(made.ok()) << made.status();
    if (!made.ok()) return nullptr;
    api::Config component;
    component.Set(api::kTopologyTickTupleFreqSecs, 1);
    absl::Status prepared = (*made)->Prepare({}, testing::MakeContext("sink", {}, component), out);
    EXPECT_TRUE(prepared.ok()) << prepared;
    if (!prepared.ok()) return nullptr;
    return *std::move(made);
  }
  nlohmann::json Report() {
    return nlohmann::json::parse(ReadFileOrEmpty(dir_.File("report.json")));
  }

  testing::TempDir dir_{"dedup-sink-test"};
  FakeClock clock_;
  FakeOutputCollector out_;
};

TEST_F(DedupSinkTest, ReplaysOfAppliedRecordsAreAckedNotWritten) {
  auto bolt = Prepared({{"batchSize", 1}, {"reportPath", dir_.File("report.json")}}, out_);
  ASSERT_NE(bolt, nullptr);
  for (int64_t o = 0; o < 3; ++o) bolt->Execute(Rec(0, o, 100 + o));
  bolt->Execute(Rec(0, 1, 101));  // replayed after a failure downstream
  bolt->Execute(Rec(0, 1, 101));  // and again
  EXPECT_EQ(out_.acked.size(), 5u);
  EXPECT_TRUE(out_.failed.empty());
  EXPECT_EQ(bolt->deduplicated(), 2);
  EXPECT_EQ(
      LogLines(dir_.File("log")),
      (std::vector<std::string>{"@t 0 0 100", "@t 0 1 101", "@t 0 2 102", "=t 0 1", "=t 0 1"}));
  bolt->Cleanup();
  nlohmann::json r = Report();
  EXPECT_EQ(r["received"], 3);
  EXPECT_EQ(r["unique"], 3);
  EXPECT_EQ(r["duplicated"], 0);
  EXPECT_EQ(r["deduplicated"], 2);
  EXPECT_EQ(r["malformed"], 0);
}

TEST_F(DedupSinkTest, AcksOnlyOnceTheKeyedLineIsDurable) {
  auto bolt = Prepared({{"batchSize", 100}}, out_);
  ASSERT_NE(bolt, nullptr);
  out_.on_ack = [&](const api::Tuple& t) {
    if (t.IsTick()) return;
    std::vector<std::string> lines = LogLines(dir_.File("log"));
    std::string want = absl::StrCat("@t ", t.GetInt(1), " ", t.GetInt(2), " ");
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(),
                            [&](const std::string& l) { return l.rfind(want, 0) == 0; }))
        << "acked " << t.DebugString() << " before its keyed line was written";
  };
  bolt->Execute(Rec(0, 0, 7));
  // A replay of a key that is only in the unflushed batch: it must wait for
  // that batch (acking it now could lose the record if the write failed).
  bolt->Execute(Rec(0, 0, 7));
  EXPECT_TRUE(out_.acked.empty());
  EXPECT_EQ(bolt->held(), 2);
  bolt->Execute(api::Tuple::MakeTick(1));
  EXPECT_EQ(out_.acked.size(), 3u);  // both inputs and the tick
  EXPECT_EQ(bolt->deduplicated(), 1);
  EXPECT_EQ(LogLines(dir_.File("log")), (std::vector<std::string>{"@t 0 0 7", "=t 0 0"}));
}

TEST_F(DedupSinkTest, AnOlderNeverAppliedOffsetReplayedLaterIsApplied) {
  auto bolt = Prepared({{"batchSize", 1}, {"reportPath", dir_.File("report.json")}}, out_);
  ASSERT_NE(bolt, nullptr);
  // Offset 0 failed upstream and is retried after 1 and 2 were applied.
  bolt->Execute(Rec(0, 1, 1));
  bolt->Execute(Rec(0, 2, 2));
  bolt->Execute(Rec(0, 0, 0));
  bolt->Execute(Rec(0, 2, 2));  // a real replay
  bolt->Execute(Rec(0, 0, 0));  // and the retried one's replay
  EXPECT_EQ(LogLines(dir_.File("log")),
            (std::vector<std::string>{"@t 0 1 1", "@t 0 2 2", "@t 0 0 0", "=t 0 2", "=t 0 0"}));
  EXPECT_EQ(bolt->applied().Watermark("t", 0), 2);
  bolt->Cleanup();
  nlohmann::json r = Report();
  EXPECT_EQ(r["received"], 3);
  EXPECT_EQ(r["duplicated"], 0);
  EXPECT_EQ(r["deduplicated"], 2);
}

TEST_F(DedupSinkTest, SamePartitionNumberOfAnotherTopicIsNotADuplicate) {
  auto bolt = Prepared({{"batchSize", 1}}, out_);
  ASSERT_NE(bolt, nullptr);
  bolt->Execute(Rec(0, 5, 1, "a"));
  bolt->Execute(Rec(1, 5, 2, "a"));
  bolt->Execute(Rec(0, 5, 3, "b"));
  EXPECT_EQ(bolt->deduplicated(), 0);
  EXPECT_EQ(LogLines(dir_.File("log")).size(), 3u);
}

TEST_F(DedupSinkTest, ARestartedSinkRebuildsItsStateFromTheLog) {
  {
    FakeOutputCollector out;
    auto bolt = Prepared({{"batchSize", 2}}, out);
    ASSERT_NE(bolt, nullptr);
    for (int64_t o : {0, 1, 2, 4}) bolt->Execute(Rec(0, o, o));  // 3 still in flight
    bolt->Execute(Rec(1, 0, 100));
    bolt->Cleanup();
    EXPECT_EQ(out.acked.size(), 5u);
  }
  {
    // A crash mid-write left offset 5's line without its newline: never acked.
    std::ofstream torn(dir_.File("log"), std::ios::app);
    torn << "@t 0 5 5";
  }
  // A new instance on the same log, as in a restarted worker.
  auto bolt = Prepared({{"batchSize", 1}, {"reportPath", dir_.File("report.json")}}, out_);
  ASSERT_NE(bolt, nullptr);
  EXPECT_EQ(bolt->recovered(), 5);
  EXPECT_EQ(bolt->applied().Watermark("t", 0), 2);
  EXPECT_EQ(bolt->applied().RunsAbove("t", 0), 1);  // [4]
  EXPECT_EQ(bolt->applied().Watermark("t", 1), 0);
  // The spout restarts from its committed offset and replays everything.
  for (int64_t o = 0; o <= 5; ++o) bolt->Execute(Rec(0, o, o));
  bolt->Execute(Rec(1, 0, 100));
  EXPECT_EQ(out_.acked.size(), 7u);
  EXPECT_EQ(bolt->deduplicated(), 5);               // 0, 1, 2, 4 and partition 1's 0
  EXPECT_EQ(bolt->applied().Watermark("t", 0), 5);  // 3 and 5 applied now
  bolt->Cleanup();
  std::vector<std::string> lines = LogLines(dir_.File("log"));
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "@t 0 3 3"), 1);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), "@t 0 5 5"), 1);  // the torn one is gone
  nlohmann::json r = Report();
  EXPECT_EQ(r["received"], 7);
  EXPECT_EQ(r["unique"], 7);
  EXPECT_EQ(r["duplicated"], 0);
  EXPECT_EQ(r["deduplicated"], 5);
  EXPECT_EQ(r["malformed"], 0);
}

TEST_F(DedupSinkTest, RecoveryIgnoresPlainLinesOfAnOlderVerifierLog) {
  {
    std::ofstream old(dir_.File("log"));
    old << "1\n2\n!seq=x\n@t 0 0 9\n=t 0 0\n";
  }
  auto bolt = Prepared({{"batchSize", 1}, {"reportPath", dir_.File("report.json")}}, out_);
  ASSERT_NE(bolt, nullptr);
  EXPECT_EQ(bolt->recovered(), 1);
  bolt->Execute(Rec(0, 0, 9));
  EXPECT_EQ(bolt->deduplicated(), 1);
  bolt->Cleanup();
  nlohmann::json r = Report();
  EXPECT_EQ(r["received"], 3);  // 1, 2, 9
  EXPECT_EQ(r["deduplicated"], 2);
  EXPECT_EQ(r["malformed"], 1);
}

TEST_F(DedupSinkTest, AFailedWriteForgetsTheBatchKeysAndFailsTheReplaysToo) {
  auto made = VerifierBolt::Create(
      MakeArgs("tempest.VerifierBolt",
               {{"logPath", "/dev/full"}, {"dedup", true}, {"field", "value"}, {"batchSize", 2}}),
      clock_);
  ASSERT_TRUE(made.ok()) << made.status();
  ASSERT_TRUE((*made)->Prepare({}, testing::MakeContext("sink"), out_).ok());
  (*made)->Execute(Rec(0, 0, 1));
  (*made)->Execute(Rec(0, 0, 1));  // a replay of the batch's own key
  EXPECT_TRUE(out_.acked.empty());
  EXPECT_EQ(out_.failed.size(), 2u);                   // the spout replays both
  EXPECT_FALSE((*made)->applied().Contains(K(0, 0)));  // so the next copy is applied
  EXPECT_EQ((*made)->deduplicated(), 0);
}

TEST_F(DedupSinkTest, MalformedKeysAreReportedCountedAndAcked) {
  auto bolt = Prepared({{"batchSize", 1}, {"reportPath", dir_.File("report.json")}}, out_);
  ASSERT_NE(bolt, nullptr);
  const std::vector<std::string> fields = {"topic", "partition", "offset", "key", "value"};
  bolt->Execute(MakeTuple({"topic", "offset", "value"}, {"t", 1, "1"}));  // no partition
  bolt->Execute(MakeTuple(fields, {"t", "zero", 1, nullptr, "2"}));
  bolt->Execute(MakeTuple(fields, {"t", 0, -1, nullptr, "3"}));
  bolt->Execute(MakeTuple(fields, {"t", 0, 1.5, nullptr, "4"}));
  bolt->Execute(MakeTuple(fields, {"a topic", 0, 1, nullptr, "5"}));
  bolt->Execute(MakeTuple(fields, {"t", 0, nullptr, nullptr, "6"}));
  bolt->Execute(MakeTuple(fields, {api::ValueList{"t"}, 0, 1, nullptr, "7"}));
  bolt->Execute(Rec(0, 1, 8));                                      // a good one still works
  bolt->Execute(MakeTuple(fields, {"t", 0, 2, nullptr, "eight"}));  // good key, bad value
  bolt->Execute(MakeTuple(fields, {"t", 0, 2, nullptr, "eight"}));  // its replay
  EXPECT_EQ(out_.acked.size(), 10u);
  EXPECT_TRUE(out_.failed.empty());
  EXPECT_EQ(bolt->malformed_keys(), 7);
  EXPECT_EQ(bolt->deduplicated(), 1);
  EXPECT_FALSE(out_.errors.empty());
  EXPECT_NE(out_.errors[0].find("partition"), std::string::npos) << out_.errors[0];
  std::vector<std::string> lines = LogLines(dir_.File("log"));
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[0].rfind("!key ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[8], "@t 0 2 !value=eight");
  bolt->Cleanup();
  nlohmann::json r = Report();
  EXPECT_EQ(r["received"], 1);
  EXPECT_EQ(r["malformed"], 8);  // 7 keys and one value
  EXPECT_EQ(r["deduplicated"], 1);
  EXPECT_EQ(r["complete"], false);
}

TEST_F(DedupSinkTest, CustomKeyFields) {
  auto bolt = Prepared({{"batchSize", 1}, {"dedupFields", api::ValueList{"t", "p", "o"}}}, out_);
  ASSERT_NE(bolt, nullptr);
  bolt->Execute(MakeTuple({"t", "p", "o", "value"}, {"x", 2, 9, "5"}));
  bolt->Execute(MakeTuple({"t", "p", "o", "value"}, {"x", 2, 9, "5"}));
  EXPECT_EQ(bolt->deduplicated(), 1);
  EXPECT_EQ(LogLines(dir_.File("log")), (std::vector<std::string>{"@x 2 9 5", "=x 2 9"}));
}

TEST_F(DedupSinkTest, BadDedupPropertiesAreClearErrors) {
  for (api::ValueMap props : std::vector<api::ValueMap>{
           {{"logPath", "x"}, {"dedup", "maybe"}},
           {{"logPath", "x"}, {"dedup", true}, {"dedupFields", api::ValueList{"a", "b"}}},
           {{"logPath", "x"}, {"dedup", true}, {"dedupFields", "a,b,c,d"}},
           {{"logPath", "x"}, {"dedup", true}, {"dedupWindow", 0}},
           {{"logPath", "x"}, {"dedupFields", "a,b,c"}},  // forgot dedup: true
           {{"logPath", "x"}, {"dedup", false}, {"dedupWindow", 10}}}) {
    auto made = VerifierBolt::Create(MakeArgs("tempest.VerifierBolt", props));
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument)
        << api::Value(props).DebugString();
  }
  auto ok = VerifierBolt::Create(MakeArgs(
      "tempest.VerifierBolt", {{"logPath", "x"}, {"dedup", true}, {"dedupFields", "t, p, o"}}));
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE((*ok)->options().dedup);
  EXPECT_EQ((*ok)->options().dedup_fields, (std::vector<std::string>{"t", "p", "o"}));
  auto plain = VerifierBolt::Create(MakeArgs("tempest.VerifierBolt", {{"logPath", "x"}}));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE((*plain)->options().dedup);
  EXPECT_EQ((*plain)->options().dedup_fields,
            (std::vector<std::string>{"topic", "partition", "offset"}));
}

}  // namespace
}  // namespace tempest::bolts
