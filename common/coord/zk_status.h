#ifndef TEMPEST_COMMON_COORD_ZK_STATUS_H_
#define TEMPEST_COMMON_COORD_ZK_STATUS_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tempest::coord {

// Maps a ZooKeeper C client return code to an absl::Status. The ZooKeeper code
// itself travels as a payload (see ZkCodeOf) so callers and tests can tell
// ZCONNECTIONLOSS from ZOPERATIONTIMEOUT although both are Unavailable.
//
//   ZOK                          -> OK
//   ZNONODE                      -> NotFound
//   ZNODEEXISTS                  -> AlreadyExists
//   ZBADVERSION                  -> Aborted  (a failed test-and-set: re-read, decide, retry
//                                             at a higher level; absl's guidance for CAS)
//   ZRUNTIMEINCONSISTENCY        -> Aborted  (a multi op that was not evaluated)
//   ZCONNECTIONLOSS, ZOPERATIONTIMEOUT, ZSESSIONEXPIRED, ZINVALIDSTATE, ZSESSIONMOVED,
//   ZNOTREADONLY, ZTHROTTLEDOP, ZNEWCONFIGNOQUORUM, ZRECONFIGINPROGRESS -> Unavailable
//   ZNOAUTH, ZAUTHFAILED         -> PermissionDenied
//   ZNOTEMPTY, ZNOCHILDRENFOREPHEMERALS, ZEPHEMERALONLOCALSESSION -> FailedPrecondition
//   ZBADARGUMENTS, ZINVALIDACL, ZINVALIDCALLBACK -> InvalidArgument
//   ZCLOSING                     -> Cancelled
//   ZUNIMPLEMENTED               -> Unimplemented
//   anything else                -> Internal
//
// FailedPrecondition is reserved for "you are fenced" (ownership or session
// changed); see versioned_cas.h.
absl::Status ZkStatus(int rc, std::string_view op, std::string_view path);

// The ZooKeeper return code carried by a status made by ZkStatus, if any.
std::optional<int> ZkCodeOf(const absl::Status& status);

// "ZCONNECTIONLOSS", "ZNONODE", ... (stable names for metrics labels).
std::string ZkCodeName(int rc);

// True for the codes after which a write may or may not have been applied.
bool IsAmbiguousWriteCode(int rc);

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_STATUS_H_
