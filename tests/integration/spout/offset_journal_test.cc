// The per-partition offset journal against a real ZooKeeper and DevKafka:
// entries written in the commit multis (none for a fenced commit), trimmed to
// the bound, and read back by `tempest offsets history` / `explain` (the CLI
// binary as a child process) for a retention reset and a dead letter.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "spout/kafka/kafka_spout.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/offset_journal.h"
#include "spout/kafka/offsets/zk_offset_store.h"
#include "tests/integration/spout/spout_cluster_fixture.h"
#include "tests/integration/spout/spout_harness.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::spout {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::DevKafka;
using testing::NumberedRecords;
using testing::SpoutUnderTest;
using testing::StoredOffset;

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class OffsetJournalTest : public testing::SpoutClusterTest<1> {
 protected:
  void SetUp() override {
    client_ = ConnectClient(seconds(20));
    ASSERT_NE(client_, nullptr);
  }

  std::unique_ptr<SpoutUnderTest> Spout(const std::string& topic, const std::string& root,
                                        api::ValueMap extra = {}) {
    api::ComponentArgs args = KafkaSpoutArgs(topic, root, extra);
    auto config = ParseKafkaSpoutArgs(args);
    EXPECT_TRUE(config.ok()) << config.status();
    auto t = std::make_unique<SpoutUnderTest>();
    t->spout = std::make_unique<KafkaSpout>(std::move(*config));
    api::TopologyContext ctx = testing::SpoutContext(TopologyConfig(), 0, 1, "topo-1-100");
    absl::Status s = t->spout->Open(ctx.config(), ctx, t->collector);
    EXPECT_TRUE(s.ok()) << s;
    return t;
  }

  // `tempest offsets <verb> --zk .. --root ROOT --id spout ARGS...`.
  testing::CommandRun Offsets(const std::string& verb, const std::string& root,
                              std::vector<std::string> args) {
    std::vector<std::string> argv = {testing::TempestBinary(), "offsets", verb,
                                     "--zk",                   zk_->ConnectString(),
                                     "--root",                 root,
                                     "--id",                   "spout"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::RunCommand(argv, dir_.File(absl::StrCat("run", ++runs_)), seconds(60));
  }

  std::vector<JournalEntry> Journal(const std::string& root, const std::string& topic) {
    auto read = ReadJournal(*client_, JournalDirPath(root, "spout", topic, 0, false));
    EXPECT_TRUE(read.ok()) << read.status();
    return read.ok() ? read->entries : std::vector<JournalEntry>{};
  }

  void WriteLegacyOffset(const std::string& root, const std::string& topic, int64_t offset) {
    const std::string path = OffsetNodePath(root, "spout", topic, 0, false);
    StormKafkaOffset o{"legacy-7-1466000000", "legacy", offset, 0, "old-broker", 9092, topic};
    ASSERT_TRUE(client_->EnsurePath(path.substr(0, path.rfind('/'))).ok());
    ASSERT_TRUE(client_->Create(path, EncodeStormKafkaOffset(o)).ok());
  }

  std::unique_ptr<ZkOffsetStore> Store(const std::string& root, int64_t max_entries) {
    ZkOffsetStore::Options o;
    o.connect_string = zk_->ConnectString();
    o.zk_config.session_timeout = milliseconds(4000);
    o.zk_root = root;
    o.spout_id = "spout";
    o.owner_description = "topo-1-100:kafka:1";
    o.topology_id = "topo-1-100";
    o.guarantee = "AT_LEAST_ONCE";
    o.journal_max_entries = max_entries;
    auto s = ZkOffsetStore::Create(o);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  // Waits for an update of `kind` (and `offset`, for kCommitted); false after 30 s.
  static bool Await(ZkOffsetStore& s, OffsetStoreUpdate::Kind kind, uint64_t* acquisition,
                    int64_t offset = -1) {
    return testing::Eventually(seconds(30), [&] {
      for (auto& u : s.TakeUpdates()) {
        if (u.kind != kind) continue;
        if (acquisition != nullptr && kind == OffsetStoreUpdate::Kind::kAcquired) {
          *acquisition = u.acquisition;
        }
        if (offset < 0 || u.offset == offset) return true;
      }
      return false;
    });
  }
  static OffsetCommit Commit(uint64_t acquisition, int64_t offset) {
    OffsetCommit c;
    c.partition = {"jstore", 0};
    c.acquisition = acquisition;
    c.state = StormKafkaOffset{"topo-1-100", "topo", offset, 0, "h", 1, "jstore"};
    return c;
  }

  testing::TempDir dir_;
  int runs_ = 0;
  std::unique_ptr<coord::ZkSession> client_;
};

TEST_F(OffsetJournalTest, RetentionResetIsExplainedAsLostWithItsExactRange) {
  ASSERT_TRUE(kafka_->CreateTopic("jret", 1).ok());
  // DevKafka keeps about 5 MiB per partition: 8 MiB pushes the log start up.
  std::vector<DevKafka::Record> many(8000, DevKafka::Record{"", std::string(1024, 'x')});
  ASSERT_TRUE(kafka_->Produce("jret", 0, many, seconds(120)).ok());
  auto marks = kafka_->Watermarks("jret", 0);
  ASSERT_TRUE(marks.ok());
  const int64_t low = marks->first, high = marks->second;
  ASSERT_GT(low, 5) << "DevKafka retention should have dropped the oldest records";
  WriteLegacyOffset("/jret", "jret", 5);
  auto t = Spout("jret", "/jret");
  const std::string path = OffsetNodePath("/jret", "spout", "jret", 0, false);
  ASSERT_TRUE(t->RunUntil(seconds(120), [&] { return StoredOffset(*client_, path) == high; }));
  t->spout->Close();

  const int64_t inside = (5 + low) / 2;
  testing::CommandRun lost = Offsets("explain", "/jret", {"--topic", "jret", "--partition", "0",
                                                          "--offset", absl::StrCat(inside)});
  ASSERT_EQ(lost.exit_code, 0) << lost.err;
  const std::string range = absl::StrCat("5-", low - 1, " (", low - 5, " records)");
  EXPECT_TRUE(Has(lost.out, absl::StrCat("offset ", inside, " of jret/0 is lost"))) << lost.out;
  EXPECT_TRUE(Has(lost.out, "out-of-range reset skipped " + range)) << lost.out;
  EXPECT_TRUE(Has(lost.out, absl::StrCat("log holds [", low, ", "))) << lost.out;
  EXPECT_TRUE(Has(lost.out, "outOfRangePolicy earliest")) << lost.out;

  testing::CommandRun kept = Offsets("explain", "/jret", {"--topic", "jret", "--partition", "0",
                                                          "--offset", absl::StrCat(low + 10)});
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_TRUE(Has(kept.out, "was committed past at ")) << kept.out;
  EXPECT_TRUE(Has(kept.out, "by topo-1-100:")) << kept.out;
  EXPECT_TRUE(Has(kept.out, "under AT_LEAST_ONCE")) << kept.out;

  testing::CommandRun ahead = Offsets("explain", "/jret", {"--topic", "jret", "--partition", "0",
                                                           "--offset", absl::StrCat(high + 5)});
  EXPECT_TRUE(Has(ahead.out, absl::StrCat("not reached yet: the stored offset is ", high)))
      << ahead.out;

  testing::CommandRun history = Offsets("history", "/jret", {"--topic", "jret"});
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_TRUE(Has(history.out, "reset skipped " + range)) << history.out;
  EXPECT_TRUE(Has(history.out, " acquired ")) << history.out;
  EXPECT_TRUE(Has(history.out, "commit 5 -> ")) << history.out;

  testing::CommandRun json = Offsets("history", "/jret", {"--partition", "0", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << json.out;
  ASSERT_EQ(doc["partitions"].size(), 1u);
  EXPECT_EQ(doc["partitions"][0]["stored_offset"], high);
  int resets = 0;
  for (const auto& e : doc["partitions"][0]["entries"]) {
    if (e["type"] != "reset") continue;
    ++resets;
    EXPECT_EQ(e["from"], 5);
    EXPECT_EQ(e["to"], low);
  }
  EXPECT_EQ(resets, 1);

  // The journal sits beside the offsets: `offsets show` still lists one
  // partition, and the node is storm-kafka's JSON.
  testing::CommandRun show = Offsets("show", "/jret", {"--json"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  nlohmann::json shown = nlohmann::json::parse(show.out, nullptr, false);
  ASSERT_TRUE(shown.is_object()) << show.out;
  EXPECT_EQ(shown["partitions"].size(), 1u) << show.out;
  EXPECT_EQ(StoredOffset(*client_, path), high);
}

TEST_F(OffsetJournalTest, DeadLetterIsExplainedWithTopicAndFailureCount) {
  ASSERT_TRUE(kafka_->CreateTopic("jdl", 1).ok());
  ASSERT_TRUE(kafka_->CreateTopic("jdl-dead", 1).ok());
  ASSERT_TRUE(kafka_->Produce("jdl", 0, NumberedRecords(0, 20)).ok());
  auto t = Spout("jdl", "/jdl",
                 {{"deadLetterTopic", "jdl-dead"}, {"retryLimit", 3}, {"retryInitialDelayMs", 1}});
  t->decide = [](const auto& e) { return SpoutUnderTest::OffsetOf(e) != 7; };
  const std::string path = OffsetNodePath("/jdl", "spout", "jdl", 0, false);
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return StoredOffset(*client_, path) == 20; }));
  t->spout->Close();

  testing::CommandRun dead =
      Offsets("explain", "/jdl", {"--topic", "jdl", "--partition", "0", "--offset", "7", "--json"});
  ASSERT_EQ(dead.exit_code, 0) << dead.err;
  nlohmann::json doc = nlohmann::json::parse(dead.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << dead.out;
  EXPECT_EQ(doc["verdict"], "dead-lettered");
  EXPECT_EQ(doc["entry"]["target"], "jdl-dead");
  EXPECT_EQ(doc["entry"]["failures"], 3);
  EXPECT_TRUE(Has(doc["text"].get<std::string>(), "dead-lettered to jdl-dead after 3 failures"))
      << dead.out;
  testing::CommandRun next =
      Offsets("explain", "/jdl", {"--topic", "jdl", "--partition", "0", "--offset", "8"});
  EXPECT_TRUE(Has(next.out, "committed past")) << next.out;
  // Exactly one dead-letter entry, and the commits chain without gaps.
  std::vector<JournalEntry> journal = Journal("/jdl", "jdl");
  EXPECT_EQ(std::count_if(journal.begin(), journal.end(),
                          [](const auto& e) { return e.type == JournalEntryType::kDeadLetter; }),
            1);
  int64_t at = -1;
  for (const JournalEntry& e : journal) {
    if (e.type != JournalEntryType::kCommit) continue;
    EXPECT_EQ(e.from, at);
    at = e.to;
  }
  EXPECT_EQ(at, 20);
}

TEST_F(OffsetJournalTest, BadInputGetsOneClearLine) {
  testing::CommandRun missing = Offsets("history", "/nowhere", {});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(Has(missing.err, "no offsets and no journal under /nowhere/spout")) << missing.err;
  testing::CommandRun since = Offsets("history", "/nowhere", {"--since", "yesterday"});
  EXPECT_EQ(since.exit_code, 2);
  EXPECT_TRUE(Has(since.err, "--since: expected an ISO-8601 time")) << since.err;
  testing::CommandRun no_offset = Offsets("explain", "/nowhere", {"--topic", "t", "--partition",
                                                                  "0"});
  EXPECT_NE(no_offset.exit_code, 0);
  EXPECT_TRUE(Has(no_offset.err, "--offset")) << no_offset.err;
}

TEST_F(OffsetJournalTest, OneMultiPerCommitAndTheJournalStaysNearItsBound) {
  auto store = Store("/jbound", 20);
  ASSERT_NE(store, nullptr);
  store->SetAssignment({{"jstore", 0}});
  uint64_t acq = 0;
  ASSERT_TRUE(Await(*store, OffsetStoreUpdate::Kind::kAcquired, &acq));
  for (int64_t i = 1; i <= 60; ++i) {
    store->RequestCommit({Commit(acq, i * 10)});
    ASSERT_TRUE(Await(*store, OffsetStoreUpdate::Kind::kCommitted, nullptr, i * 10)) << i;
  }
  // Each commit was one multi carrying its entry; trimming is separate.
  EXPECT_EQ(store->multi_count(), 60);
  EXPECT_GT(store->journal_trim_count(), 0);
  const std::string dir = JournalDirPath("/jbound", "spout", "jstore", 0, false);
  size_t size = 0;
  ASSERT_TRUE(testing::Eventually(seconds(10), [&] {
    auto children = client_->Children(dir);
    size = children.ok() ? children->size() : 0;
    return size >= 20 && size <= 22;
  })) << size;
  std::vector<JournalEntry> journal = Journal("/jbound", "jstore");
  ASSERT_FALSE(journal.empty());
  EXPECT_EQ(journal.back().type, JournalEntryType::kCommit);
  EXPECT_EQ(journal.back().from, 590);
  EXPECT_EQ(journal.back().to, 600);
  EXPECT_EQ(journal.back().owner, "topo-1-100:kafka:1");
  EXPECT_EQ(journal.back().guarantee, "AT_LEAST_ONCE");
  store->Close(seconds(2));
}

TEST_F(OffsetJournalTest, FencedCommitLeavesNoEntryAndQueuedEntriesRideTheCommit) {
  auto a = Store("/jfence", 1000);
  ASSERT_NE(a, nullptr);
  a->SetAssignment({{"jstore", 0}});
  uint64_t acq = 0;
  ASSERT_TRUE(Await(*a, OffsetStoreUpdate::Kind::kAcquired, &acq));
  OffsetCommit first = Commit(acq, 10);
  JournalEntry reset;
  reset.type = JournalEntryType::kReset;
  reset.from = 2;
  reset.to = 6;
  reset.reason = "test reset";
  first.journal.push_back(reset);
  a->RequestCommit({first});
  ASSERT_TRUE(Await(*a, OffsetStoreUpdate::Kind::kCommitted, nullptr, 10));
  ASSERT_TRUE(
      zk_->ExpireSession(a->session()->session_id(), a->session()->session_password()).ok());
  a->RequestCommit({Commit(acq, 15)});  // the zombie's commit: fenced
  ASSERT_TRUE(Await(*a, OffsetStoreUpdate::Kind::kLost, nullptr));
  std::vector<JournalEntry> journal = Journal("/jfence", "jstore");
  // Acquired, reset, commit to 10 (then perhaps the re-acquisition on the new session).
  ASSERT_GE(journal.size(), 3u);
  EXPECT_EQ(journal[0].type, JournalEntryType::kAcquired);
  EXPECT_EQ(journal[1].type, JournalEntryType::kReset);
  EXPECT_EQ(journal[1].owner, "topo-1-100:kafka:1");  // stamped by the store
  EXPECT_EQ(journal[2].type, JournalEntryType::kCommit);
  EXPECT_EQ(journal[2].to, 10);
  for (const JournalEntry& e : journal) EXPECT_NE(e.to, 15);
  EXPECT_EQ(StoredOffset(*client_, OffsetNodePath("/jfence", "spout", "jstore", 0, false)), 10);
  a->Close(seconds(2));
}

}  // namespace
}  // namespace tempest::spout
