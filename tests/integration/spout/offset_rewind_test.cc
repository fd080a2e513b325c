// Safe offset moves against a real ZooKeeper and DevKafka: `tempest offsets
// set` (dry run, refusals with the valid range, direct writes), the fenced
// rewind of a partition a running KafkaSpout owns, a fenced-out zombie owner,
// and a stored offset beyond the log end handled by the out-of-range policy.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/coord/zk_session.h"
#include "spout/kafka/kafka_spout.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/offset_rewind.h"
#include "tests/integration/spout/spout_cluster_fixture.h"
#include "tests/integration/spout/spout_harness.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/raw_zk_client.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::spout {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::CommandRun;
using testing::SpoutUnderTest;
using testing::StoredOffset;

class OffsetRewindTest : public testing::SpoutClusterTest<1> {
 protected:
  void SetUp() override {
    client_ = ConnectClient(seconds(20));
    ASSERT_NE(client_, nullptr);
  }

  std::unique_ptr<SpoutUnderTest> Spout(const std::string& topic, const std::string& root,
                                        api::ValueMap extra = {}) {
    auto config = ParseKafkaSpoutArgs(KafkaSpoutArgs(topic, root, extra));
    EXPECT_TRUE(config.ok()) << config.status();
    auto t = std::make_unique<SpoutUnderTest>();
    t->spout = std::make_unique<KafkaSpout>(std::move(*config));
    api::TopologyContext ctx = testing::SpoutContext(TopologyConfig());
    absl::Status s = t->spout->Open(ctx.config(), ctx, t->collector);
    EXPECT_TRUE(s.ok()) << s;
    return t;
  }

  void Topic(const std::string& name, int partitions, int per_partition) {
    ASSERT_TRUE(kafka_->CreateTopic(name, partitions).ok());
    for (int p = 0; p < partitions; ++p) {
      ASSERT_TRUE(kafka_->Produce(name, p, testing::NumberedRecords(0, per_partition)).ok());
    }
  }

  // `tempest offsets set` for spout id "spout" under `root`.
  CommandRun Set(const std::string& root, std::vector<std::string> args) {
    std::vector<std::string> argv = {testing::TempestBinary(), "offsets", "set", "--zk",
                                     zk_->ConnectString(), "--root", root, "--id", "spout"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::RunCommand(argv, dir_.File(absl::StrCat("set-", runs_++)), seconds(60));
  }

  static int Lines(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }

  std::unique_ptr<coord::ZkSession> client_;
  testing::TempDir dir_{"offset-rewind"};
  int runs_ = 0;
};

TEST_F(OffsetRewindTest, RefusedInputsGetOneLineAndDryRunChangesNothing) {
  const std::string root = "/refusals";
  ASSERT_NO_FATAL_FAILURE(Topic("refusals", 4, 400));
  const std::string bootstrap = kafka_->bootstrap_servers();
  const std::string node = OffsetNodePath(root, "spout", "refusals", 0, false);
  // The spout has stored nothing yet: writing its first offset takes --seed.
  CommandRun seed = Set(root, {"--topic", "refusals", "--partition", "0", "--offset", "100",
                               "--seed", "--execute"});
  ASSERT_EQ(seed.exit_code, 0) << seed.out << seed.err;
  // An independent client sees the write.
  auto raw = testing::RawZkClient::Connect(zk_->ConnectString(), 10000, seconds(20));
  ASSERT_NE(raw, nullptr);
  auto stored = [&] {
    auto [rc, data] = raw->Get(node);
    auto decoded = DecodeStormKafkaOffset(data);
    return rc == 0 && decoded.ok() ? decoded->offset : -1;
  };
  ASSERT_EQ(stored(), 100);

  CommandRun beyond = Set(root, {"--topic", "refusals", "--partition", "0", "--offset", "99999",
                                 "--bootstrap", bootstrap, "--execute"});
  EXPECT_EQ(beyond.exit_code, 1);
  EXPECT_EQ(Lines(beyond.err), 1) << beyond.err;
  EXPECT_NE(beyond.err.find("valid offsets are [0, 400]"), std::string::npos) << beyond.err;

  CommandRun missing = Set(root, {"--topic", "refusals", "--partition", "9", "--offset", "1",
                                  "--bootstrap", bootstrap, "--execute"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(Lines(missing.err), 1) << missing.err;
  EXPECT_NE(missing.err.find("has partitions 0-3"), std::string::npos) << missing.err;

  CommandRun shifted = Set(root, {"--topic", "refusals", "--partition", "0", "--shift-by", "-500",
                                  "--bootstrap", bootstrap, "--execute"});
  EXPECT_EQ(shifted.exit_code, 1);
  EXPECT_NE(shifted.err.find("offset -400 is outside the log"), std::string::npos) << shifted.err;

  // Dry run of every partition: old -> new printed, nothing written.
  CommandRun dry = Set(root, {"--topic", "refusals", "--all-partitions", "--to-latest",
                              "--bootstrap", bootstrap, "--export", dir_.File("plan.csv")});
  EXPECT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("100 -> 400"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("dry run: nothing changed"), std::string::npos) << dry.out;
  EXPECT_EQ(stored(), 100);
  EXPECT_EQ(raw->Exists(OffsetNodePath(root, "spout", "refusals", 1, false)), ZNONODE);

  // The exported plan applied from the file; partitions 1-3 have no stored
  // offset yet, so Kafka is asked whether the topic has them.
  CommandRun from_file =
      Set(root, {"--from-file", dir_.File("plan.csv"), "--bootstrap", bootstrap, "--execute"});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_EQ(stored(), 400);
  EXPECT_EQ(StoredOffset(*client_, OffsetNodePath(root, "spout", "refusals", 3, false)), 400);

  // An owner node whose holder never answers: refused after the timeout,
  // nothing changed, and the request withdrawn.
  auto holder = testing::RawZkClient::Connect(zk_->ConnectString(), 10000, seconds(20));
  ASSERT_NE(holder, nullptr);
  ASSERT_TRUE(client_->EnsurePath(root + "/spout/@owners").ok());
  ASSERT_EQ(holder->Create(OwnerNodePath(root, "spout", "refusals", 0, false),
                           R"({"session":"1","owner":"topo-9:kafka:3@elsewhere"})", ZOO_EPHEMERAL),
            0);
  CommandRun silent = Set(root, {"--topic", "refusals", "--partition", "0", "--offset", "5",
                                 "--timeout", "2", "--execute"});
  EXPECT_EQ(silent.exit_code, 1);
  EXPECT_EQ(Lines(silent.err), 1) << silent.err;
  EXPECT_NE(silent.err.find("elsewhere/topo-9/kafka:3, which did not answer"), std::string::npos)
      << silent.err;
  EXPECT_EQ(stored(), 400);
  EXPECT_EQ(raw->Exists(RewindRequestPath(root, "spout", "refusals", 0, false)), ZNONODE);
}

// A running spout, 6000 records, the last 500 in flight; rewound by 5000 to
// 500: exactly [500, 6000) comes again, late acks of the old epoch commit
// nothing, and the stored offset after the rewind only grows from 500.
TEST_F(OffsetRewindTest, LiveRewindReplaysExactlyTheRewoundRecords) {
  const std::string root = "/live";
  ASSERT_NO_FATAL_FAILURE(Topic("live", 1, 6000));
  auto t = Spout("live", root);
  const std::string node = OffsetNodePath(root, "spout", "live", 0, false);
  // Acks by hand: everything below 5500; the rest stays in flight.
  t->hold = true;
  size_t acked_to = 0;
  std::vector<api::MessageId> in_flight;
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] {
    for (; acked_to < t->collector.emitted.size(); ++acked_to) {
      const auto& e = t->collector.emitted[acked_to];
      if (SpoutUnderTest::OffsetOf(e) < 5500) {
        t->spout->Ack(e.id);
      } else {
        in_flight.push_back(e.id);
      }
    }
    return StoredOffset(*client_, node) == 5500 && t->offsets[0].size() >= 6000;
  })) << StoredOffset(*client_, node);
  const size_t before = t->collector.emitted.size();

  CommandRun rewind;
  std::atomic<bool> finished{false};
  std::thread tool([&] {
    rewind = Set(root, {"--topic", "live", "--partition", "0", "--offset", "500", "--bootstrap",
                        kafka_->bootstrap_servers(), "--execute", "--timeout", "30"});
    finished = true;
  });
  const bool answered = t->RunUntil(seconds(60), [&] { return finished.load(); });
  tool.join();
  ASSERT_TRUE(answered);
  ASSERT_EQ(rewind.exit_code, 0) << rewind.out << rewind.err;
  EXPECT_NE(rewind.out.find("rewound by its owner"), std::string::npos) << rewind.out;
  EXPECT_EQ(StoredOffset(*client_, node), 500);
  // Late acks of tuples emitted before the rewind commit nothing.
  for (const auto& id : in_flight) t->spout->Ack(id);
  for (int i = 0; i < 20; ++i) {
    for (int j = 0; j < 50; ++j) t->Step();
    std::this_thread::sleep_for(milliseconds(50));
  }
  EXPECT_EQ(StoredOffset(*client_, node), 500);
  // Now the records of the new position are acked; the stored offset only
  // grows from 500.
  for (size_t i = before; i < t->handled; ++i) t->spout->Ack(t->collector.emitted[i].id);
  t->hold = false;
  std::vector<int64_t> stored_after;
  ASSERT_TRUE(t->RunUntil(seconds(60), [&] {
    stored_after.push_back(StoredOffset(*client_, node));
    return stored_after.back() == 6000;
  })) << stored_after.back();
  EXPECT_TRUE(std::is_sorted(stored_after.begin(), stored_after.end()));
  std::vector<int64_t> again;
  for (size_t i = before; i < t->collector.emitted.size(); ++i) {
    again.push_back(SpoutUnderTest::OffsetOf(t->collector.emitted[i]));
  }
  std::sort(again.begin(), again.end());
  ASSERT_EQ(again.size(), 5500u);
  for (size_t i = 0; i < again.size(); ++i) ASSERT_EQ(again[i], 500 + static_cast<int64_t>(i));
  EXPECT_EQ(t->spout->Stats().at({"live", 0}).rewinds, 1);
  t->spout->Close();
}

// An owner whose session is gone cannot rewind: its fenced write fails and
// neither the offset nor the request changes.
TEST_F(OffsetRewindTest, ZombieOwnerCannotRewind) {
  const std::string root = "/zombie";
  ASSERT_TRUE(client_->EnsurePath(root + "/spout/@owners").ok());
  ASSERT_TRUE(client_->Create(OffsetNodePath(root, "spout", "z", 0, false),
                              EncodeStormKafkaOffset({"t", "t", 700, 0, "h", 1, "z"}))
                  .ok());
  std::unique_ptr<coord::ZkSession> zombie = ConnectClient(seconds(20));
  ASSERT_NE(zombie, nullptr);
  const int64_t zombie_sid = zombie->session_id();
  coord::ZkCreateOptions eph;
  eph.mode = coord::ZkCreateMode::kEphemeral;
  ASSERT_TRUE(zombie->Create(OwnerNodePath(root, "spout", "z", 0, false), "{}", eph).ok());
  RewindWatcher::Options o;
  o.zk_root = root;
  o.spout_id = "spout";
  o.owner_description = "zombie";
  o.poll_interval = milliseconds(200);
  RewindWatcher watcher(zombie.get(), o);
  watcher.Watch({"z", 0}, zombie_sid);
  RewindRequest request;
  request.offset = 10;
  const std::string path = RewindRequestPath(root, "spout", "z", 0, false);
  coord::ZkCreateOptions parents;
  parents.create_parents = true;
  ASSERT_TRUE(client_->Create(path, EncodeRewindRequest(request), parents).ok());
  std::vector<RewindWatcher::Pending> seen;
  ASSERT_TRUE(testing::Eventually(seconds(10), [&] {
    for (auto& p : watcher.TakeRequests()) seen.push_back(p);
    return !seen.empty();
  }));
  // The zombie's session expires before it acts.
  ASSERT_TRUE(zk_->ExpireSession(zombie_sid, zombie->session_password()).ok());
  ASSERT_TRUE(testing::Eventually(seconds(20), [&] {
    return !client_->Exists(OwnerNodePath(root, "spout", "z", 0, false))->has_value();
  }));
  StormKafkaOffset state{"t", "t", 10, 0, "h", 1, "z"};
  watcher.Apply(seen.front(), state);
  std::vector<RewindWatcher::Outcome> outcomes;
  ASSERT_TRUE(testing::Eventually(seconds(20), [&] {
    for (auto& out : watcher.TakeOutcomes()) outcomes.push_back(out);
    return !outcomes.empty();
  }));
  EXPECT_FALSE(outcomes.front().applied);
  EXPECT_EQ(StoredOffset(*client_, OffsetNodePath(root, "spout", "z", 0, false)), 700);
  auto answer = DecodeRewindRequest(client_->Get(path)->data);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, "pending");
}

// 999999 stored on a 350-record partition: reported, counted, and under
// outOfRangePolicy=earliest the spout reads [0, 350) and stopAtEnd completes
// only then; under fail it stops and never reports complete.
TEST_F(OffsetRewindTest, StoredOffsetBeyondLogEndIsOutOfRange) {
  ASSERT_NO_FATAL_FAILURE(Topic("beyond", 1, 350));
  for (const std::string policy : {"earliest", "fail"}) {
    const std::string root = "/beyond-" + policy;
    const std::string node = OffsetNodePath(root, "spout", "beyond", 0, false);
    ASSERT_TRUE(client_->EnsurePath(root + "/spout").ok());
    ASSERT_TRUE(
        client_->Create(node, EncodeStormKafkaOffset({"old", "old", 999999, 0, "h", 1, "beyond"}))
            .ok());
    auto t = Spout("beyond", root, {{"outOfRangePolicy", policy}, {"stopAtEnd", true}});
    if (policy == "earliest") {
      ASSERT_TRUE(t->RunUntil(seconds(40), [&] { return t->spout->IsExhausted(); }));
      EXPECT_EQ(t->Unique(0).size(), 350u);
      EXPECT_EQ(StoredOffset(*client_, node), 350);
    } else {
      ASSERT_TRUE(t->RunUntil(seconds(20), [&] {
        return !t->spout->Stats().empty() && t->spout->Stats().at({"beyond", 0}).failed;
      }));
      EXPECT_FALSE(t->spout->IsExhausted());
      EXPECT_TRUE(t->offsets.empty());
      EXPECT_EQ(StoredOffset(*client_, node), 999999);
    }
    EXPECT_EQ(t->spout->Stats().at({"beyond", 0}).stored_out_of_range, 1) << policy;
    ASSERT_FALSE(t->collector.errors.empty()) << policy;
    EXPECT_NE(std::string(t->collector.errors.front().message()).find("beyond the log end 350"),
              std::string::npos)
        << t->collector.errors.front();
    t->spout->Close();
  }
}

}  // namespace
}  // namespace tempest::spout
