// The ownership rule for nodes Tempest writes under: which ACL entries count
// as someone else's, judged against the ACL ZkAclPolicy gives the node.
#include "common/coord/zk_acl_check.h"

#include <gtest/gtest.h>

namespace tempest::coord {
namespace {

constexpr int kCdrw = kZkPermAll & ~kZkPermAdmin;

ZkAclEntry Us() { return {kZkPermAll, "digest", DigestId("tempest:cluster-secret")}; }

ZkAclPolicy Authenticated(bool world_readable = false) {
  return ZkAclPolicy{.authenticated = true, .legacy_world_readable = world_readable};
}

TEST(ZkAclCheckTest, DigestIdIsWhatZooKeeperStoresForTheCredential) {
  // ZooKeeper's own documentation example (super:test) and kazoo's
  // make_digest_acl_credential for the test cluster's credentials.
  EXPECT_EQ(DigestId("super:test"), "super:D/InIHSb7yEEbrWz8b9l71RjZJU=");
  EXPECT_EQ(DigestId("tempest:cluster-secret"), "tempest:Q34tJR1kg0qEyY1xmyZmBTLHW0I=");
}

TEST(ZkAclCheckTest, MessagesNameIdentitiesWithoutTheHash) {
  EXPECT_EQ(PermLetters(kZkPermAll), "cdrwa");
  EXPECT_EQ(PermLetters(kZkPermRead), "r");
  EXPECT_EQ(PermLetters(0), "none");
  EXPECT_EQ(DescribeAcl({{kZkPermAll, "world", "anyone"}, Us()}),
            "world:anyone (cdrwa), digest:tempest (cdrwa)");
  EXPECT_EQ(DescribeAcl({}), "an empty ACL");
}

TEST(ZkAclCheckTest, WhatThePolicyWouldCreateIsOwned) {
  const ZkAclFindings f = InspectAcl({Us()}, Authenticated().For(ZkNodeAccess::kPrivate), {Us()});
  EXPECT_TRUE(f.others.empty());
  EXPECT_EQ(f.own_perms, kZkPermAll);
  EXPECT_TRUE(f.trusted_present);
  // World read on a legacy-readable node is nobody's write access.
  const ZkAclFindings legacy =
      InspectAcl({Us(), {kZkPermRead, "world", "anyone"}},
                 Authenticated(true).For(ZkNodeAccess::kLegacyReadable), {Us()});
  EXPECT_TRUE(legacy.others.empty());
}

TEST(ZkAclCheckTest, OpenNodesAreOthersButStillGiveUsAdmin) {
  const ZkAclFindings f = InspectAcl({{kZkPermAll, "world", "anyone"}},
                                     Authenticated().For(ZkNodeAccess::kPrivate), {Us()});
  ASSERT_EQ(f.others.size(), 1u);
  EXPECT_EQ(f.others[0].scheme, "world");
  EXPECT_EQ(f.own_perms, kZkPermAll);  // so the node can be repaired
  EXPECT_FALSE(f.trusted_present);
}

TEST(ZkAclCheckTest, EveryModifyingPermissionOfAStrangerCounts) {
  for (int perm : {kZkPermWrite, kZkPermCreate, kZkPermDelete, kZkPermAdmin}) {
    const ZkAclFindings f = InspectAcl({Us(), {perm | kZkPermRead, "digest", "mallory:abc="}},
                                       Authenticated().For(ZkNodeAccess::kPrivate), {Us()});
    EXPECT_EQ(f.others.size(), 1u) << PermLetters(perm);
  }
  const ZkAclFindings ip = InspectAcl({Us(), {kCdrw, "ip", "10.0.0.1"}},
                                      Authenticated().For(ZkNodeAccess::kPrivate), {Us()});
  EXPECT_EQ(ip.others.size(), 1u);
}

TEST(ZkAclCheckTest, ReadOnlyNodeLeavesUsWithoutCreate) {
  const ZkAclFindings f = InspectAcl({{kZkPermRead, "world", "anyone"}},
                                     Authenticated().For(ZkNodeAccess::kPrivate), {Us()});
  EXPECT_TRUE(f.others.empty());
  EXPECT_EQ(f.own_perms, kZkPermRead);
  EXPECT_FALSE(f.trusted_present);
}

TEST(ZkAclCheckTest, TrustedIdentitiesComeFromThePolicysAcl) {
  // An identity the policy names explicitly (not through `auth`) is trusted
  // as well: the check has no list of its own.
  const ZkAclEntry other_daemon{kZkPermAll, "digest", "topology-7:xyz="};
  const ZkAcl policy_acl = {{kZkPermAll, "auth", ""}, other_daemon};
  const ZkAclFindings f = InspectAcl({Us(), other_daemon}, policy_acl, {Us()});
  EXPECT_TRUE(f.others.empty());
  // ... and the same identity is a stranger where the policy does not name it.
  const ZkAclFindings g =
      InspectAcl({Us(), other_daemon}, Authenticated().For(ZkNodeAccess::kPrivate), {Us()});
  EXPECT_EQ(g.others.size(), 1u);
}

TEST(ZkAclCheckTest, WorldIsTrustedOnlyForWhatThePolicyGivesIt) {
  // A legacy-readable node may be world-readable; world:anyone with every
  // permission is still someone else's write access.
  const ZkAclFindings f = InspectAcl({Us(), {kZkPermAll, "world", "anyone"}},
                                     Authenticated(true).For(ZkNodeAccess::kLegacyReadable),
                                     {Us()});
  ASSERT_EQ(f.others.size(), 1u);
  EXPECT_EQ(f.others[0].scheme, "world");
}

TEST(ZkAclCheckTest, ASharedParentLetsEveryTopologyCreateButOnlyTheClusterChangeIt) {
  const std::string cluster = DigestId("tempest:cluster-secret");
  const ZkAclEntry topology_a{kZkPermAll, "digest", DigestId("topology-a:pw-a")};
  const ZkAclEntry topology_b{kZkPermAll, "digest", DigestId("topology-b:pw-b")};
  ZkAclPolicy b = Authenticated();
  b.trusted_digest_ids = {cluster};
  // What topology A's spout made zkRoot with: read and create for A and for
  // everyone, everything for the cluster.
  ZkAclPolicy a = b;
  const ZkAcl made_by_a = {{kZkPermRead | kZkPermCreate, "digest", topology_a.id},
                           {kZkPermRead | kZkPermCreate, "world", "anyone"},
                           {kZkPermAll, "digest", cluster}};
  EXPECT_EQ(a.For(ZkNodeAccess::kSharedParent).size(), 3u);
  // Topology B may use it: nobody but the cluster may write, delete or re-ACL it.
  const ZkAclFindings f = InspectAcl(made_by_a, b.For(ZkNodeAccess::kSharedParent), {topology_b});
  EXPECT_TRUE(f.others.empty());
  EXPECT_EQ(f.own_perms, kZkPermRead | kZkPermCreate);
  // Another topology with delete on it is someone else's control of the level.
  ZkAcl tampered = made_by_a;
  tampered[0].perms = kZkPermAll;
  EXPECT_EQ(InspectAcl(tampered, b.For(ZkNodeAccess::kSharedParent), {topology_b}).others.size(),
            1u);
  // Without per-topology identities a shared parent is an ordinary legacy one.
  EXPECT_EQ(Authenticated().For(ZkNodeAccess::kSharedParent),
            Authenticated().For(ZkNodeAccess::kLegacyReadable));
}

}  // namespace
}  // namespace tempest::coord
