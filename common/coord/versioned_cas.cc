#include "common/coord/versioned_cas.h"

#include "absl/strings/str_cat.h"

namespace tempest::coord {

ZkOp OwnershipCheckOp(const FencingToken& token) { return ZkOp::Check(token.path, token.version); }

ZkOp VersionedSetOp(std::string path, std::string data, int expected_version) {
  return ZkOp::Set(std::move(path), std::move(data), expected_version);
}

absl::StatusOr<ZkStat> CompareAndSet(ZkSession& session, const std::string& path,
                                     const std::string& data, int expected_version,
                                     const FencingToken* fence, ZkCall call) {
  if (fence == nullptr) return session.Set(path, data, expected_version, call);
  call.require_session_id = fence->session_id;
  int failed = -1;
  auto r = session.Multi({OwnershipCheckOp(*fence), VersionedSetOp(path, data, expected_version)},
                         call, &failed);
  if (r.ok()) return (*r)[1].stat;
  if (failed == 0) {
    return absl::FailedPreconditionError(absl::StrCat("fenced: ownership node ", fence->path,
                                                      " changed or vanished (",
                                                      r.status().message(), ")"));
  }
  return r.status();
}

}  // namespace tempest::coord
