// KafkaSpout against a misconfigured or hostile offsets ZooKeeper, on a real
// ZooKeeper server and DevKafka: a zkServers chroot that does not exist fails
// open naming it (and nothing is created); a chroot that exists is used; a
// dead or unresolvable server in zkServers next to a valid one does not
// matter; a zkRoot without offsets starts at startOffsetTime, says where it
// looked, and leaves the other root alone; an ACL that shuts the spout out
// is logged once per episode and once when it ends, and loses nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "bolts/builtin_bolts.h"
#include "common/coord/zk_auth.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"
#include "spdlog/sinks/base_sink.h"
#include "spdlog/spdlog.h"
#include "spout/kafka/kafka_spout.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"
#include "spout/kafka/offsets/zk_offset_store.h"
#include "tests/integration/spout/spout_cluster_fixture.h"
#include "tests/integration/spout/spout_harness.h"
#include "tests/support/eventually.h"
#include "tests/support/log_capture.h"
#include "tests/support/temp_dir.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"

namespace tempest::spout {
namespace {

using std::chrono::seconds;
using testing::NumberedRecords;
using testing::SpoutUnderTest;
using testing::StoredOffset;

constexpr auto kWait = seconds(40);
constexpr char kCredentials[] = "offsets:spout-secret";

using testing::LogCapture;

class KafkaSpoutZkConfigTest : public testing::SpoutClusterTest<1> {
 protected:
  void SetUp() override {
    client_ = ConnectClient(seconds(20));
    ASSERT_NE(client_, nullptr);
  }

  // A KafkaSpout reading `topic` from its start (startOffsetTime -2) with
  // offsets under `root`; `servers` replaces zkServers when not empty;
  // `payload` gives it digest credentials. Open's result goes to `open`.
  std::unique_ptr<SpoutUnderTest> Spout(const std::string& topic, const std::string& root,
                                        const api::ValueList& servers, absl::Status* open,
                                        const std::string& payload = "") {
    api::ValueMap extra = {{"startOffsetTime", -2}};
    if (!servers.empty()) extra["zkServers"] = servers;
    auto config = ParseKafkaSpoutArgs(KafkaSpoutArgs(topic, root, extra));
    EXPECT_TRUE(config.ok()) << config.status();
    auto t = std::make_unique<SpoutUnderTest>();
    t->spout = std::make_unique<KafkaSpout>(std::move(*config));
    api::Config topo = TopologyConfig();
    if (!payload.empty()) {
      topo.Set(coord::kZkAuthSchemeKey, "digest");
      topo.Set(coord::kZkAuthPayloadKey, payload);
    }
    api::TopologyContext ctx = testing::SpoutContext(topo);
    *open = t->spout->Open(ctx.config(), ctx, t->collector);
    return t;
  }

  static int64_t Counter(const std::string& name) {
    int64_t total = 0;
    for (const auto& m : core::MetricsRegistry::Global().Snapshot()) {
      if (m.name == name) total += m.value;
    }
    return total;
  }

  // Sets `path`'s ACL through kazoo, an independent client holding the
  // spout's credentials: "readonly" leaves their identity read and admin,
  // "restore" gives it every permission back.
  void SetAcl(const std::string& path, const std::string& how) {
    const std::string perms = how == "readonly" ? "read=True, admin=True" : "all=True";
    auto [rc, out] = testing::RunKazoo(
        absl::StrCat("from kazoo.client import KazooClient\n"
                     "from kazoo.security import make_digest_acl\n"
                     "zk = KazooClient(hosts='",
                     zk_->ConnectString(), "', auth_data=[('digest', '", kCredentials, "')])\n",
                     "zk.start(timeout=20)\n", "zk.set_acls('", path,
                     "', [make_digest_acl('offsets', 'spout-secret', ", perms, ")])\n",
                     "zk.stop()\nprint('ok')\n"));
    ASSERT_EQ(rc, 0) << out;
  }

  std::unique_ptr<coord::ZkSession> client_;
};

TEST_F(KafkaSpoutZkConfigTest, AChrootThatDoesNotExistFailsOpenNamingItAndCreatesNothing) {
  ASSERT_TRUE(kafka_->CreateTopic("chroot-missing", 1).ok());
  absl::Status open;
  auto t = Spout("chroot-missing", "/offsets",
                 api::ValueList{absl::StrCat(zk_->ConnectString(), "/no-such-chroot")}, &open);
  EXPECT_TRUE(absl::IsFailedPrecondition(open)) << open;
  EXPECT_TRUE(absl::StrContains(open.message(), "chroot /no-such-chroot")) << open;
  EXPECT_TRUE(absl::StrContains(open.message(), "does not exist")) << open;
  auto chroot = client_->Exists("/no-such-chroot");
  ASSERT_TRUE(chroot.ok()) << chroot.status();
  EXPECT_FALSE(chroot->has_value());
}

TEST_F(KafkaSpoutZkConfigTest, AChrootThatExistsHoldsTheOffsets) {
  ASSERT_TRUE(kafka_->CreateTopic("chroot-ok", 1).ok());
  ASSERT_TRUE(kafka_->Produce("chroot-ok", 0, NumberedRecords(0, 20)).ok());
  ASSERT_TRUE(client_->EnsurePath("/present-chroot").ok());
  absl::Status open;
  auto t = Spout("chroot-ok", "/offsets",
                 api::ValueList{absl::StrCat(zk_->ConnectString(), "/present-chroot")}, &open);
  ASSERT_TRUE(open.ok()) << open;
  const std::string path =
      "/present-chroot" + OffsetNodePath("/offsets", "spout", "chroot-ok", 0, false);
  EXPECT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*client_, path) == 20; }));
  t->spout->Close();
}

TEST_F(KafkaSpoutZkConfigTest, DeadAndUnresolvableServersBesideAValidOneDoNotMatter) {
  ASSERT_TRUE(kafka_->CreateTopic("partial-list", 1).ok());
  ASSERT_TRUE(kafka_->Produce("partial-list", 0, NumberedRecords(0, 30)).ok());
  const std::string path = OffsetNodePath("/partial", "spout", "partial-list", 0, false);
  const std::string dead = absl::StrCat("127.0.0.1:", testing::FreePort());
  for (const api::ValueList& servers :
       {api::ValueList{dead, zk_->ConnectString()},
        api::ValueList{"no-such-host.invalid:2181", zk_->ConnectString()}}) {
    absl::Status open;
    auto t = Spout("partial-list", "/partial", servers, &open);
    ASSERT_TRUE(open.ok()) << open;
    EXPECT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*client_, path) == 30; }));
    t->spout->Close();
  }
}

TEST_F(KafkaSpoutZkConfigTest, AZkRootWithoutOffsetsStartsAtStartOffsetTimeAndSaysWhere) {
  ASSERT_TRUE(kafka_->CreateTopic("wrong-root", 1).ok());
  ASSERT_TRUE(kafka_->Produce("wrong-root", 0, NumberedRecords(0, 25)).ok());
  const std::string right = OffsetNodePath("/right-root", "spout", "wrong-root", 0, false);
  const std::string wrong = OffsetNodePath("/wrnog-root", "spout", "wrong-root", 0, false);
  {
    absl::Status open;
    auto t = Spout("wrong-root", "/right-root", {}, &open);
    ASSERT_TRUE(open.ok()) << open;
    ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*client_, right) == 25; }));
    t->spout->Close();
  }
  // A mistyped zkRoot looks exactly like a first start: the spout follows the
  // start rule (here the log's start), warns naming where it looked, and
  // never touches the offsets under the right root.
  LogCapture log;
  absl::Status open;
  auto t = Spout("wrong-root", "/wrnog-root", {}, &open);
  ASSERT_TRUE(open.ok()) << open;
  ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*client_, wrong) == 25; }));
  EXPECT_EQ(*t->Unique(0).begin(), 0);
  EXPECT_EQ(t->Unique(0).size(), 25u);
  EXPECT_EQ(log.Count("no offset stored for wrong-root/0 under /wrnog-root/spout; starting at "
                      "startOffsetTime -2"),
            1);
  EXPECT_EQ(StoredOffset(*client_, right), 25);
  t->spout->Close();
}

TEST_F(KafkaSpoutZkConfigTest, ARevokedAclIsLoggedOncePerEpisodeAndLosesNothing) {
  ASSERT_TRUE(kafka_->CreateTopic("acl-episodes", 1).ok());
  ASSERT_TRUE(kafka_->Produce("acl-episodes", 0, NumberedRecords(0, 10)).ok());
  const std::string path = OffsetNodePath("/episodes", "spout", "acl-episodes", 0, false);
  // The spout's nodes are creator-only: read them with its credentials.
  coord::ZkSession::Options o;
  o.connect_string = zk_->ConnectString();
  o.create_chroot = false;
  o.config.auth.scheme = "digest";
  o.config.auth.payload = kCredentials;
  auto reader = coord::ZkSession::Create(o);
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_TRUE((*reader)->WaitConnected(seconds(20)).ok());
  coord::ZkSession& zk = **reader;
  LogCapture log;
  absl::Status open;
  auto t = Spout("acl-episodes", "/episodes", {}, &open, kCredentials);
  ASSERT_TRUE(open.ok()) << open;
  ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(zk, path) == 10; }));
  int produced = 10;
  for (int episode = 1; episode <= 2; ++episode) {
    SCOPED_TRACE(absl::StrCat("episode ", episode));
    SetAcl(path, "readonly");
    const int64_t denied = Counter("tempest_kafka_spout_commit_denied");
    ASSERT_TRUE(kafka_->Produce("acl-episodes", 0, NumberedRecords(produced, produced + 10)).ok());
    produced += 10;
    // Several refused rounds, still one line; nothing stored meanwhile.
    ASSERT_TRUE(t->RunUntil(
        kWait, [&] { return Counter("tempest_kafka_spout_commit_denied") >= denied + 3; }));
    EXPECT_EQ(log.Count("ZooKeeper denies writing " + path), episode);
    EXPECT_EQ(StoredOffset(zk, path), produced - 10);
    SetAcl(path, "restore");
    ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(zk, path) == produced; }));
    EXPECT_EQ(log.Count("ZooKeeper admits offset commits again"), episode);
  }
  std::set<int64_t> expected;
  for (int64_t i = 0; i < produced; ++i) expected.insert(i);
  EXPECT_EQ(t->Unique(0), expected);
  t->spout->Close();
}

TEST_F(KafkaSpoutZkConfigTest, ACommitStuckOnAStoppedZooKeeperCoalescesLaterOnes) {
  core::MetricsRegistry metrics;
  ZkOffsetStore::Options so;
  so.connect_string = zk_->ConnectString();
  so.zk_root = "/coalesce";
  so.spout_id = "spout";
  so.metrics = &metrics;
  so.op_timeout = std::chrono::milliseconds(20000);
  auto store = ZkOffsetStore::Create(so);
  ASSERT_TRUE(store.ok()) << store.status();
  const TopicPartition tp{"coalesce", 0};
  (*store)->SetAssignment({tp});
  uint64_t acquisition = 0;
  ASSERT_TRUE(testing::Eventually(kWait, [&] {
    for (const OffsetStoreUpdate& u : (*store)->TakeUpdates()) {
      if (u.kind == OffsetStoreUpdate::Kind::kAcquired) acquisition = u.acquisition;
    }
    return acquisition != 0;
  }));
  auto commit = [&](int64_t offset) {
    OffsetCommit c;
    c.partition = tp;
    c.acquisition = acquisition;
    c.state.offset = offset;
    c.state.topic = tp.topic;
    (*store)->RequestCommit({c});
  };
  auto gauge = [&](const std::string& name) {
    for (const auto& m : metrics.Snapshot()) {
      if (m.name == name) return m.value;
    }
    return int64_t{-1};
  };
  // ZooKeeper stops answering: the first commit's multi waits in flight,
  // and each later request replaces the one waiting behind it.
  zk_->Pause(0);
  commit(10);
  ASSERT_TRUE(testing::Eventually(
      kWait, [&] { return gauge("tempest_kafka_spout_commit_multis_in_flight") == 1; }));
  for (int64_t offset = 11; offset <= 20; ++offset) commit(offset);
  EXPECT_EQ(gauge("tempest_kafka_spout_commit_partitions_pending"), 1);
  EXPECT_EQ(gauge("tempest_kafka_spout_commits_coalesced"), 9);
  EXPECT_EQ((*store)->multi_count(), 0);
  zk_->Resume(0);
  // Two multis store everything: the one that waited, then the latest.
  const std::string path = OffsetNodePath("/coalesce", "spout", "coalesce", 0, false);
  ASSERT_TRUE(testing::Eventually(kWait, [&] { return StoredOffset(*client_, path) == 20; }));
  EXPECT_EQ((*store)->multi_count(), 2);
  EXPECT_EQ(gauge("tempest_kafka_spout_commit_multis_in_flight"), 0);
  EXPECT_EQ(gauge("tempest_kafka_spout_commit_partitions_pending"), 0);
  (*store)->Close(seconds(5));
}

// In a running topology (the execution engine of `tempest local`), a spout
// that may not use its offsets stops the topology at start with one error
// naming why, instead of running without commits.
TEST_F(KafkaSpoutZkConfigTest, ATopologyWhoseSpoutMayNotUseItsOffsetsDoesNotStart) {
  ASSERT_TRUE(kafka_->CreateTopic("topology-refused", 1).ok());
  ASSERT_TRUE(kafka_->Produce("topology-refused", 0, NumberedRecords(0, 10)).ok());
  // The spout's directory, made by its rightful identity: creator-only.
  coord::ZkSession::Options o;
  o.connect_string = zk_->ConnectString();
  o.create_chroot = false;
  o.config.auth.scheme = "digest";
  o.config.auth.payload = kCredentials;
  auto owner = coord::ZkSession::Create(o);
  ASSERT_TRUE(owner.ok()) << owner.status();
  ASSERT_TRUE((*owner)->WaitConnected(seconds(20)).ok());
  ASSERT_TRUE((*owner)->EnsurePath("/guarded/spout").ok());

  struct Case {
    std::string what;
    std::string servers;
    std::string payload;
    absl::StatusCode code;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"wrong password", zk_->ConnectString(), "offsets:guess", absl::StatusCode::kPermissionDenied,
       "/guarded/spout"},
      {"missing chroot", absl::StrCat(zk_->ConnectString(), "/no-such-chroot"), kCredentials,
       absl::StatusCode::kFailedPrecondition, "chroot /no-such-chroot"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    api::ComponentRegistry registry;
    ASSERT_TRUE(RegisterKafkaSpout(registry).ok());
    ASSERT_TRUE(bolts::RegisterBuiltinBolts(registry).ok());
    worker::testing::TopologyBuilder b("refused");
    b.SetSpout("kafka", "tempest.KafkaSpout", 1);
    b.SetBolt("pass", "tempest.IdentityBolt", 1).ShuffleGrouping("kafka");
    b.Config(coord::kZkAuthSchemeKey, "digest");
    b.Config(coord::kZkAuthPayloadKey, c.payload);
    core::TopologyDef def = b.Build();
    def.spouts[0].args.properties = {{"bootstrap.servers", kafka_->bootstrap_servers()},
                                     {"topics", "topology-refused"},
                                     {"zkRoot", "/guarded"},
                                     {"id", "spout"},
                                     {"zkServers", c.servers},
                                     {"stateUpdateIntervalMs", 200}};
    def.bolts[0].args.properties = {
        {"fields", api::ValueList{"topic", "partition", "offset", "key", "value"}}};
    worker::LocalClusterOptions options;
    options.registry = &registry;
    auto cluster = worker::LocalCluster::Create(std::move(def), options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    const absl::Status started = (*cluster)->Start();
    EXPECT_EQ(started.code(), c.code) << started;
    EXPECT_TRUE(absl::StrContains(started.message(), c.message)) << started;
    EXPECT_TRUE(absl::StrContains(started.message(), "Open")) << started;
  }
  // Nothing was written where the spout may not write.
  auto children = (*owner)->Children("/guarded/spout");
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_TRUE(children->empty());
}

}  // namespace
}  // namespace tempest::spout
