// ZooKeeper digest ACLs against a real ZooKeeper server and DevKafka: with
// storm.zookeeper.auth.* set, an independent client without credentials
// (kazoo) can neither read the transport secret nor write any cluster or
// offset node; the KafkaSpout and `tempest offsets` work with credentials;
// a NOAUTH on commit is reported, loses nothing, and commits resume once the
// ACL is restored. Nodes an anonymous client made first (the spout's
// directory, an ownership node, an offset node, nimbus's storms/) are repaired
// or refused, never used silently.
// With per-topology identities, a worker's identity reaches
// its own topology's nodes only, while the spout's nodes stay the cluster
// identity's to read and set.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bolts/builtin_bolts.h"
#include "common/api/component_registry.h"
#include "common/coord/topology_identity.h"
#include "common/coord/zk_auth.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"
#include "nimbus/nimbus.h"
#include "spout/builtin_spouts.h"
#include "spout/kafka/kafka_spout.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"
#include "tests/integration/spout/spout_cluster_fixture.h"
#include "tests/integration/spout/spout_harness.h"
#include "tests/support/demo_flux.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Eventually;
using testing::NumberedRecords;
using testing::SpoutUnderTest;
using testing::StoredOffset;

constexpr char kCredentials[] = "tempest:cluster-secret";
constexpr auto kWait = seconds(40);

class ZkAclTest : public testing::SpoutClusterTest<1> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    root_ = absl::StrCat("/acl-test-", ++counter);
    admin_ = Client(kCredentials);
    ASSERT_NE(admin_, nullptr);
  }

  static coord::ZkAuthConfig Auth(const std::string& payload) {
    coord::ZkAuthConfig a;
    a.scheme = "digest";
    a.payload = payload;
    return a;
  }

  // A connected session with `payload` as its digest credentials.
  static std::unique_ptr<coord::ZkSession> Client(const std::string& payload) {
    coord::ZkSession::Options o;
    o.connect_string = zk_->ConnectString();
    o.create_chroot = false;
    o.config.auth = Auth(payload);
    auto s = coord::ZkSession::Create(o);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return nullptr;
    EXPECT_TRUE((*s)->WaitConnected(seconds(20)).ok());
    return std::move(*s);
  }

  // Runs kazoo_probe.py; returns "OP PATH" -> result ("ok", "NoAuthError", ...).
  std::map<std::string, std::string> Kazoo(const std::string& auth,
                                           const std::vector<std::string>& probes) {
    std::vector<std::string> argv = {
        "/usr/bin/python3",
        absl::StrCat(std::getenv("TEMPEST_SOURCE_DIR"),
                     "/tests/integration/security/kazoo_probe.py"),
        zk_->ConnectString(), auth};
    argv.insert(argv.end(), probes.begin(), probes.end());
    testing::CommandRun run = testing::RunCommand(argv, dir_.File("kazoo"), seconds(60));
    EXPECT_TRUE(run.finished && run.exit_code == 0) << run.err;
    std::map<std::string, std::string> out;
    for (absl::string_view line : absl::StrSplit(run.out, '\n', absl::SkipEmpty())) {
      const size_t last = line.rfind(' ');
      if (last == absl::string_view::npos) continue;
      out[std::string(line.substr(0, last))] = std::string(line.substr(last + 1));
    }
    return out;
  }

  // Every node under `path` (itself included), read with credentials.
  void Walk(const std::string& path, std::vector<std::string>& out, int depth = 0) {
    out.push_back(path);
    if (depth > 8 || out.size() > 400) return;
    auto children = admin_->Children(path);
    ASSERT_TRUE(children.ok()) << path << ": " << children.status();
    for (const std::string& c : *children) Walk(absl::StrCat(path, "/", c), out, depth + 1);
  }

  nimbus::NimbusOptions NimbusConfig() {
    nimbus::NimbusOptions o;
    o.zk_connect = zk_->ConnectString();
    o.root = root_;
    o.zk.session_timeout = milliseconds(4000);
    o.zk.connection_timeout = milliseconds(10000);
    o.zk.retry_interval = milliseconds(100);
    o.zk.retry_interval_ceiling = milliseconds(1000);
    o.zk.auth = Auth(kCredentials);
    o.bind_host = "127.0.0.1";
    o.port = 0;
    o.monitor_interval = milliseconds(200);
    o.op_timeout = milliseconds(15000);
    o.registry = &registry_;
    return o;
  }

  std::unique_ptr<nimbus::Nimbus> StartNimbus() {
    EXPECT_TRUE(spout::RegisterBuiltinSpouts(registry_).ok());
    EXPECT_TRUE(bolts::RegisterBuiltinBolts(registry_).ok());
    auto n = nimbus::Nimbus::Create(NimbusConfig());
    EXPECT_TRUE(n.ok()) << n.status();
    if (!n.ok()) return nullptr;
    // A supervisor offering two slots, registered as a supervisor would
    // (with the cluster's credentials).
    v1::SupervisorInfo info;
    info.set_supervisor_id("sup-a");
    info.set_hostname("127.0.0.1");
    info.add_slot_ports(6700);
    info.add_slot_ports(6701);
    coord::ZkCreateOptions create;
    create.mode = coord::ZkCreateMode::kEphemeral;
    create.create_parents = true;
    auto created = admin_->Create(root_ + "/supervisors/sup-a", info.SerializeAsString(), create);
    EXPECT_TRUE(created.ok()) << created.status();
    return std::move(*n);
  }

  // The transport secret of `id`'s assignment, once nimbus has written one.
  std::string SecretOf(const std::string& id) {
    std::string secret;
    EXPECT_TRUE(Eventually(kWait, [&] {
      auto node = admin_->Get(absl::StrCat(root_, "/assignments/", id));
      v1::Assignment a;
      if (!node.ok() || !a.ParseFromString(node->data)) return false;
      secret = a.transport_secret();
      return a.executors_size() > 0;
    }));
    return secret;
  }

  // A tempest.KafkaSpout on `topic` whose offsets live under `zk_root`, with
  // `payload` as its credentials; `open_status` gets Open's result.
  std::unique_ptr<SpoutUnderTest> Spout(const std::string& topic, const std::string& zk_root,
                                        const std::string& payload,
                                        absl::Status* open_status = nullptr,
                                        const std::string& spout_id = "spout") {
    api::ComponentArgs args;
    args.class_name = "tempest.KafkaSpout";
    args.id = api::ComponentId("kafka");
    args.properties = {{"bootstrap.servers", kafka_->bootstrap_servers()},
                       {"topics", topic},
                       {"zkRoot", zk_root},
                       {"id", spout_id},
                       {"zkServers", zk_->ConnectString()},
                       {"stateUpdateIntervalMs", 200}};
    auto config = spout::ParseKafkaSpoutArgs(args);
    EXPECT_TRUE(config.ok()) << config.status();
    auto t = std::make_unique<SpoutUnderTest>();
    t->spout = std::make_unique<spout::KafkaSpout>(std::move(*config));
    api::Config topo = TopologyConfig();
    // Empty: the spout runs as in a worker, on the process's topology
    // identity (coord::ProcessTopologyZkAuth), with no credential in its
    // config.
    if (!payload.empty()) {
      topo.Set(coord::kZkAuthSchemeKey, "digest");
      topo.Set(coord::kZkAuthPayloadKey, payload);
    }
    api::TopologyContext ctx = testing::SpoutContext(topo);
    absl::Status s = t->spout->Open(ctx.config(), ctx, t->collector);
    if (open_status != nullptr) {
      *open_status = s;
    } else {
      EXPECT_TRUE(s.ok()) << s;
    }
    return t;
  }

  // The identity nimbus stored for the topology `id` (read with the
  // cluster's).
  std::string IdentityOf(const std::string& id) {
    auto identity = coord::ReadTopologyIdentity(*admin_, coord::ClusterPaths(root_),
                                                coord::TopologyNameOfId(id));
    EXPECT_TRUE(identity.ok()) << identity.status();
    if (!identity.ok() || !identity->has_value()) return "";
    return (*identity)->payload;
  }

  // `tempest offsets ARGS...` with the cluster's credentials.
  testing::CommandRun OffsetsAsCluster(const std::vector<std::string>& args,
                                       const std::string& name) {
    std::vector<std::string> argv = {testing::TempestBinary(), "-c",
                                     "storm.zookeeper.auth.scheme=digest", "-c",
                                     absl::StrCat("storm.zookeeper.auth.payload=", kCredentials),
                                     "offsets"};
    argv.insert(argv.end(), args.begin(), args.end());
    testing::CommandRun run = testing::RunCommand(argv, dir_.File(name), seconds(60));
    EXPECT_TRUE(run.finished) << name;
    return run;
  }

  std::string OffsetPath(const std::string& zk_root, const std::string& topic) {
    return spout::OffsetNodePath(zk_root, "spout", topic, 0, false);
  }

  static int64_t CounterValue(const std::string& name, const std::string& topic_or_empty) {
    int64_t total = 0;
    for (const auto& m : core::MetricsRegistry::Global().Snapshot()) {
      if (m.name != name) continue;
      if (!topic_or_empty.empty() &&
          (!m.labels.count("topic") || m.labels.at("topic") != topic_or_empty)) {
        continue;
      }
      total += m.value;
    }
    return total;
  }

  // Runs one anonymous kazoo probe and returns its result.
  std::string Anonymous(const std::string& op, const std::string& path) {
    const auto out = Kazoo("-", {op + ":" + path});
    const auto it = out.find(op + " " + path);
    return it == out.end() ? "missing" : it->second;
  }

  // Whether anyone but the cluster identity may change `path`.
  bool OpenToOthers(const std::string& path) {
    auto acl = admin_->GetAcl(path);
    EXPECT_TRUE(acl.ok()) << path << ": " << acl.status();
    if (!acl.ok()) return true;
    for (const coord::ZkAclEntry& e : acl->first) {
      if (e.scheme != "digest" && (e.perms & ~coord::kZkPermRead) != 0) return true;
    }
    return false;
  }

  static bool HasError(const SpoutUnderTest& t, const std::string& needle) {
    for (const absl::Status& e : t.collector.errors) {
      if (std::string(e.message()).find(needle) != std::string::npos) return true;
    }
    return false;
  }

  std::string root_;
  std::unique_ptr<coord::ZkSession> admin_;
  api::ComponentRegistry registry_;
  testing::TempDir dir_{"tempest-zk-acl"};
};

TEST_F(ZkAclTest, WithoutCredentialsNoClusterNodeIsReadableOrWritableAndTheSecretRotates) {
  auto n = StartNimbus();
  ASSERT_NE(n, nullptr);
  nimbus::SubmitRequest r;
  r.flux_text = testing::kGenSinkFlux;
  r.file_name = "demo.yaml";
  auto id = n->Submit(r);
  ASSERT_TRUE(id.ok()) << id.status();
  const std::string secret = SecretOf(*id);
  ASSERT_EQ(secret.size(), 32u);
  const std::string assignment = absl::StrCat(root_, "/assignments/", *id);

  std::vector<std::string> nodes;
  Walk(root_, nodes);
  ASSERT_GE(nodes.size(), 7u);  // root, storms/<id>, assignments/<id>, supervisors/sup-a, ...
  std::vector<std::string> probes = {"get:" + assignment, "children:" + root_,
                                     "create:" + root_, "create:" + root_ + "/storms"};
  for (const std::string& node : nodes) probes.push_back("set:" + node);
  const auto anonymous = Kazoo("-", probes);
  for (const std::string& p : probes) {
    std::string key = p;
    key[key.find(':')] = ' ';
    EXPECT_EQ(anonymous.count(key) ? anonymous.at(key) : "missing", "NoAuthError") << p;
  }
  // Another identity (a wrong password) is shut out just the same ...
  const auto stranger = Kazoo("tempest:guess", {"get:" + assignment, "set:" + assignment});
  EXPECT_EQ(stranger.at("get " + assignment), "NoAuthError");
  EXPECT_EQ(stranger.at("set " + assignment), "NoAuthError");
  // ... while the cluster's identity reads it (the denials are about the ACL).
  EXPECT_EQ(Kazoo(kCredentials, {"get:" + assignment}).at("get " + assignment), "ok");
  // Nothing was forged: the assignment still holds the same secret.
  EXPECT_EQ(SecretOf(*id), secret);

  // A daemon with the wrong password fails at start, naming the cause.
  nimbus::NimbusOptions wrong = NimbusConfig();
  wrong.zk.auth = Auth("tempest:guess");
  auto refused = nimbus::Nimbus::Create(wrong);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsPermissionDenied(refused.status())) << refused.status();
  EXPECT_NE(std::string(refused.status().message()).find("storm.zookeeper.auth.payload"),
            std::string::npos);

  // Every submission gets a secret of its own: kill, submit again.
  ASSERT_TRUE(n->Kill(*id, 0).ok());
  ASSERT_TRUE(
      Eventually(kWait, [&] { return absl::IsNotFound(admin_->Get(assignment).status()); }));
  auto again = n->Submit(r);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NE(*again, *id);
  const std::string rotated = SecretOf(*again);
  EXPECT_EQ(rotated.size(), 32u);
  EXPECT_NE(rotated, secret);
}

TEST_F(ZkAclTest, SpoutAndOffsetsCommandWorkWithCredentialsWrongOnesFailAtOpen) {
  ASSERT_TRUE(kafka_->CreateTopic("acl-ok", 1).ok());
  ASSERT_TRUE(kafka_->Produce("acl-ok", 0, NumberedRecords(0, 20)).ok());
  const std::string zk_root = root_ + "-offsets";
  const std::string path = OffsetPath(zk_root, "acl-ok");
  {
    auto t = Spout("acl-ok", zk_root, kCredentials);
    ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 20; }));
    EXPECT_EQ(t->Unique(0).size(), 20u);
    EXPECT_TRUE(t->collector.errors.empty());
    t->spout->Close();
  }
  // Offset, owner and parent nodes: nobody else reads or writes them.
  const std::string owners = zk_root + "/spout/@owners";
  const auto anonymous =
      Kazoo("-", {"get:" + path, "set:" + path, "create:" + zk_root + "/spout", "set:" + zk_root,
                  "create:" + owners, "children:" + zk_root + "/spout"});
  for (const auto& [probe, result] : anonymous) EXPECT_EQ(result, "NoAuthError") << probe;
  EXPECT_EQ(StoredOffset(*admin_, path), 20);

  const std::string binary = testing::TempestBinary();
  const std::vector<std::string> show = {"offsets", "show", "--zk", zk_->ConnectString(),
                                         "--root", zk_root, "--id", "spout", "--json"};
  std::vector<std::string> with_auth = {
      binary, "-c", "storm.zookeeper.auth.scheme=digest", "-c",
      absl::StrCat("storm.zookeeper.auth.payload=", kCredentials)};
  with_auth.insert(with_auth.end(), show.begin(), show.end());
  testing::CommandRun shown =
      testing::RunCommand(with_auth, dir_.File("offsets-auth"), seconds(60));
  ASSERT_TRUE(shown.finished);
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("\"committed_offset\":20"), std::string::npos) << shown.out;
  std::vector<std::string> without = {binary};
  without.insert(without.end(), show.begin(), show.end());
  testing::CommandRun denied = testing::RunCommand(without, dir_.File("offsets-anon"), seconds(60));
  ASSERT_TRUE(denied.finished);
  EXPECT_NE(denied.exit_code, 0) << denied.out;
  EXPECT_EQ(denied.out.find("\"committed_offset\":20"), std::string::npos);

  // The journal is read with the same credentials, and refused without them.
  const std::vector<std::string> history = {"offsets", "history", "--zk", zk_->ConnectString(),
                                            "--root", zk_root, "--id", "spout", "--json"};
  std::vector<std::string> history_with_auth(with_auth.begin(), with_auth.begin() + 5);
  history_with_auth.insert(history_with_auth.end(), history.begin(), history.end());
  testing::CommandRun journal =
      testing::RunCommand(history_with_auth, dir_.File("history-auth"), seconds(60));
  ASSERT_TRUE(journal.finished);
  EXPECT_EQ(journal.exit_code, 0) << journal.err;
  EXPECT_NE(journal.out.find("\"commit\""), std::string::npos) << journal.out;
  std::vector<std::string> history_without = {binary};
  history_without.insert(history_without.end(), history.begin(), history.end());
  testing::CommandRun journal_denied =
      testing::RunCommand(history_without, dir_.File("history-anon"), seconds(60));
  ASSERT_TRUE(journal_denied.finished);
  EXPECT_NE(journal_denied.exit_code, 0) << journal_denied.out;
  EXPECT_EQ(journal_denied.out.find("\"commit\""), std::string::npos) << journal_denied.out;

  // A spout with a wrong password fails at open, not later without commits.
  absl::Status open;
  auto wrong = Spout("acl-ok", zk_root, "tempest:guess", &open);
  EXPECT_TRUE(absl::IsPermissionDenied(open)) << open;
  EXPECT_NE(std::string(open.message()).find(zk_root), std::string::npos) << open;
}

TEST_F(ZkAclTest, NoAuthOnCommitIsReportedLosesNothingAndCommitsResumeAfterRestore) {
  ASSERT_TRUE(kafka_->CreateTopic("acl-denied", 1).ok());
  ASSERT_TRUE(kafka_->Produce("acl-denied", 0, NumberedRecords(0, 30)).ok());
  const std::string zk_root = root_ + "-offsets";
  const std::string path = OffsetPath(zk_root, "acl-denied");
  auto t = Spout("acl-denied", zk_root, kCredentials);
  ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 30; }));

  // An operator takes write access away from the offset node.
  EXPECT_EQ(Kazoo(kCredentials, {"readonly:" + path}).at("readonly " + path), "ok");
  const int64_t denied_before = CounterValue("tempest_kafka_spout_commit_denied", "");
  ASSERT_TRUE(kafka_->Produce("acl-denied", 0, NumberedRecords(30, 60)).ok());
  ASSERT_TRUE(t->RunUntil(kWait, [&] {
    return t->Unique(0).size() == 60 && !t->collector.errors.empty() &&
           CounterValue("tempest_kafka_spout_commit_denied", "") > denied_before;
  }));
  EXPECT_TRUE(absl::IsPermissionDenied(t->collector.errors.back())) << t->collector.errors.back();
  // Some more commit rounds: still denied, and the stored offset did not move.
  const int64_t denied_now = CounterValue("tempest_kafka_spout_commit_denied", "");
  ASSERT_TRUE(t->RunUntil(kWait, [&] {
    return CounterValue("tempest_kafka_spout_commit_denied", "") >= denied_now + 2;
  }));
  EXPECT_EQ(StoredOffset(*admin_, path), 30);

  // The ACL comes back: the next commit stores everything that was acked.
  EXPECT_EQ(Kazoo(kCredentials, {"restore:" + path}).at("restore " + path), "ok");
  ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 60; }));
  std::set<int64_t> expected;
  for (int64_t i = 0; i < 60; ++i) expected.insert(i);
  EXPECT_EQ(t->Unique(0), expected);  // nothing lost, nothing skipped
  t->spout->Close();

  // A restarted spout resumes at 60: no record is read again or missed.
  ASSERT_TRUE(kafka_->Produce("acl-denied", 0, NumberedRecords(60, 65)).ok());
  auto next = Spout("acl-denied", zk_root, kCredentials);
  ASSERT_TRUE(next->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 65; }));
  EXPECT_EQ(*next->Unique(0).begin(), 60);
  next->spout->Close();
}

TEST_F(ZkAclTest, SpoutRepairsADirectoryMadeOpenFirstAndRefusesAPlantedOffset) {
  ASSERT_TRUE(kafka_->CreateTopic("own-open", 1).ok());
  ASSERT_TRUE(kafka_->Produce("own-open", 0, NumberedRecords(0, 20)).ok());
  const std::string zk_root = root_ + "-pre";
  const std::string dir = zk_root + "/spout";
  const std::string path = OffsetPath(zk_root, "own-open");
  // Before the spout ever ran: its directory, open to everyone, holding an
  // offset node that would make it start over from 0.
  ASSERT_EQ(Anonymous("mkopen", dir), "ok");
  ASSERT_EQ(Anonymous("plant", path), "ok");

  auto t = Spout("own-open", zk_root, kCredentials);
  const std::string blocked = "tempest_kafka_spout_partition_blocked";
  ASSERT_TRUE(t->RunUntil(
      kWait, [&] { return HasError(*t, path) && CounterValue(blocked, "own-open") == 1; }));
  EXPECT_TRUE(HasError(*t, "refusing to use it")) << t->collector.errors.back();
  EXPECT_TRUE(t->Unique(0).empty());  // nothing read from a planted position
  // The directories were repaired: the attacker can neither plant nor delete
  // there any more.
  EXPECT_FALSE(OpenToOthers(zk_root));
  EXPECT_FALSE(OpenToOthers(dir));
  EXPECT_EQ(Anonymous("create", dir), "NoAuthError");
  EXPECT_EQ(Anonymous("delete", path), "NoAuthError");

  // The operator removes the planted node: the spout takes the partition.
  ASSERT_TRUE(admin_->Delete(path).ok());
  ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 20; }));
  EXPECT_EQ(t->Unique(0).size(), 20u);
  EXPECT_EQ(CounterValue(blocked, "own-open"), 0);
  EXPECT_FALSE(OpenToOthers(path));
  EXPECT_EQ(Anonymous("delete", path), "NoAuthError");
  EXPECT_EQ(Anonymous("set", path), "NoAuthError");
  t->spout->Close();
}

TEST_F(ZkAclTest, SpoutRefusesADirectoryItCannotRepairUntilItIsRemoved) {
  ASSERT_TRUE(kafka_->CreateTopic("own-noadmin", 1).ok());
  ASSERT_TRUE(kafka_->Produce("own-noadmin", 0, NumberedRecords(0, 10)).ok());
  const std::string zk_root = root_ + "-noadmin";
  const std::string dir = zk_root + "/spout";
  // Writable and deletable by everyone, but nobody may change its ACL.
  ASSERT_EQ(Anonymous("mkopen", zk_root), "ok");
  ASSERT_EQ(Anonymous("mknoadmin", dir), "ok");

  auto t = Spout("own-noadmin", zk_root, kCredentials);
  const std::string blocked = "tempest_kafka_spout_partition_blocked";
  ASSERT_TRUE(t->RunUntil(kWait, [&] {
    return HasError(*t, "ZooKeeper node " + dir + " is writable by world:anyone (cdrw)") &&
           CounterValue(blocked, "own-noadmin") == 1;
  }));
  EXPECT_TRUE(HasError(*t, "refusing to use it: remove it or set its ACL to digest:tempest"));
  EXPECT_TRUE(t->Unique(0).empty());

  ASSERT_TRUE(admin_->Delete(dir).ok());  // the operator removes it
  const std::string path = OffsetPath(zk_root, "own-noadmin");
  ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 10; }));
  EXPECT_EQ(CounterValue(blocked, "own-noadmin"), 0);
  EXPECT_FALSE(OpenToOthers(dir));
  t->spout->Close();
}

TEST_F(ZkAclTest, ReadOnlyOwnershipNodeIsAnErrorNotASilentStall) {
  ASSERT_TRUE(kafka_->CreateTopic("own-owner", 1).ok());
  ASSERT_TRUE(kafka_->Produce("own-owner", 0, NumberedRecords(0, 15)).ok());
  const std::string zk_root = root_ + "-owner";
  const std::string owner = spout::OwnerNodePath(zk_root, "spout", "own-owner", 0, false);
  ASSERT_EQ(Anonymous("mkreadonly", owner), "ok");

  auto t = Spout("own-owner", zk_root, kCredentials);
  const std::string blocked = "tempest_kafka_spout_partition_blocked";
  ASSERT_TRUE(t->RunUntil(kWait, [&] {
    return HasError(*t, "ZooKeeper ownership node " + owner) &&
           CounterValue(blocked, "own-owner") == 1;
  }));
  EXPECT_TRUE(t->Unique(0).empty());
  // Its parents were open and are the spout's now; the node itself goes.
  EXPECT_EQ(Anonymous("create", zk_root + "/spout"), "NoAuthError");
  ASSERT_TRUE(admin_->Delete(owner).ok());
  const std::string path = OffsetPath(zk_root, "own-owner");
  ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 15; }));
  EXPECT_EQ(t->Unique(0).size(), 15u);
  EXPECT_EQ(CounterValue(blocked, "own-owner"), 0);
  t->spout->Close();
}

TEST_F(ZkAclTest, NimbusRepairsOrRefusesClusterDirectoriesMadeByOthers) {
  const std::string storms = root_ + "/storms";
  // Refused: a storms/ nobody but its maker may re-ACL, one line naming it.
  ASSERT_EQ(Anonymous("mkopen", root_), "ok");
  ASSERT_EQ(Anonymous("mknoadmin", storms), "ok");
  auto refused = nimbus::Nimbus::Create(NimbusConfig());
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(refused.status())) << refused.status();
  const std::string message(refused.status().message());
  EXPECT_NE(message.find("ZooKeeper node " + storms + " is writable by world:anyone (cdrw)"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  // The root was open and is nimbus's now: storms/ can no longer be
  // deleted and made again by anyone else.
  EXPECT_FALSE(OpenToOthers(root_));
  EXPECT_EQ(Anonymous("delete", storms), "NoAuthError");

  // Open to everyone (as a cluster that ran before the keys were set leaves
  // it), with a record planted in it: refused at every start until the
  // record is gone, and not repaired meanwhile.
  ASSERT_TRUE(admin_->Delete(storms).ok());
  ASSERT_TRUE(admin_->Create(storms, "", coord::ZkCreateOptions{.acl = coord::OpenAcl()}).ok());
  ASSERT_EQ(Anonymous("mkopen", storms + "/forged"), "ok");
  for (int start = 0; start < 2; ++start) {
    auto planted = nimbus::Nimbus::Create(NimbusConfig());
    ASSERT_FALSE(planted.ok());
    EXPECT_NE(std::string(planted.status().message()).find(storms + "/forged"), std::string::npos)
        << planted.status();
  }
  EXPECT_TRUE(OpenToOthers(storms));

  // Once the planted record is gone nimbus repairs storms/, starts and works
  // as always.
  ASSERT_TRUE(admin_->Delete(storms + "/forged").ok());
  auto n = StartNimbus();
  ASSERT_NE(n, nullptr);
  EXPECT_FALSE(OpenToOthers(storms));
  EXPECT_EQ(Anonymous("create", storms), "NoAuthError");
  nimbus::SubmitRequest r;
  r.flux_text = testing::kGenSinkFlux;
  r.file_name = "demo.yaml";
  auto id = n->Submit(r);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(SecretOf(*id).size(), 32u);
  EXPECT_EQ(Anonymous("delete", storms + "/" + *id), "NoAuthError");
}

TEST_F(ZkAclTest, ATopologyIdentityReadsItsOwnNodesOnlyAndWritesNoClusterState) {
  auto n = StartNimbus();
  ASSERT_NE(n, nullptr);
  // Room for three topologies: another supervisor with four more slots.
  v1::SupervisorInfo more;
  more.set_supervisor_id("sup-b");
  more.set_hostname("127.0.0.1");
  for (int port = 6702; port < 6706; ++port) more.add_slot_ports(port);
  coord::ZkCreateOptions ephemeral;
  ephemeral.mode = coord::ZkCreateMode::kEphemeral;
  ASSERT_TRUE(admin_->Create(root_ + "/supervisors/sup-b", more.SerializeAsString(), ephemeral).ok());
  nimbus::SubmitRequest r;
  r.flux_text = testing::kGenSinkFlux;
  r.file_name = "demo.yaml";
  r.name = "ident-a";
  auto a = n->Submit(r);
  ASSERT_TRUE(a.ok()) << a.status();
  r.name = "ident-b";
  auto b = n->Submit(r);
  ASSERT_TRUE(b.ok()) << b.status();
  // A topology that names its own identity keeps it.
  r.name = "ident-c";
  r.config_overrides = {{"storm.zookeeper.topology.auth.scheme", "\"digest\""},
                        {"storm.zookeeper.topology.auth.payload", "\"own-c:own-c-password\""}};
  auto c = n->Submit(r);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(SecretOf(*a).size(), 32u);
  ASSERT_EQ(SecretOf(*b).size(), 32u);
  ASSERT_EQ(SecretOf(*c).size(), 32u);

  // Nimbus made one identity per topology, none of them the cluster's.
  const std::string identity_a = IdentityOf(*a);
  const std::string identity_b = IdentityOf(*b);
  EXPECT_EQ(identity_a.rfind("topology-ident-a-", 0), 0u) << "user part names the topology";
  EXPECT_GT(identity_a.size() - identity_a.find(':'), 40u) << "a 32-byte random password";
  EXPECT_NE(identity_a, identity_b);
  EXPECT_NE(identity_a, kCredentials);
  EXPECT_EQ(IdentityOf(*c), "own-c:own-c-password");

  const std::string at = root_ + "/";
  const std::vector<std::string> probes = {
      // What its workers need: its definition and assignment, adding beats
      // and errors under its own directories.
      "get:" + at + "storms/" + *a, "get:" + at + "assignments/" + *a,
      "create:" + at + "workerbeats/" + *a, "create:" + at + "errors/" + *a,
      // Another topology's assignment (its transport secret), definition,
      // identity, beats: refused. So is its own identity node.
      "get:" + at + "assignments/" + *b, "get:" + at + "storms/" + *b,
      "get:" + at + "credentials/ident-b", "get:" + at + "credentials/ident-a",
      "create:" + at + "workerbeats/" + *b, "create:" + at + "errors/" + *b,
      // Cluster state: no write anywhere, not even to its own records.
      "set:" + at + "assignments/" + *a, "set:" + at + "storms/" + *a,
      "delete:" + at + "workerbeats/" + *a, "create:" + at + "storms",
      "create:" + at + "assignments", "create:" + at + "credentials", "create:" + at + "workerbeats",
      "create:" + at + "errors", "create:" + at + "blobs", "children:" + at + "supervisors",
      "get:" + at + "supervisors/sup-a", "set:" + root_, "create:" + root_};
  const auto seen = Kazoo(identity_a, probes);
  for (size_t i = 0; i < probes.size(); ++i) {
    std::string key = probes[i];
    key[key.find(':')] = ' ';
    const std::string expected = i < 4 ? "ok" : "NoAuthError";
    EXPECT_EQ(seen.count(key) ? seen.at(key) : "missing", expected) << probes[i];
  }
  // The user-given identity works the same way for its own topology only.
  const auto own_c = Kazoo("own-c:own-c-password",
                           {"get:" + at + "assignments/" + *c, "get:" + at + "assignments/" + *a});
  EXPECT_EQ(own_c.at("get " + at + "assignments/" + *c), "ok");
  EXPECT_EQ(own_c.at("get " + at + "assignments/" + *a), "NoAuthError");

  // The identity belongs to the name: killed and submitted again, the
  // topology gets it back (its spouts' offset nodes are that identity's).
  ASSERT_TRUE(n->Kill(*b, 0).ok());
  ASSERT_TRUE(Eventually(kWait, [&] {
    return absl::IsNotFound(admin_->Get(at + "storms/" + *b).status());
  }));
  r.name = "ident-b";
  r.config_overrides.clear();
  auto b_again = n->Submit(r);
  ASSERT_TRUE(b_again.ok()) << b_again.status();
  EXPECT_NE(*b_again, *b);
  EXPECT_EQ(IdentityOf(*b_again), identity_b);
  ASSERT_EQ(SecretOf(*b_again).size(), 32u);
  EXPECT_EQ(Kazoo(identity_b, {"get:" + at + "assignments/" + *b_again})
                .at("get " + at + "assignments/" + *b_again),
            "ok");
}

TEST_F(ZkAclTest, ASpoutOnATopologyIdentityCommitsAndTheClusterIdentityKeepsControl) {
  ASSERT_TRUE(kafka_->CreateTopic("acl-ident", 1).ok());
  ASSERT_TRUE(kafka_->Produce("acl-ident", 0, NumberedRecords(0, 20)).ok());
  const std::string zk_root = root_ + "-ident-offsets";
  const std::string path = OffsetPath(zk_root, "acl-ident");
  // As a worker has it after its supervisor's handoff: the topology's
  // identity, and the cluster's digest id (not its password) to trust.
  coord::ZkAuthConfig worker_auth = Auth("topology-x:x-password");
  worker_auth.trusted_digest_ids = {coord::ZkDigestId(kCredentials)};
  coord::SetProcessTopologyZkAuth(worker_auth);
  {
    auto t = Spout("acl-ident", zk_root, "");
    ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 20; }));
    EXPECT_TRUE(t->collector.errors.empty());
    t->spout->Close();
  }
  // Anyone else, another topology's identity included, is shut out.
  for (const std::string& who : {std::string("-"), std::string("topology-y:y-password")}) {
    const auto seen =
        Kazoo(who, {"get:" + path, "set:" + path, "create:" + zk_root + "/spout",
                    "delete:" + zk_root + "/spout"});
    for (const auto& [probe, result] : seen) EXPECT_EQ(result, "NoAuthError") << who << " " << probe;
  }
  // The cluster identity reads and sets what the topology's spout made ...
  testing::CommandRun shown = OffsetsAsCluster(
      {"show", "--zk", zk_->ConnectString(), "--root", zk_root, "--id", "spout", "--json"},
      "ident-show");
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("\"committed_offset\":20"), std::string::npos) << shown.out;
  testing::CommandRun set = OffsetsAsCluster(
      {"set", "--zk", zk_->ConnectString(), "--root", zk_root, "--id", "spout", "--topic",
       "acl-ident", "--partition", "0", "--offset", "5", "--execute"},
      "ident-set");
  EXPECT_EQ(set.exit_code, 0) << set.out << set.err;
  EXPECT_EQ(StoredOffset(*admin_, path), 5);
  // ... and the topology's spout still writes after that.
  {
    auto t = Spout("acl-ident", zk_root, "");
    ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 20; }));
    EXPECT_EQ(*t->Unique(0).begin(), 5);
    t->spout->Close();
  }
  coord::SetProcessTopologyZkAuth({});
}

TEST_F(ZkAclTest, TopologiesOfTheirOwnIdentitiesShareOneZkRoot) {
  // The default zkRoot (/kafkaspout) holds every topology's spouts: the
  // second topology's identity must be able to make its own level there,
  // and neither may touch the other's.
  ASSERT_TRUE(kafka_->CreateTopic("acl-shared", 1).ok());
  ASSERT_TRUE(kafka_->Produce("acl-shared", 0, NumberedRecords(0, 10)).ok());
  const std::string zk_root = root_ + "-shared-root";
  const std::string path_a = spout::OffsetNodePath(zk_root, "spout-a", "acl-shared", 0, false);
  const std::string path_b = spout::OffsetNodePath(zk_root, "spout-b", "acl-shared", 0, false);
  for (const auto& [payload, id, path] :
       {std::tuple{"topology-a:a-password", "spout-a", path_a},
        std::tuple{"topology-b:b-password", "spout-b", path_b}}) {
    coord::ZkAuthConfig worker_auth = Auth(payload);
    worker_auth.trusted_digest_ids = {coord::ZkDigestId(kCredentials)};
    coord::SetProcessTopologyZkAuth(worker_auth);
    auto t = Spout("acl-shared", zk_root, "", nullptr, id);
    ASSERT_TRUE(t->RunUntil(kWait, [&] { return StoredOffset(*admin_, path) == 10; })) << id;
    EXPECT_TRUE(t->collector.errors.empty()) << id;
    t->spout->Close();
  }
  coord::SetProcessTopologyZkAuth({});
  // Each topology, and anyone without credentials, is shut out of the other's
  // level; nobody but the cluster may delete or re-ACL the shared root.
  const std::map<std::string, std::string> others = {
      {"topology-b:b-password", path_a}, {"topology-a:a-password", path_b}, {"-", path_a}};
  for (const auto& [who, path] : others) {
    const std::string level = path.substr(0, path.rfind('/'));
    const auto seen = Kazoo(who, {"set:" + path, "delete:" + path, "create:" + level,
                                  "delete:" + level, "set:" + zk_root});
    for (const auto& [probe, result] : seen) EXPECT_EQ(result, "NoAuthError") << who << " " << probe;
  }
}

}  // namespace
}  // namespace tempest
