// Storm's storm.zookeeper.auth.* keys, the ACL rule that follows from them, and
// per-topology identities.
#include "common/coord/zk_auth.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "common/api/config.h"
#include "common/coord/cluster_zk_config.h"
#include "common/coord/topology_identity.h"
#include "common/core/config/secret_config.h"
#include "tests/support/temp_dir.h"

namespace tempest::coord {
namespace {

api::Config WithAuth(std::string scheme, std::string payload) {
  api::Config c;
  if (!scheme.empty()) c.Set(kZkAuthSchemeKey, scheme);
  if (!payload.empty()) c.Set(kZkAuthPayloadKey, payload);
  return c;
}

TEST(ZkAuthConfigTest, NoKeysMeansNoCredentials) {
  auto a = ZkAuthConfig::FromConfig(api::Config());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(a->enabled());
  EXPECT_FALSE(a->offsets_world_readable);
}

TEST(ZkAuthConfigTest, DigestPayloadIsKeptAndIdentityHidesThePassword) {
  auto a = ZkAuthConfig::FromConfig(WithAuth("digest", "tempest:s3cret:with:colons"));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(a->enabled());
  EXPECT_EQ(a->payload, "tempest:s3cret:with:colons");
  EXPECT_EQ(a->Identity(), "digest:tempest");
}

TEST(ZkAuthConfigTest, UnusableValuesAreRefusedNamingTheKey) {
  const std::pair<const char*, const char*> bad[] = {
      {"sasl", "u:p"}, {"digest", ""}, {"", "u:p"}, {"digest", "nocolon"},
      {"digest", ":p"}, {"digest", "u:"}};
  for (const auto& [scheme, payload] : bad) {
    auto a = ZkAuthConfig::FromConfig(WithAuth(scheme, payload));
    ASSERT_FALSE(a.ok()) << scheme << " " << payload;
    EXPECT_TRUE(absl::IsInvalidArgument(a.status()));
    EXPECT_NE(std::string(a.status().message()).find("storm.zookeeper.auth."), std::string::npos)
        << a.status();
    EXPECT_EQ(std::string(a.status().message()).find("p:"), std::string::npos);  // no password
  }
  api::Config not_a_string;
  not_a_string.Set(kZkAuthSchemeKey, int64_t{3});
  EXPECT_FALSE(ZkAuthConfig::FromConfig(not_a_string).ok());
  api::Config not_a_bool;
  not_a_bool.Set(kZkOffsetsWorldReadableKey, "sometimes");
  EXPECT_FALSE(ZkAuthConfig::FromConfig(not_a_bool).ok());
}

std::string WriteFile(const testing::TempDir& dir, const std::string& name,
                      const std::string& text, mode_t mode) {
  const std::string path = dir.File(name);
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(ZkAuthConfigTest, AuthFileGivesTheDigestPayload) {
  testing::TempDir dir("zk-auth-file");
  api::Config c;
  c.Set(kZkAuthFileKey, WriteFile(dir, "zk.auth", "tempest-dev:0123abcd\n", 0600));
  auto a = ZkAuthConfig::FromConfig(c);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->scheme, "digest");
  EXPECT_EQ(a->payload, "tempest-dev:0123abcd");
  auto direct = ZkAuthConfig::FromFile(dir.File("zk.auth"), "TEMPEST_ZK_AUTH_FILE");
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(direct->Identity(), "digest:tempest-dev");
}

TEST(ZkAuthConfigTest, UnusableAuthFilesAreRefusedWithOneLine) {
  testing::TempDir dir("zk-auth-file");
  const std::string missing = dir.File("missing");
  const std::string empty = WriteFile(dir, "empty", "\n", 0600);
  const std::string no_colon = WriteFile(dir, "nocolon", "tempest\n", 0600);
  const std::string huge = WriteFile(dir, "huge", std::string(5000, 'x'), 0600);
  for (const std::string& file : {missing, empty, no_colon, huge}) {
    api::Config c;
    c.Set(kZkAuthFileKey, file);
    auto a = ZkAuthConfig::FromConfig(c);
    ASSERT_FALSE(a.ok()) << file;
    const std::string message(a.status().message());
    EXPECT_NE(message.find("tempest.zookeeper.auth.file"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  // The file and an inline payload at once: which one is meant?
  api::Config both = WithAuth("digest", "u:p");
  both.Set(kZkAuthFileKey, WriteFile(dir, "ok", "u:p\n", 0600));
  EXPECT_FALSE(ZkAuthConfig::FromConfig(both).ok());
}

TEST(ZkAuthConfigTest, ClusterConfigCarriesTheCredentialsToEverySession) {
  api::Config c = WithAuth("digest", "tempest:pw");
  c.Set(kZkOffsetsWorldReadableKey, true);
  auto cluster = ClusterZkConfig::FromConfig(c);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_EQ(cluster->client.auth.payload, "tempest:pw");
  EXPECT_TRUE(cluster->client.auth.offsets_world_readable);
  EXPECT_FALSE(ClusterZkConfig::FromConfig(WithAuth("digest", "nopassword")).ok());
}

bool HasWorld(const ZkAcl& acl, int perms) {
  for (const ZkAclEntry& e : acl) {
    if (e.scheme == "world" && e.perms == perms) return true;
  }
  return false;
}

TEST(ZkAclPolicyTest, OpenWithoutCredentialsCreatorOnlyWithThem) {
  ZkAclPolicy open;
  EXPECT_TRUE(HasWorld(open.For(ZkNodeAccess::kPrivate), kZkPermAll));
  ZkAclPolicy secured{true, false};
  const ZkAcl priv = secured.For(ZkNodeAccess::kPrivate);
  ASSERT_EQ(priv.size(), 1u);
  EXPECT_EQ(priv[0].scheme, "auth");
  EXPECT_EQ(priv[0].perms, kZkPermAll);
  // Legacy readers get nothing unless the operator asked for it ...
  EXPECT_EQ(secured.For(ZkNodeAccess::kLegacyReadable).size(), 1u);
  // ... and then read only, never write.
  ZkAclPolicy legacy{true, true};
  const ZkAcl offsets = legacy.For(ZkNodeAccess::kLegacyReadable);
  EXPECT_TRUE(HasWorld(offsets, kZkPermRead));
  EXPECT_FALSE(HasWorld(offsets, kZkPermAll));
  EXPECT_EQ(legacy.For(ZkNodeAccess::kPrivate).size(), 1u);
}

TEST(ZkAclPolicyTest, TrustedIdsGetAllAndATopologyOnlyWhatItIsGranted) {
  ZkAclPolicy worker{true, false, {"tempest:hash="}};
  const ZkAcl acl = worker.For(ZkNodeAccess::kPrivate);
  ASSERT_EQ(acl.size(), 2u);
  EXPECT_EQ(acl[0].scheme, "auth");
  EXPECT_EQ(acl[1].scheme, "digest");
  EXPECT_EQ(acl[1].id, "tempest:hash=");
  EXPECT_EQ(acl[1].perms, kZkPermAll);

  ZkAclPolicy cluster{true, false};
  const ZkAcl granted = cluster.ForTopology(ZkNodeAccess::kPrivate, "topo:h=", kZkPermRead);
  ASSERT_EQ(granted.size(), 2u);
  EXPECT_EQ(granted[1].id, "topo:h=");
  EXPECT_EQ(granted[1].perms, kZkPermRead);
  // Without credentials there is nobody to grant to: the node is open.
  ZkAclPolicy open;
  const ZkAcl opened = open.ForTopology(ZkNodeAccess::kPrivate, "topo:h=", kZkPermRead);
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_TRUE(HasWorld(opened, kZkPermAll));
  EXPECT_EQ(cluster.ForTopology(ZkNodeAccess::kPrivate, "", kZkPermRead).size(), 1u);
}

TEST(ZkDigestIdTest, IsZooKeepersDigestOfUserAndPassword) {
  // The example ZooKeeper's documentation gives for its super user.
  EXPECT_EQ(ZkDigestId("super:admin"), "super:xQJmxLMiHGwaqBvst5y6rkB6HQs=");
  EXPECT_EQ(ZkDigestId("tempest:pw:with:colons").rfind("tempest:", 0), 0u);
}

TEST(TopologyIdentityTest, NewIdentitiesAreDigestsOfTheirOwnAndRoundTrip) {
  auto a = NewTopologyIdentity("billing");
  auto b = NewTopologyIdentity("billing");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->scheme, "digest");
  EXPECT_EQ(a->payload.rfind("topology-billing-", 0), 0u);
  EXPECT_NE(a->payload, b->payload);
  auto decoded = DecodeTopologyIdentity(EncodeTopologyIdentity(*a));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->payload, a->payload);
  for (const char* bad : {"", "digest", "digest nopassword", "ip 1.2.3.4:x", "digest :pw"}) {
    auto d = DecodeTopologyIdentity(bad);
    EXPECT_TRUE(absl::IsDataLoss(d.status())) << bad;
    EXPECT_EQ(std::string(d.status().message()).find("pw"), std::string::npos) << bad;
  }
}

TEST(TopologyIdentityTest, TheNameOfAnIdIsWhatPrecedesItsCounterAndSeconds) {
  EXPECT_EQ(TopologyNameOfId("wordcount-3-1700000000"), "wordcount");
  EXPECT_EQ(TopologyNameOfId("my-pipe-line-12-1700000000"), "my-pipe-line");
  EXPECT_EQ(TopologyNameOfId("no-counter"), "no-counter");
  EXPECT_EQ(TopologyNameOfId("-1-2"), "-1-2");
}

TEST(TopologyIdentityTest, TheWorkerHandoffCarriesTheIdentityAndTheTrustedIdOnly) {
  WorkerHandoff h;
  h.topology.scheme = "digest";
  h.topology.payload = "topo:secret";
  h.cluster_digest_id = ZkDigestId("tempest:cluster");
  const std::string text = EncodeWorkerHandoff(h);
  EXPECT_EQ(text.find("cluster"), std::string::npos) << "the cluster's password stays behind";
  auto back = DecodeWorkerHandoff(text);
  ASSERT_TRUE(back.ok() && back->has_value()) << back.status();
  EXPECT_EQ((*back)->topology.payload, "topo:secret");
  EXPECT_EQ((*back)->cluster_digest_id, h.cluster_digest_id);
  auto none = DecodeWorkerHandoff("");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(DecodeWorkerHandoff("payload topo:secret\n").ok()) << "no scheme";
  EXPECT_FALSE(DecodeWorkerHandoff("scheme digest\npayload x\n").ok()) << "not user:password";
  EXPECT_FALSE(DecodeWorkerHandoff("scheme digest\nextra 1\n").ok());
}

TEST(ZkAuthConfigTest, TopologyKeysAreCheckedLikeTheClusterKeys) {
  api::Config c;
  c.Set(kZkTopologyAuthSchemeKey, "digest");
  c.Set(kZkTopologyAuthPayloadKey, "topo:pw");
  auto ok = ZkAuthConfig::TopologyFromConfig(c);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->payload, "topo:pw");
  c.Set(kZkTopologyAuthPayloadKey, "nopassword");
  auto bad = ZkAuthConfig::TopologyFromConfig(c);
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_NE(std::string(bad.status().message()).find("storm.zookeeper.topology.auth.payload"),
            std::string::npos);
  EXPECT_FALSE(ZkAuthConfig::FromConfig(c)->enabled()) << "the cluster keys are separate";
}

TEST(SecretConfigTest, CredentialKeysNeverReachAComponent) {
  api::Config c;
  c.Set(kZkAuthSchemeKey, "digest");
  c.Set(kZkAuthPayloadKey, "tempest:pw");
  c.Set(kZkTopologyAuthPayloadKey, "topo:pw");
  c.Set("tempest.api.token.file", "/etc/tempest/api.token");
  c.Set("drpc.https.keystore.password", "x");
  c.Set("my.db.Password", "x");
  c.Set("app.client.secret.value", "x");
  c.Set("topology.workers", int64_t{2});
  c.Set("topology.environment", "kept");
  c.Set(kZkOffsetsWorldReadableKey, true);
  const api::Config kept = core::WithoutSecrets(c);
  EXPECT_EQ(kept.size(), 3u);
  EXPECT_TRUE(kept.Has("topology.workers"));
  EXPECT_TRUE(kept.Has("topology.environment"));
  EXPECT_TRUE(kept.Has(kZkOffsetsWorldReadableKey));
  EXPECT_TRUE(core::IsSecretConfigKey("storm.zookeeper.auth.scheme")) << "the whole auth family";
}

}  // namespace
}  // namespace tempest::coord
