// The rules ZkSession applies after a failed request: which failures are
// retried, and how the read-back of an ambiguous write is judged. Pure; no
// server.

#include "common/coord/ambiguous_write.h"

#include <zookeeper/zookeeper.h>

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tempest::coord {
namespace {

ZkNode Node(std::string data, int32_t version, int64_t owner = 0) {
  ZkNode n;
  n.data = std::move(data);
  n.stat.version = version;
  n.stat.ephemeral_owner = owner;
  return n;
}

TEST(AmbiguousWriteTest, ClassifyFailure) {
  struct Case {
    int rc;
    bool write;
    ZkFailureKind want;
  };
  const Case cases[] = {
      {ZCONNECTIONLOSS, false, ZkFailureKind::kRetry},
      {ZOPERATIONTIMEOUT, false, ZkFailureKind::kRetry},
      {ZSESSIONEXPIRED, false, ZkFailureKind::kRetry},
      {ZINVALIDSTATE, false, ZkFailureKind::kRetry},
      {ZSESSIONMOVED, false, ZkFailureKind::kRetry},
      {ZTHROTTLEDOP, false, ZkFailureKind::kRetry},
      {ZNEWCONFIGNOQUORUM, false, ZkFailureKind::kRetry},
      {ZNOTREADONLY, false, ZkFailureKind::kFinal},
      {ZNONODE, false, ZkFailureKind::kFinal},
      {ZNOAUTH, false, ZkFailureKind::kFinal},
      {ZCONNECTIONLOSS, true, ZkFailureKind::kAmbiguous},
      {ZOPERATIONTIMEOUT, true, ZkFailureKind::kAmbiguous},
      {ZSESSIONEXPIRED, true, ZkFailureKind::kRetryUnlessFenced},
      {ZINVALIDSTATE, true, ZkFailureKind::kRetryUnlessFenced},
      {ZTHROTTLEDOP, true, ZkFailureKind::kRetryUnlessFenced},
      {ZNOTREADONLY, true, ZkFailureKind::kRetryUnlessFenced},
      {ZNEWCONFIGNOQUORUM, true, ZkFailureKind::kRetryUnlessFenced},
      {ZSESSIONMOVED, true, ZkFailureKind::kRetryUnlessFenced},
      {ZBADVERSION, true, ZkFailureKind::kFinal},
      {ZNODEEXISTS, true, ZkFailureKind::kFinal},
      {ZNONODE, true, ZkFailureKind::kFinal},
      {ZNOTEMPTY, true, ZkFailureKind::kFinal},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ClassifyFailure(c.rc, c.write), c.want) << c.rc << " write=" << c.write;
  }
  EXPECT_TRUE(EndsBoundSession(ZSESSIONEXPIRED));
  EXPECT_TRUE(EndsBoundSession(ZINVALIDSTATE));
  EXPECT_FALSE(EndsBoundSession(ZTHROTTLEDOP));
  EXPECT_FALSE(EndsBoundSession(ZSESSIONMOVED));
}

TEST(AmbiguousWriteTest, ResolveSet) {
  struct Case {
    int expected;
    ZkNode read_back;
    WriteOutcome want;
  };
  const Case cases[] = {
      {3, Node("ours", 4), WriteOutcome::kApplied},
      {3, Node("theirs", 4), WriteOutcome::kUnknown},  // someone else moved it to 4
      {3, Node("old", 3), WriteOutcome::kNotApplied},
      {3, Node("ours", 3), WriteOutcome::kNotApplied},  // same data, but not our version step
      {3, Node("ours", 5), WriteOutcome::kUnknown},
      {3, Node("x", 2), WriteOutcome::kUnknown},
      {-1, Node("ours", 7), WriteOutcome::kApplied},
      {-1, Node("other", 7), WriteOutcome::kNotApplied},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ResolveSet(c.expected, "ours", c.read_back), c.want)
        << "expected " << c.expected << ", read " << c.read_back.data << "@"
        << c.read_back.stat.version;
  }
}

TEST(AmbiguousWriteTest, ResolveCreate) {
  constexpr int64_t kUs = 0x51, kOther = 0x77;
  struct Case {
    ZkCreateMode mode;
    std::optional<ZkNode> read_back;
    WriteOutcome want;
  };
  const Case cases[] = {
      {ZkCreateMode::kPersistent, std::nullopt, WriteOutcome::kNotApplied},
      {ZkCreateMode::kPersistent, Node("ours", 0), WriteOutcome::kApplied},
      {ZkCreateMode::kPersistent, Node("theirs", 0), WriteOutcome::kConflict},
      {ZkCreateMode::kEphemeral, Node("ours", 0, kUs), WriteOutcome::kApplied},
      {ZkCreateMode::kEphemeral, Node("ours", 0, kOther), WriteOutcome::kConflict},
      {ZkCreateMode::kEphemeral, std::nullopt, WriteOutcome::kNotApplied},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ResolveCreate("ours", c.mode, kUs, c.read_back), c.want);
  }
  EXPECT_TRUE(IsOurCreate(Node("ours", 0, kUs), "ours", ZkCreateMode::kEphemeralSequential, kUs));
  EXPECT_FALSE(IsOurCreate(Node("ours", 0, 0), "ours", ZkCreateMode::kEphemeralSequential, kUs));
  EXPECT_TRUE(IsOurCreate(Node("ours", 0, 0), "ours", ZkCreateMode::kPersistentSequential, kUs));
}

TEST(AmbiguousWriteTest, SequentialCreateCandidatesAreOursNewestFirst) {
  const std::vector<std::string> children = {
      "lock-0000000002", "lock-0000000010", "other-0000000011", "lock-00000001",
      "lock-0000000001", "lock-x",          "lockx-0000000012",
  };
  EXPECT_EQ(SequentialCreateCandidates(children, "lock-"),
            (std::vector<std::string>{"lock-0000000010", "lock-0000000002", "lock-0000000001"}));
  EXPECT_TRUE(SequentialCreateCandidates({}, "lock-").empty());
}

TEST(AmbiguousWriteTest, ResolveDelete) {
  struct Case {
    int version;
    std::optional<ZkStat> read_back;
    WriteOutcome want;
  };
  ZkStat at2;
  at2.version = 2;
  const Case cases[] = {
      {2, std::nullopt, WriteOutcome::kApplied}, {-1, std::nullopt, WriteOutcome::kApplied},
      {2, at2, WriteOutcome::kNotApplied},       {3, at2, WriteOutcome::kUnknown},
      {-1, at2, WriteOutcome::kNotApplied},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ResolveDelete(c.version, c.read_back), c.want) << c.version;
  }
}

TEST(AmbiguousWriteTest, MultiIsJudgedByItsFirstReadableWrite) {
  struct Case {
    std::vector<ZkOp> ops;
    std::optional<size_t> probe;
    WriteOutcome without_probe;
  };
  const Case cases[] = {
      {{ZkOp::Check("/o", 1), ZkOp::Set("/a", "x", 4)}, 1, WriteOutcome::kUnknown},
      {{ZkOp::Check("/o", 1), ZkOp::Set("/a", "x", -1), ZkOp::Create("/b", "y")},
       2,
       WriteOutcome::kUnknown},
      {{ZkOp::Delete("/a"), ZkOp::Create("/s-", "y", ZkCreateMode::kPersistentSequential)},
       std::nullopt,
       WriteOutcome::kUnknown},
      {{ZkOp::Check("/o", 1), ZkOp::Check("/p", 0)}, std::nullopt, WriteOutcome::kNotApplied},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(MultiProbeIndex(cases[i].ops), cases[i].probe) << i;
    EXPECT_EQ(ResolveMultiWithoutProbe(cases[i].ops), cases[i].without_probe) << i;
  }
}

TEST(AmbiguousWriteTest, ResolveMultiProbe) {
  constexpr int64_t kUs = 0x51;
  const ZkOp set = ZkOp::Set("/a", "ours", 4);
  const ZkOp create = ZkOp::Create("/b", "ours", ZkCreateMode::kEphemeral);
  struct Case {
    const ZkOp* probe;
    absl::StatusOr<ZkNode> read_back;
    WriteOutcome want;
  };
  const Case cases[] = {
      {&set, Node("ours", 5), WriteOutcome::kApplied},
      {&set, Node("old", 4), WriteOutcome::kNotApplied},
      {&set, Node("theirs", 6), WriteOutcome::kUnknown},
      {&set, absl::NotFoundError("gone"), WriteOutcome::kUnknown},
      {&set, absl::UnavailableError("down"), WriteOutcome::kUnknown},
      {&create, Node("ours", 0, kUs), WriteOutcome::kApplied},
      {&create, Node("ours", 0, 0x99), WriteOutcome::kUnknown},  // a conflict tells nothing
      {&create, absl::NotFoundError("absent"), WriteOutcome::kNotApplied},
      {&create, absl::UnavailableError("down"), WriteOutcome::kUnknown},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    EXPECT_EQ(ResolveMultiProbe(*cases[i].probe, kUs, cases[i].read_back), cases[i].want) << i;
  }
}

TEST(AmbiguousWriteTest, OutcomeLabelsAreTheMetricLabels) {
  EXPECT_EQ(WriteOutcomeLabel(WriteOutcome::kApplied), "applied");
  EXPECT_EQ(WriteOutcomeLabel(WriteOutcome::kNotApplied), "not_applied");
  EXPECT_EQ(WriteOutcomeLabel(WriteOutcome::kConflict), "conflict");
  EXPECT_EQ(WriteOutcomeLabel(WriteOutcome::kUnknown), "unknown");
}

}  // namespace
}  // namespace tempest::coord
