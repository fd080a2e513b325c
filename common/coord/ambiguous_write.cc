#include "common/coord/ambiguous_write.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>

#include "common/coord/zk_paths.h"
#include "common/coord/zk_status.h"

namespace tempest::coord {

namespace {

// Codes after which a read may simply be sent again.
bool RetriableRead(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED ||
         rc == ZINVALIDSTATE || rc == ZSESSIONMOVED || rc == ZTHROTTLEDOP ||
         rc == ZNEWCONFIGNOQUORUM;
}

// Codes after which a write definitely did not happen and may be sent again
// (on a new session unless the call is bound to the old one).
bool DefinitelyNotApplied(int rc) {
  return rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE || rc == ZTHROTTLEDOP || rc == ZNOTREADONLY ||
         rc == ZNEWCONFIGNOQUORUM || rc == ZSESSIONMOVED;
}

// The digits ZooKeeper appends to a sequential node's name.
constexpr size_t kSequenceDigits = 10;

}  // namespace

ZkFailureKind ClassifyFailure(int rc, bool write) {
  if (!write) return RetriableRead(rc) ? ZkFailureKind::kRetry : ZkFailureKind::kFinal;
  if (IsAmbiguousWriteCode(rc)) return ZkFailureKind::kAmbiguous;
  if (DefinitelyNotApplied(rc)) return ZkFailureKind::kRetryUnlessFenced;
  return ZkFailureKind::kFinal;
}

bool EndsBoundSession(int rc) { return rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE; }

std::string_view WriteOutcomeLabel(WriteOutcome outcome) {
  switch (outcome) {
    case WriteOutcome::kApplied:
      return "applied";
    case WriteOutcome::kNotApplied:
      return "not_applied";
    case WriteOutcome::kConflict:
      return "conflict";
    case WriteOutcome::kUnknown:
      return "unknown";
  }
  return "unknown";
}

bool IsOurCreate(const ZkNode& node, std::string_view data, ZkCreateMode mode, int64_t session) {
  return node.data == data && (!IsEphemeral(mode) || node.stat.ephemeral_owner == session);
}

WriteOutcome ResolveSet(int expected_version, std::string_view data, const ZkNode& node) {
  if (expected_version < 0) {
    return node.data == data ? WriteOutcome::kApplied : WriteOutcome::kNotApplied;
  }
  if (node.stat.version == expected_version + 1 && node.data == data) {
    return WriteOutcome::kApplied;
  }
  return node.stat.version == expected_version ? WriteOutcome::kNotApplied : WriteOutcome::kUnknown;
}

WriteOutcome ResolveCreate(std::string_view data, ZkCreateMode mode, int64_t session,
                           const std::optional<ZkNode>& node) {
  if (!node.has_value()) return WriteOutcome::kNotApplied;
  return IsOurCreate(*node, data, mode, session) ? WriteOutcome::kApplied : WriteOutcome::kConflict;
}

std::vector<std::string> SequentialCreateCandidates(std::vector<std::string> children,
                                                    std::string_view prefix) {
  SortBySequence(children);
  std::vector<std::string> candidates;
  for (auto it = children.rbegin(); it != children.rend(); ++it) {
    if (it->rfind(prefix, 0) != 0 || it->size() != prefix.size() + kSequenceDigits) continue;
    candidates.push_back(std::move(*it));
  }
  return candidates;
}

WriteOutcome ResolveDelete(int version, const std::optional<ZkStat>& stat) {
  if (!stat.has_value()) return WriteOutcome::kApplied;
  if (version >= 0 && stat->version != version) return WriteOutcome::kUnknown;
  return WriteOutcome::kNotApplied;
}

std::optional<size_t> MultiProbeIndex(const std::vector<ZkOp>& ops) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const ZkOp& op = ops[i];
    if (op.kind == ZkOp::Kind::kSet && op.version >= 0) return i;
    if (op.kind == ZkOp::Kind::kCreate && !IsSequential(op.mode)) return i;
  }
  return std::nullopt;
}

WriteOutcome ResolveMultiWithoutProbe(const std::vector<ZkOp>& ops) {
  const bool has_write = std::any_of(ops.begin(), ops.end(),
                                     [](const ZkOp& op) { return op.kind != ZkOp::Kind::kCheck; });
  return has_write ? WriteOutcome::kUnknown : WriteOutcome::kNotApplied;
}

WriteOutcome ResolveMultiProbe(const ZkOp& probe, int64_t session,
                               const absl::StatusOr<ZkNode>& read_back) {
  if (probe.kind == ZkOp::Kind::kSet) {
    if (!read_back.ok()) return WriteOutcome::kUnknown;
    return ResolveSet(probe.version, probe.data, *read_back);
  }
  if (!read_back.ok()) {
    return absl::IsNotFound(read_back.status()) ? WriteOutcome::kNotApplied
                                                : WriteOutcome::kUnknown;
  }
  const WriteOutcome outcome = ResolveCreate(probe.data, probe.mode, session, *read_back);
  return outcome == WriteOutcome::kConflict ? WriteOutcome::kUnknown : outcome;
}

}  // namespace tempest::coord
