#ifndef TEMPEST_TESTS_SUPPORT_ZK_ENSEMBLE_H_
#define TEMPEST_TESTS_SUPPORT_ZK_ENSEMBLE_H_

// The ZooKeeper ensemble fixture now lives in common/coord (`tempest study`
// starts one too); this alias keeps the tests that name it here unchanged.
#include "common/coord/zk_ensemble.h"

namespace tempest::testing {

using ZkEnsemble = coord::ZkEnsemble;

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_ZK_ENSEMBLE_H_
