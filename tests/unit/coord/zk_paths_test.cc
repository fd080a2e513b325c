#include "common/coord/zk_paths.h"

#include "common/coord/zk_status.h"
#include "gtest/gtest.h"

namespace tempest::coord {
namespace {

TEST(ZkPathsTest, ValidatesPaths) {
  EXPECT_TRUE(ValidatePath("/").ok());
  EXPECT_TRUE(ValidatePath("/a/b_c/0000000001").ok());
  EXPECT_FALSE(ValidatePath("").ok());
  EXPECT_FALSE(ValidatePath("a/b").ok());
  EXPECT_FALSE(ValidatePath("/a/").ok());
  EXPECT_FALSE(ValidatePath("/a//b").ok());
  EXPECT_FALSE(ValidatePath("/a/../b").ok());
  EXPECT_FALSE(ValidatePath("/a/./b").ok());
}

TEST(ZkPathsTest, JoinParentBaseAncestors) {
  EXPECT_EQ(JoinPath("/", "a"), "/a");
  EXPECT_EQ(JoinPath("/a/b", "c"), "/a/b/c");
  EXPECT_EQ(ParentPath("/a/b/c"), "/a/b");
  EXPECT_EQ(ParentPath("/a"), "/");
  EXPECT_EQ(ParentPath("/"), "/");
  EXPECT_EQ(BaseName("/a/b/c"), "c");
  EXPECT_EQ(Ancestors("/a/b/c"), (std::vector<std::string>{"/a", "/a/b"}));
  EXPECT_TRUE(Ancestors("/a").empty());
}

TEST(ZkPathsTest, SequenceNumbersSortNumerically) {
  EXPECT_EQ(SequenceNumber("n_0000000042"), 42);
  EXPECT_EQ(SequenceNumber("n_42"), std::nullopt);
  EXPECT_EQ(SequenceNumber("lock-000000001x"), std::nullopt);
  std::vector<std::string> names = {"b_0000000010", "a_0000000002", "zzz", "c_0000000001"};
  SortBySequence(names);
  EXPECT_EQ(names,
            (std::vector<std::string>{"c_0000000001", "a_0000000002", "b_0000000010", "zzz"}));
}

TEST(ZkPathsTest, SplitsChroot) {
  std::string hosts, chroot;
  ASSERT_TRUE(SplitConnectString("127.0.0.1:1,127.0.0.1:2/tempest/x", &hosts, &chroot).ok());
  EXPECT_EQ(hosts, "127.0.0.1:1,127.0.0.1:2");
  EXPECT_EQ(chroot, "/tempest/x");
  ASSERT_TRUE(SplitConnectString("h:1", &hosts, &chroot).ok());
  EXPECT_EQ(chroot, "");
  EXPECT_FALSE(SplitConnectString("h:1/bad/", &hosts, &chroot).ok());
  EXPECT_FALSE(SplitConnectString("", &hosts, &chroot).ok());
}

TEST(ZkStatusTest, MapsCodes) {
  // Values from zookeeper.h (ZNONODE=-101 ...); the mapping is the contract.
  EXPECT_TRUE(ZkStatus(0, "get", "/a").ok());
  EXPECT_TRUE(absl::IsNotFound(ZkStatus(-101, "get", "/a")));
  EXPECT_TRUE(absl::IsAlreadyExists(ZkStatus(-110, "create", "/a")));
  EXPECT_TRUE(absl::IsAborted(ZkStatus(-103, "set", "/a")));
  EXPECT_TRUE(absl::IsUnavailable(ZkStatus(-4, "set", "/a")));    // ZCONNECTIONLOSS
  EXPECT_TRUE(absl::IsUnavailable(ZkStatus(-7, "set", "/a")));    // ZOPERATIONTIMEOUT
  EXPECT_TRUE(absl::IsUnavailable(ZkStatus(-112, "set", "/a")));  // ZSESSIONEXPIRED
  EXPECT_TRUE(absl::IsUnavailable(ZkStatus(-9, "set", "/a")));    // ZINVALIDSTATE
  EXPECT_TRUE(absl::IsPermissionDenied(ZkStatus(-102, "set", "/a")));
  EXPECT_TRUE(absl::IsFailedPrecondition(ZkStatus(-111, "delete", "/a")));
  EXPECT_EQ(ZkCodeOf(ZkStatus(-4, "set", "/a")), -4);
  EXPECT_EQ(ZkCodeName(-4), "ZCONNECTIONLOSS");
  EXPECT_EQ(ZkCodeOf(absl::UnavailableError("x")), std::nullopt);
  EXPECT_TRUE(IsAmbiguousWriteCode(-4));
  EXPECT_TRUE(IsAmbiguousWriteCode(-7));
  EXPECT_FALSE(IsAmbiguousWriteCode(-101));
}

}  // namespace
}  // namespace tempest::coord
