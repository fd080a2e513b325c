#ifndef TEMPEST_COMMON_COORD_VERSIONED_CAS_H_
#define TEMPEST_COMMON_COORD_VERSIONED_CAS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"

namespace tempest::coord {

// Proof of holding an ephemeral ownership node (e.g. a Kafka spout's
// partition owner node). Writes made under it are bound to `session_id`
// (ZkCall::require_session_id) and check the node's `version` inside the
// same multi, so they fail once the node or the session is gone. `czxid`
// (the node's creation zxid) grows with every new owner and can serve as a
// monotonic token towards other systems.
struct FencingToken {
  std::string path;
  int64_t session_id = 0;
  int64_t czxid = 0;
  int32_t version = 0;
};

// The ownership check of a fenced write: the ownership node must still be at
// the token's version. Append it (once) to a multi together with one or more
// FencedSetOp()s, and send the multi with ZkCall::require_session_id =
// token.session_id so it never goes out on a later session.
ZkOp OwnershipCheckOp(const FencingToken& token);
// A versioned set for such a multi.
ZkOp VersionedSetOp(std::string path, std::string data, int expected_version);

// Versioned compare-and-set, optionally fenced by ownership: writes `data`
// to `path` only if it is at `expected_version` and (if `fence` is given)
// the ownership node is unchanged and our session is the token's session.
// Results:
//   OK                  - written; the new Stat.
//   Aborted             - the node is not at expected_version (lost the race).
//   FailedPrecondition  - fenced: ownership node gone/changed or session replaced.
//   NotFound            - `path` does not exist.
//   Unavailable / DeadlineExceeded - could not reach ZooKeeper in time.
// Ambiguous outcomes are resolved by ZkSession (read-back) before returning.
absl::StatusOr<ZkStat> CompareAndSet(ZkSession& session, const std::string& path,
                                     const std::string& data, int expected_version,
                                     const FencingToken* fence = nullptr, ZkCall call = {});

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_VERSIONED_CAS_H_
