// KafkaSpout against a real ZooKeeper (standalone) and DevKafka over TCP,
// driven directly with a recording collector.
#include "spout/kafka/kafka_spout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"
#include "common/kafka/kafka_reader.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/zk_offset_store.h"
#include "tests/integration/spout/spout_harness.h"
#include "tests/integration/spout/spout_cluster_fixture.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::spout {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::DevKafka;
using testing::SpoutUnderTest;
using testing::StoredOffset;
using testing::ZkEnsemble;

using testing::NumberedRecords;

class KafkaSpoutTest : public testing::SpoutClusterTest<1> {
 protected:
  void SetUp() override {
    client_ = ConnectClient(seconds(20));
    ASSERT_NE(client_, nullptr);
  }

  // A tempest.KafkaSpout with the test's cluster and `extra` properties.
  std::unique_ptr<SpoutUnderTest> Spout(const std::string& topics, const std::string& root,
                                        api::ValueMap extra = {}, int index = 0, int count = 1,
                                        const std::string& topology_id = "topo-1-100") {
    api::ComponentArgs args = KafkaSpoutArgs(topics, root, extra);
    auto config = ParseKafkaSpoutArgs(args);
    EXPECT_TRUE(config.ok()) << config.status();
    return Open(std::move(*config), index, count, topology_id);
  }

  std::unique_ptr<SpoutUnderTest> Open(KafkaSpoutConfig config, int index = 0, int count = 1,
                                       const std::string& topology_id = "topo-1-100") {
    auto t = std::make_unique<SpoutUnderTest>();
    t->spout = std::make_unique<KafkaSpout>(std::move(config));
    api::TopologyContext ctx = testing::SpoutContext(TopologyConfig(), index, count, topology_id);
    absl::Status s = t->spout->Open(ctx.config(), ctx, t->collector);
    EXPECT_TRUE(s.ok()) << s;
    return t;
  }

  void WriteLegacyOffset(const std::string& path, int64_t offset, const std::string& topology_id,
                         const std::string& topic, int partition) {
    StormKafkaOffset o{topology_id, "legacy", offset, partition, "old-broker", 9092, topic};
    ASSERT_TRUE(client_->EnsurePath(path.substr(0, path.rfind('/'))).ok());
    auto st = client_->Create(path, EncodeStormKafkaOffset(o));
    if (absl::IsAlreadyExists(st.status())) {
      ASSERT_TRUE(client_->Set(path, EncodeStormKafkaOffset(o)).ok());
    } else {
      ASSERT_TRUE(st.ok()) << st.status();
    }
  }

  std::string OffsetPath(const std::string& root, const std::string& topic, int p) {
    return OffsetNodePath(root, "spout", topic, p, false);
  }

  std::unique_ptr<coord::ZkSession> client_;
};


TEST_F(KafkaSpoutTest, ResumesFromOffsetsWrittenByLegacyClientAndWritesLegacyJson) {
  ASSERT_TRUE(kafka_->CreateTopic("legacy", 2).ok());
  ASSERT_TRUE(kafka_->Produce("legacy", 0, NumberedRecords(0, 100)).ok());
  ASSERT_TRUE(kafka_->Produce("legacy", 1, NumberedRecords(0, 100)).ok());
  // An independent client (kazoo) writes offsets exactly as storm-kafka did.
  const std::string hosts = zk_->ConnectString();
  auto [rc, out] = testing::RunKazoo(absl::StrCat(
      "from kazoo.client import KazooClient\n"
      "import json\n"
      "zk = KazooClient(hosts='",
      hosts, "'); zk.start()\n",
      "for p, off in ((0, 40), (1, 70)):\n"
      "    doc = {'topology': {'id': 'storm-topo-7-1500000000', 'name': 'storm-topo'},\n"
      "           'offset': off, 'partition': p, 'broker': {'host': 'old', 'port': 9092},\n"
      "           'topic': 'legacy'}\n"
      "    zk.create('/legacy/spout/partition_%d' % p, json.dumps(doc).encode(), makepath=True)\n"
      "zk.stop()\n"));
  ASSERT_EQ(rc, 0) << out;

  auto t = Spout("legacy", "/legacy");
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] {
    return StoredOffset(*client_, OffsetPath("/legacy", "legacy", 0)) == 100 &&
           StoredOffset(*client_, OffsetPath("/legacy", "legacy", 1)) == 100;
  }));
  // Resumed exactly where the legacy offsets pointed: nothing before them.
  EXPECT_EQ(*t->Unique(0).begin(), 40);
  EXPECT_EQ(*t->Unique(1).begin(), 70);
  EXPECT_EQ(t->Unique(0).size(), 60u);
  EXPECT_EQ(t->Unique(1).size(), 30u);
  t->spout->Close();

  // Our nodes parse with kazoo + json, with storm-kafka's fields.
  auto [rc2, out2] = testing::RunKazoo(absl::StrCat(
      "from kazoo.client import KazooClient\n"
      "import json\n"
      "zk = KazooClient(hosts='",
      hosts, "'); zk.start()\n",
      "for p in (0, 1):\n"
      "    data, _ = zk.get('/legacy/spout/partition_%d' % p)\n"
      "    d = json.loads(data.decode())\n"
      "    print(d['partition'], d['offset'], d['topology']['id'], d['topology']['name'],\n"
      "          d['topic'], d['broker']['host'] != '', d['broker']['port'] > 0)\n"
      "print(sorted(zk.get_children('/legacy/spout')))\n"
      "zk.stop()\n"));
  ASSERT_EQ(rc2, 0) << out2;
  EXPECT_NE(out2.find("0 100 topo-1-100 topo legacy True True"), std::string::npos) << out2;
  EXPECT_NE(out2.find("1 100 topo-1-100 topo legacy True True"), std::string::npos) << out2;
  // Owner nodes and the offset journal live outside the partition_N names
  // (owner nodes are gone after Close).
  EXPECT_NE(out2.find("['@journal', '@owners', 'partition_0', 'partition_1']"), std::string::npos)
      << out2;
}

TEST_F(KafkaSpoutTest, AtMostOnceCommitsBeforeEmitting) {
  ASSERT_TRUE(kafka_->CreateTopic("amo", 1).ok());
  ASSERT_TRUE(kafka_->Produce("amo", 0, NumberedRecords(0, 30)).ok());
  auto t = Spout("amo", "/amo", {{"processingGuarantee", "AT_MOST_ONCE"}});
  int violations = 0, checked = 0;
  t->collector.on_emit = [&](const testing::RecordingCollector::Emitted& e) {
    ++checked;
    EXPECT_TRUE(e.id.is_nil()) << "AT_MOST_ONCE emits untracked tuples";
    // The commit covering this record is already in ZooKeeper.
    if (StoredOffset(*client_, OffsetPath("/amo", "amo", 0)) <= SpoutUnderTest::OffsetOf(e)) {
      ++violations;
    }
  };
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return t->Unique(0).size() == 30; }));
  EXPECT_EQ(checked, 30);
  EXPECT_EQ(violations, 0);
  EXPECT_EQ(StoredOffset(*client_, OffsetPath("/amo", "amo", 0)), 30);
}

// AT_MOST_ONCE loses, on a crash, whatever it committed but had not emitted.
// Fetching must therefore wait until the fetched records are out: the
// committed offset may run ahead of the emitted position by at most one poll
// batch (2048 records, kPollBatch in kafka_spout.cc), never by the partition.
TEST_F(KafkaSpoutTest, AtMostOnceCommitsAtMostOnePollBatchAheadOfEmitting) {
  constexpr int kRecords = 20000;
  constexpr int64_t kPollBatch = 2048;
  ASSERT_TRUE(kafka_->CreateTopic("amo-window", 1).ok());
  ASSERT_TRUE(kafka_->Produce("amo-window", 0, NumberedRecords(0, kRecords)).ok());
  auto t = Spout("amo-window", "/amo-window", {{"processingGuarantee", "AT_MOST_ONCE"}});
  int64_t widest = 0;
  t->collector.on_emit = [&](const testing::RecordingCollector::Emitted& e) {
    (void)e;
    const KafkaSpout::PartitionStats s = t->spout->Stats()[TopicPartition{"amo-window", 0}];
    widest = std::max(widest, s.committed - s.emitted_to);
  };
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return t->Unique(0).size() == kRecords; }));
  std::printf("AT_MOST_ONCE: committed ran at most %lld offsets ahead of emitting\n",
              static_cast<long long>(widest));
  EXPECT_LE(widest, kPollBatch);
}

TEST_F(KafkaSpoutTest, SessionExpiryReacquiresRereadsAndContinues) {
  ASSERT_TRUE(kafka_->CreateTopic("expiry", 1).ok());
  ASSERT_TRUE(kafka_->Produce("expiry", 0, NumberedRecords(0, 50)).ok());
  auto t = Spout("expiry", "/expiry");
  const std::string path = OffsetPath("/expiry", "expiry", 0);
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return StoredOffset(*client_, path) == 50; }));
  coord::ZkSession* session = t->spout->offset_store()->session();
  const int64_t old_session = session->session_id();
  ASSERT_TRUE(zk_->ExpireSession(old_session, session->session_password()).ok());
  ASSERT_TRUE(kafka_->Produce("expiry", 0, NumberedRecords(50, 100)).ok());
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] {
    return StoredOffset(*client_, path) == 100 &&
           t->spout->Stats()[TopicPartition{"expiry", 0}].acquisitions >= 2;
  }));
  EXPECT_NE(session->session_id(), old_session);
  EXPECT_EQ(t->Unique(0).size(), 100u);  // nothing lost
  const size_t dups = t->offsets[0].size() - t->Unique(0).size();
  std::printf("session expiry: emitted %zu, unique 100, duplicates %zu, lost 0\n",
              t->offsets[0].size(), dups);
  // The owner node is ours again, on the new session.
  auto owner = client_->Get(OwnerNodePath("/expiry", "spout", "expiry", 0, false));
  ASSERT_TRUE(owner.ok());
  EXPECT_EQ(owner->stat.ephemeral_owner, session->session_id());
}

TEST_F(KafkaSpoutTest, ZombieStoreCommitIsFencedAndOffsetNeverGoesBack) {
  const TopicPartition tp{"zombie", 0};
  auto make = [&](const std::string& who) {
    ZkOffsetStore::Options o;
    o.connect_string = zk_->ConnectString();
    o.zk_config.session_timeout = milliseconds(4000);
    o.zk_root = "/zombie";
    o.spout_id = "spout";
    o.owner_description = who;
    auto s = ZkOffsetStore::Create(o);
    EXPECT_TRUE(s.ok());
    return std::move(*s);
  };
  auto acquired = [](ZkOffsetStore& s, std::vector<OffsetStoreUpdate>* log) {
    uint64_t acq = 0;
    testing::Eventually(seconds(30), [&] {
      for (auto& u : s.TakeUpdates()) {
        if (u.kind == OffsetStoreUpdate::Kind::kAcquired) acq = u.acquisition;
        log->push_back(u);
      }
      return acq != 0;
    });
    return acq;
  };
  auto commit = [&](ZkOffsetStore& s, uint64_t acq, int64_t offset) {
    OffsetCommit c;
    c.partition = tp;
    c.acquisition = acq;
    c.state = StormKafkaOffset{"topo-1-100", "topo", offset, 0, "h", 1, "zombie"};
    s.RequestCommit({c});
  };
  auto a = make("a");
  a->SetAssignment({tp});
  std::vector<OffsetStoreUpdate> a_log, b_log;  // what each store reported
  const uint64_t acq_a = acquired(*a, &a_log);
  ASSERT_NE(acq_a, 0u);
  commit(*a, acq_a, 10);
  const std::string path = OffsetNodePath("/zombie", "spout", "zombie", 0, false);
  ASSERT_TRUE(testing::Eventually(seconds(10), [&] { return StoredOffset(*client_, path) == 10; }));

  // B wants the same partition but must wait for A's owner node.
  auto b = make("b");
  b->SetAssignment({tp});
  // A's session expires while A keeps running (a GC pause, a partition...).
  ASSERT_TRUE(
      zk_->ExpireSession(a->session()->session_id(), a->session()->session_password()).ok());
  // The zombie commits under its old ownership: rejected, never written.
  commit(*a, acq_a, 15);
  bool a_committed_15 = false, a_lost = false;
  uint64_t acq_a2 = 0, acq_b = 0;
  ASSERT_TRUE(testing::Eventually(seconds(30), [&] {
    for (auto& u : a->TakeUpdates()) {
      if (u.kind == OffsetStoreUpdate::Kind::kCommitted && u.offset == 15) a_committed_15 = true;
      if (u.kind == OffsetStoreUpdate::Kind::kLost) a_lost = true;
      if (u.kind == OffsetStoreUpdate::Kind::kAcquired) acq_a2 = u.acquisition;
    }
    for (auto& u : b->TakeUpdates()) {
      if (u.kind == OffsetStoreUpdate::Kind::kAcquired) acq_b = u.acquisition;
      b_log.push_back(u);
    }
    return a_lost && (acq_a2 != 0 || acq_b != 0);
  }));
  EXPECT_FALSE(a_committed_15);
  EXPECT_EQ(StoredOffset(*client_, path), 10);
  EXPECT_FALSE(acq_a2 != 0 && acq_b != 0) << "never two owners at once";
  if (acq_a2 != 0) {
    // A re-acquired properly on its new session: a legitimate owner again.
    commit(*a, acq_a2, 20);
    ASSERT_TRUE(
        testing::Eventually(seconds(10), [&] { return StoredOffset(*client_, path) == 20; }));
    a->Close(seconds(2));  // A goes away; B takes over
    ASSERT_TRUE(testing::Eventually(seconds(30), [&] {
      for (auto& u : b->TakeUpdates()) {
        if (u.kind == OffsetStoreUpdate::Kind::kAcquired) acq_b = u.acquisition;
        b_log.push_back(u);
      }
      return acq_b != 0;
    }));
  }
  ASSERT_NE(acq_b, 0u);
  const int64_t b_read = b_log.back().stored->offset;
  EXPECT_GE(b_read, 10);
  commit(*b, acq_b, 25);
  ASSERT_TRUE(testing::Eventually(seconds(10), [&] { return StoredOffset(*client_, path) == 25; }));
  // Stale epochs and lower offsets never land.
  commit(*a, acq_a, 12);
  commit(*b, acq_b, 18);
  EXPECT_FALSE(
      testing::Eventually(milliseconds(500), [&] { return StoredOffset(*client_, path) != 25; }));
  a->Close(seconds(2));
  b->Close(seconds(2));
}

TEST_F(KafkaSpoutTest, TwoSpoutsOnOnePartitionZombieNeverMovesOffsetBackwards) {
  ASSERT_TRUE(kafka_->CreateTopic("twin", 1).ok());
  ASSERT_TRUE(kafka_->Produce("twin", 0, NumberedRecords(0, 300)).ok());
  const std::string path = OffsetPath("/twin", "twin", 0);
  auto a = Spout("twin", "/twin");
  int64_t last_seen = -1;
  bool backwards = false;
  auto watch = [&] {
    int64_t now = StoredOffset(*client_, path);
    if (now < last_seen) backwards = true;
    last_seen = std::max(last_seen, now);
  };
  // A processes some, holding the rest pending so it stays "busy".
  a->decide = [](const auto& e) { return SpoutUnderTest::OffsetOf(e) < 120; };
  a->hold = false;
  ASSERT_TRUE(a->RunUntil(seconds(60), [&] {
    watch();
    return StoredOffset(*client_, path) == 120;
  }));
  a->hold = true;  // A keeps emitting but never completes anything now
  auto b = Spout("twin", "/twin");
  for (int i = 0; i < 20; ++i) {
    a->Step();
    b->Step();
  }
  EXPECT_TRUE(b->offsets.empty()) << "B must wait while A owns the partition";
  // A becomes a zombie: its session expires while it keeps running. From
  // then on both process normally; whichever re-acquires the partition (B,
  // or A on its new session) must resume from the last commit.
  coord::ZkSession* sa = a->spout->offset_store()->session();
  ASSERT_TRUE(zk_->ExpireSession(sa->session_id(), sa->session_password()).ok());
  const size_t a_before = a->offsets[0].size();
  a->hold = false;
  a->decide = nullptr;
  ASSERT_TRUE(b->RunUntil(seconds(60), [&] {
    a->Step();
    watch();
    return StoredOffset(*client_, path) == 300;
  }));
  for (int i = 0; i < 200; ++i) {
    a->Step();
    watch();
  }
  EXPECT_FALSE(backwards);
  EXPECT_EQ(StoredOffset(*client_, path), 300);
  std::set<int64_t> after(b->Unique(0));
  for (size_t i = a_before; i < a->offsets[0].size(); ++i) after.insert(a->offsets[0][i]);
  // Re-emitted from the last commit (120), nothing before it, nothing lost.
  // (A's in-flight emits from before the expiry are not counted here.)
  ASSERT_FALSE(after.empty());
  EXPECT_GE(*after.begin(), 120);
  for (int64_t o = 120; o < 300; ++o) EXPECT_TRUE(after.contains(o)) << o;
  std::printf(
      "zombie: A emitted %zu (%zu after expiry), B emitted %zu; stored offset monotonic, "
      "lost 0\n",
      a->offsets[0].size(), a->offsets[0].size() - a_before, b->offsets[0].size());
}

TEST_F(KafkaSpoutTest, RetentionPastCommittedOffsetAppliesPolicyAndCountsLoss) {
  ASSERT_TRUE(kafka_->CreateTopic("retained", 1).ok());
  // DevKafka keeps about 5 MiB per partition: 8 MiB pushes the start up.
  std::vector<DevKafka::Record> many;
  many.reserve(8000);
  for (int i = 0; i < 8000; ++i) many.push_back({"", std::string(1024, 'x')});
  ASSERT_TRUE(kafka_->Produce("retained", 0, many, seconds(120)).ok());
  auto marks = kafka_->Watermarks("retained", 0);
  ASSERT_TRUE(marks.ok());
  const int64_t low = marks->first, high = marks->second;
  ASSERT_GT(low, 5) << "DevKafka retention should have dropped the oldest records";
  for (const char* root : {"/ret-earliest", "/ret-latest", "/ret-fail"}) {
    WriteLegacyOffset(OffsetPath(root, "retained", 0), 5, "topo-1-100", "retained", 0);
  }

  auto early = Spout("retained", "/ret-earliest");
  ASSERT_TRUE(early->RunUntil(seconds(120), [&] {
    return StoredOffset(*client_, OffsetPath("/ret-earliest", "retained", 0)) == high;
  }));
  auto stats = early->spout->Stats()[TopicPartition{"retained", 0}];
  EXPECT_EQ(stats.lost, low - 5);
  EXPECT_EQ(*early->Unique(0).begin(), low);
  std::printf("retention earliest: committed 5, log [%ld, %ld): lost %ld counted\n",
              static_cast<long>(low), static_cast<long>(high), static_cast<long>(stats.lost));
  early->spout->Close();

  auto latest = Spout("retained", "/ret-latest", {{"outOfRangePolicy", "latest"}});
  ASSERT_TRUE(latest->RunUntil(seconds(60), [&] {
    return latest->spout->Stats()[TopicPartition{"retained", 0}].lost > 0 &&
           StoredOffset(*client_, OffsetPath("/ret-latest", "retained", 0)) == high;
  }));
  EXPECT_EQ((latest->spout->Stats()[TopicPartition{"retained", 0}].lost), high - 5);
  EXPECT_TRUE(latest->offsets.empty());
  latest->spout->Close();

  auto fail = Spout("retained", "/ret-fail", {{"outOfRangePolicy", "fail"}});
  ASSERT_TRUE(fail->RunUntil(seconds(60), [&] {
    return fail->spout->Stats()[TopicPartition{"retained", 0}].failed;
  }));
  ASSERT_FALSE(fail->collector.errors.empty());
  EXPECT_TRUE(absl::IsDataLoss(fail->collector.errors[0])) << fail->collector.errors[0];
  EXPECT_TRUE(fail->offsets.empty());
  EXPECT_EQ(StoredOffset(*client_, OffsetPath("/ret-fail", "retained", 0)), 5);
}

TEST_F(KafkaSpoutTest, TupleFailingForeverGoesToDeadLetterTopicAndCommitsMovePast) {
  ASSERT_TRUE(kafka_->CreateTopic("dl", 1).ok());
  ASSERT_TRUE(kafka_->CreateTopic("dl-dead", 1).ok());
  ASSERT_TRUE(kafka_->Produce("dl", 0, NumberedRecords(0, 20)).ok());
  auto t = Spout("dl", "/dl",
                 {{"deadLetterTopic", "dl-dead"}, {"retryLimit", 3}, {"retryInitialDelayMs", 1}});
  t->decide = [](const auto& e) { return SpoutUnderTest::OffsetOf(e) != 7; };
  const std::string path = OffsetPath("/dl", "dl", 0);
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return StoredOffset(*client_, path) == 20; }));
  EXPECT_EQ((t->spout->Stats()[TopicPartition{"dl", 0}].dead_lettered), 1);
  EXPECT_EQ(std::count(t->offsets[0].begin(), t->offsets[0].end(), 7), 3);
  // The record really is in the dead-letter topic.
  kafka::KafkaReaderOptions ro;
  ro.bootstrap_servers = kafka_->bootstrap_servers();
  auto reader = kafka::KafkaReader::Create(ro);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE((*reader)->Start({"dl-dead", 0}, 0).ok());
  std::vector<std::string> values;
  testing::Eventually(seconds(20), [&] {
    (*reader)->Poll(100, milliseconds(50),
                    [&](const kafka::KafkaRecord& r) { values.emplace_back(r.value); });
    return !values.empty();
  });
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0], "7");
}

TEST_F(KafkaSpoutTest, WithoutDeadLetterTopicAFailingTupleIsNeverAckedPast) {
  ASSERT_TRUE(kafka_->CreateTopic("stuck", 1).ok());
  ASSERT_TRUE(kafka_->Produce("stuck", 0, NumberedRecords(0, 20)).ok());
  // Past the limit retries come every retryDelayMaxMs (short here).
  auto t = Spout("stuck", "/stuck",
                 {{"retryLimit", 2}, {"retryInitialDelayMs", 1}, {"retryDelayMaxMs", 20}});
  t->decide = [](const auto& e) { return SpoutUnderTest::OffsetOf(e) != 4; };
  const std::string path = OffsetPath("/stuck", "stuck", 0);
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] {
    return StoredOffset(*client_, path) == 4 &&
           std::count(t->offsets[0].begin(), t->offsets[0].end(), 4) >= 5;
  }));
  for (int i = 0; i < 50; ++i) t->Step();
  EXPECT_EQ(StoredOffset(*client_, path), 4);  // blocked by 4, not skipped
  // The stall is reported once as a component error, not only logged.
  ASSERT_EQ(t->collector.errors.size(), 1u);
  EXPECT_TRUE(absl::IsFailedPrecondition(t->collector.errors[0])) << t->collector.errors[0];
  EXPECT_NE(t->collector.errors[0].message().find("no deadLetterTopic"), absl::string_view::npos)
      << t->collector.errors[0];
}

TEST_F(KafkaSpoutTest, StopAtEndIsExhaustedOnceEverythingIsCommitted) {
  ASSERT_TRUE(kafka_->CreateTopic("finite", 2).ok());
  ASSERT_TRUE(kafka_->Produce("finite", 0, NumberedRecords(0, 40)).ok());
  ASSERT_TRUE(kafka_->Produce("finite", 1, NumberedRecords(0, 25)).ok());
  auto t = Spout("finite", "/finite", {{"stopAtEnd", true}});
  EXPECT_FALSE(t->spout->IsExhausted());
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return t->spout->IsExhausted(); }));
  EXPECT_EQ(StoredOffset(*client_, OffsetPath("/finite", "finite", 0)), 40);
  EXPECT_EQ(StoredOffset(*client_, OffsetPath("/finite", "finite", 1)), 25);
  EXPECT_EQ(t->Unique(0).size(), 40u);
  EXPECT_EQ(t->Unique(1).size(), 25u);
  // Records produced after activation are not part of this finite run.
  ASSERT_TRUE(kafka_->Produce("finite", 0, NumberedRecords(40, 50)).ok());
  for (int i = 0; i < 500; ++i) t->Step();
  EXPECT_EQ(t->Unique(0).size(), 40u);
  EXPECT_TRUE(t->spout->IsExhausted());
}

TEST_F(KafkaSpoutTest, MalformedStoredOffsetIsReportedNotGuessed) {
  ASSERT_TRUE(kafka_->CreateTopic("garbled", 1).ok());
  ASSERT_TRUE(kafka_->Produce("garbled", 0, NumberedRecords(0, 10)).ok());
  const std::string path = OffsetPath("/garbled", "garbled", 0);
  ASSERT_TRUE(client_->EnsurePath("/garbled/spout").ok());
  ASSERT_TRUE(client_->Create(path, "{not json").ok());
  auto t = Spout("garbled", "/garbled");
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] { return !t->collector.errors.empty(); }));
  EXPECT_TRUE(absl::IsDataLoss(t->collector.errors[0])) << t->collector.errors[0];
  EXPECT_TRUE(t->offsets.empty());  // did not restart from startOffsetTime
  // An operator repairs the node: the spout picks it up.
  ASSERT_TRUE(client_->Set(path, EncodeStormKafkaOffset({"x", "x", 6, 0, "", 0, "garbled"})).ok());
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] { return StoredOffset(*client_, path) == 10; }));
  EXPECT_EQ(*t->Unique(0).begin(), 6);
}

TEST_F(KafkaSpoutTest, CleanCloseCommitsWhatIsComplete) {
  ASSERT_TRUE(kafka_->CreateTopic("closing", 1).ok());
  ASSERT_TRUE(kafka_->Produce("closing", 0, NumberedRecords(0, 25)).ok());
  // A commit interval longer than the test: only Close can commit.
  auto t = Spout("closing", "/closing", {{"stateUpdateIntervalMs", 600000}});
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] { return t->Unique(0).size() == 25; }));
  const std::string path = OffsetPath("/closing", "closing", 0);
  EXPECT_EQ(StoredOffset(*client_, path), -1);
  t->spout->Close();
  EXPECT_EQ(StoredOffset(*client_, path), 25);
  // ... and released ownership: the owner node is gone.
  EXPECT_TRUE(absl::IsNotFound(
      client_->Get(OwnerNodePath("/closing", "spout", "closing", 0, false)).status()));
}

TEST_F(KafkaSpoutTest, DeactivateCommits) {
  ASSERT_TRUE(kafka_->CreateTopic("deact", 1).ok());
  ASSERT_TRUE(kafka_->Produce("deact", 0, NumberedRecords(0, 12)).ok());
  auto t = Spout("deact", "/deact", {{"stateUpdateIntervalMs", 600000}});
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] { return t->Unique(0).size() == 12; }));
  t->spout->Deactivate();
  const std::string path = OffsetPath("/deact", "deact", 0);
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] { return StoredOffset(*client_, path) == 12; }));
}

TEST_F(KafkaSpoutTest, MetricsShowLagCommittedAndTheOffsetBlockingCommits) {
  ASSERT_TRUE(kafka_->CreateTopic("metered", 1).ok());
  ASSERT_TRUE(kafka_->Produce("metered", 0, NumberedRecords(0, 10)).ok());
  auto t = Spout("metered", "/metered", {{"retryInitialDelayMs", 50}});
  t->decide = [](const auto& e) { return SpoutUnderTest::OffsetOf(e) != 3; };
  auto gauge = [&](const std::string& name) -> int64_t {
    for (const auto& m : core::MetricsRegistry::Global().Snapshot()) {
      if (m.name == name && m.labels.count("topic") && m.labels.at("topic") == "metered") {
        return m.value;
      }
    }
    return -100;
  };
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] {
    return gauge("tempest_kafka_spout_committed_offset") == 3 &&
           gauge("tempest_kafka_spout_commit_blocked_offset") == 3 &&
           gauge("tempest_kafka_spout_lag") == 7;
  }));
  EXPECT_GE(gauge("tempest_kafka_spout_pending"), 1);
  EXPECT_EQ(gauge("tempest_kafka_spout_latest_emitted_offset"), 9);
  EXPECT_EQ(gauge("tempest_kafka_spout_log_end_offset"), 10);
  // Lag in time: records written at least 1.1 s after offset 3 (which keeps
  // failing) make the partition at least that far behind.
  const auto written = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - written < milliseconds(1100)) {
    std::this_thread::sleep_for(milliseconds(50));
  }
  ASSERT_TRUE(kafka_->Produce("metered", 0, NumberedRecords(10, 15)).ok());
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] {
    return gauge("tempest_kafka_spout_latest_emitted_offset") == 14 &&
           gauge("tempest_kafka_spout_lag_ms") >= 1100;
  })) << "lag_ms " << gauge("tempest_kafka_spout_lag_ms");
  // Once offset 3 passes, the partition catches up: no lag in records or time.
  t->decide = [](const auto&) { return true; };
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] {
    return gauge("tempest_kafka_spout_committed_offset") == 15 &&
           gauge("tempest_kafka_spout_lag_ms") == 0 && gauge("tempest_kafka_spout_lag") == 0;
  })) << "lag_ms " << gauge("tempest_kafka_spout_lag_ms");
}

// A partition held back (its uncommitted limit reached behind an offset
// that keeps failing) fetches nothing, so fetch responses no longer bring
// its log end; its gauges still follow the log: the spout asks the leader
// now and then, and its lag counts every waiting record.
TEST_F(KafkaSpoutTest, HeldBackPartitionGaugesFollowTheLogEnd) {
  ASSERT_TRUE(kafka_->CreateTopic("held", 1).ok());
  ASSERT_TRUE(kafka_->Produce("held", 0, NumberedRecords(0, 10)).ok());
  auto t = Spout("held", "/held", {{"maxUncommittedOffsets", 5}, {"retryInitialDelayMs", 50}});
  t->decide = [](const auto& e) { return SpoutUnderTest::OffsetOf(e) != 0; };
  auto gauge = [&](const std::string& name) -> int64_t {
    for (const auto& m : core::MetricsRegistry::Global().Snapshot()) {
      if (m.name == name && m.labels.count("topic") && m.labels.at("topic") == "held") {
        return m.value;
      }
    }
    return -100;
  };
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] { return gauge("tempest_kafka_spout_paused") == 1; }));
  ASSERT_TRUE(kafka_->Produce("held", 0, NumberedRecords(10, 40)).ok());
  ASSERT_TRUE(t->RunUntil(seconds(30), [&] {
    return gauge("tempest_kafka_spout_log_end_offset") == 40 &&
           gauge("tempest_kafka_spout_lag") == 40;
  })) << "log end " << gauge("tempest_kafka_spout_log_end_offset") << ", lag "
      << gauge("tempest_kafka_spout_lag");
  EXPECT_EQ(gauge("tempest_kafka_spout_paused"), 1);
}

TEST_F(KafkaSpoutTest, PartitionRefreshPicksUpNewPartitions) {
  ASSERT_TRUE(kafka_->CreateTopic("grow", 2).ok());
  ASSERT_TRUE(kafka_->Produce("grow", 0, NumberedRecords(0, 10)).ok());
  ASSERT_TRUE(kafka_->Produce("grow", 1, NumberedRecords(0, 10)).ok());
  // Kafka's registry (ZkHosts) first lists only partition 0.
  std::vector<std::string> hp = absl::StrSplit(kafka_->bootstrap_servers(), ',');
  std::vector<std::string> host_port = absl::StrSplit(hp[0], ':');
  ASSERT_TRUE(client_->EnsurePath("/gbrokers/ids").ok());
  ASSERT_TRUE(client_
                  ->Create("/gbrokers/ids/1", absl::StrCat("{\"host\":\"", host_port[0],
                                                           "\",\"port\":", host_port[1], "}"))
                  .ok());
  ASSERT_TRUE(client_->EnsurePath("/gbrokers/topics/grow/partitions/0").ok());
  api::ValueMap hosts = {{"id", "hosts"},
                         {"className", "org.apache.storm.kafka.ZkHosts"},
                         {"constructorArgs", api::ValueList{zk_->ConnectString(), "/gbrokers"}},
                         {"properties", api::ValueMap{{"refreshFreqSecs", 1}}}};
  api::ValueMap spout_config = {
      {"id", "spoutConfig"},
      {"className", "org.apache.storm.kafka.SpoutConfig"},
      {"constructorArgs", api::ValueList{hosts, "grow", "/grow", "spout"}},
      {"properties", api::ValueMap{{"zkServers", api::ValueList{zk_->ConnectString()}},
                                   {"stateUpdateIntervalMs", 200}}}};
  api::ComponentArgs args;
  args.class_name = "org.apache.storm.kafka.KafkaSpout";
  args.id = api::ComponentId("kafka");
  args.constructor_args = {spout_config};
  auto config = ParseKafkaSpoutArgs(args);
  ASSERT_TRUE(config.ok()) << config.status();
  auto t = Open(*config);
  ASSERT_TRUE(t->RunUntil(
      seconds(30), [&] { return StoredOffset(*client_, OffsetPath("/grow", "grow", 0)) == 10; }));
  EXPECT_EQ(t->spout->Stats().size(), 1u);
  EXPECT_EQ(t->collector.emitted.size(), 10u);
  ASSERT_TRUE(client_->EnsurePath("/gbrokers/topics/grow/partitions/1").ok());
  ASSERT_TRUE(t->RunUntil(
      seconds(30), [&] { return StoredOffset(*client_, OffsetPath("/grow", "grow", 1)) == 10; }));
  EXPECT_EQ(t->spout->Stats().size(), 2u);
  EXPECT_EQ(t->collector.emitted.size(), 20u);
}

TEST_F(KafkaSpoutTest, TwoTasksSplitPartitionsLikeStormKafka) {
  ASSERT_TRUE(kafka_->CreateTopic("split", 3).ok());
  for (int p = 0; p < 3; ++p) ASSERT_TRUE(kafka_->Produce("split", p, NumberedRecords(0, 10)).ok());
  auto t0 = Spout("split", "/split", {}, 0, 2);
  auto t1 = Spout("split", "/split", {}, 1, 2);
  ASSERT_TRUE(t0->RunUntil(seconds(60), [&] {
    t1->Step();
    return t0->Unique(0).size() == 10 && t0->Unique(2).size() == 10 && t1->Unique(1).size() == 10;
  }));
  EXPECT_EQ(t0->offsets.count(1), 0u);
  EXPECT_EQ(t1->offsets.count(0), 0u);
  EXPECT_EQ(t1->offsets.count(2), 0u);
}

TEST_F(KafkaSpoutTest, LegacyStormFluxFormDiscoversBrokersThroughZkHosts) {
  ASSERT_TRUE(kafka_->CreateTopic("old", 1).ok());
  ASSERT_TRUE(kafka_->Produce("old", 0, NumberedRecords(0, 15)).ok());
  // Kafka's own registry, as brokers before KRaft wrote it.
  std::vector<std::string> hp = absl::StrSplit(kafka_->bootstrap_servers(), ',');
  std::vector<std::string> host_port = absl::StrSplit(hp[0], ':');
  ASSERT_TRUE(client_->EnsurePath("/kbrokers/ids").ok());
  ASSERT_TRUE(client_
                  ->Create("/kbrokers/ids/1", absl::StrCat("{\"host\":\"", host_port[0],
                                                           "\",\"port\":", host_port[1], "}"))
                  .ok());
  ASSERT_TRUE(client_->EnsurePath("/kbrokers/topics/old/partitions/0").ok());
  ASSERT_TRUE(
      client_->Create("/kbrokers/topics/old/partitions/0/state", "{\"leader\":1,\"isr\":[1]}")
          .ok());
  const std::string zk_port = zk_->ConnectString().substr(zk_->ConnectString().rfind(':') + 1);
  api::ValueMap string_scheme = {{"id", "s"},
                                 {"className", "org.apache.storm.kafka.StringScheme"},
                                 {"constructorArgs", api::ValueList{}},
                                 {"properties", api::ValueMap{}}};
  api::ValueMap multi = {{"id", "m"},
                         {"className", "org.apache.storm.spout.SchemeAsMultiScheme"},
                         {"constructorArgs", api::ValueList{string_scheme}},
                         {"properties", api::ValueMap{}}};
  api::ValueMap hosts = {{"id", "hosts"},
                         {"className", "org.apache.storm.kafka.ZkHosts"},
                         {"constructorArgs", api::ValueList{zk_->ConnectString(), "/kbrokers"}},
                         {"properties", api::ValueMap{}}};
  api::ValueMap spout_config = {
      {"id", "spoutConfig"},
      {"className", "org.apache.storm.kafka.SpoutConfig"},
      {"constructorArgs", api::ValueList{hosts, "old", "/oldroot", "spout"}},
      {"properties", api::ValueMap{{"scheme", multi},
                                   {"zkServers", api::ValueList{"127.0.0.1"}},
                                   {"zkPort", std::stoi(zk_port)},
                                   {"stateUpdateIntervalMs", 200},
                                   {"fetchMaxWait", 0}}}};
  api::ComponentArgs args;
  args.class_name = "org.apache.storm.kafka.KafkaSpout";
  args.id = api::ComponentId("kafka");
  args.constructor_args = {spout_config};
  auto made = api::ComponentRegistry::Global().CreateSpout(args);
  ASSERT_TRUE(made.ok()) << made.status();
  auto config = ParseKafkaSpoutArgs(args);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->bootstrap_servers.empty());
  auto t = Open(*config);
  const std::string path = OffsetPath("/oldroot", "old", 0);
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] { return StoredOffset(*client_, path) == 15; }));
  ASSERT_EQ(t->collector.emitted.size(), 15u);
  EXPECT_EQ(t->collector.emitted[3].values.size(), 1u);
  EXPECT_EQ(t->collector.emitted[3].values[0], api::Value("3"));  // field "str"
}

}  // namespace
}  // namespace tempest::spout
