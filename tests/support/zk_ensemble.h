#ifndef TEMPEST_TESTS_SUPPORT_ZK_ENSEMBLE_H_
#define TEMPEST_TESTS_SUPPORT_ZK_ENSEMBLE_H_

// The ZooKeeper ensemble fixture now lives in common/coord (`tempest study`
// starts one too); this alias keeps the tests that name it here unchanged.
#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/coord/zk_ensemble.h"
#include "common/coord/zk_session.h"

namespace tempest::testing {

using ZkEnsemble = coord::ZkEnsemble;

// A test's own session to `connect`, once it is connected (within 20 s).
inline absl::StatusOr<std::unique_ptr<coord::ZkSession>> ConnectedZkSession(
    const std::string& connect, coord::ZkClientConfig config = {}) {
  coord::ZkSession::Options o;
  o.connect_string = connect;
  o.config = std::move(config);
  absl::StatusOr<std::unique_ptr<coord::ZkSession>> s = coord::ZkSession::Create(std::move(o));
  if (!s.ok()) return s.status();
  if (absl::Status c = (*s)->WaitConnected(std::chrono::milliseconds(20000)); !c.ok()) {
    return absl::UnavailableError(absl::StrCat("no session to ", connect, ": ", c.message()));
  }
  return s;
}

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_ZK_ENSEMBLE_H_
