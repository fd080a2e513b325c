#include "common/coord/zk_status.h"

#include <zookeeper/zookeeper.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tempest::coord {
namespace {
constexpr absl::string_view kZkCodePayload = "type.tempest.dev/zookeeper.rc";
}  // namespace

std::string ZkCodeName(int rc) {
  switch (rc) {
    case ZOK:
      return "ZOK";
    case ZSYSTEMERROR:
      return "ZSYSTEMERROR";
    case ZRUNTIMEINCONSISTENCY:
      return "ZRUNTIMEINCONSISTENCY";
    case ZDATAINCONSISTENCY:
      return "ZDATAINCONSISTENCY";
    case ZCONNECTIONLOSS:
      return "ZCONNECTIONLOSS";
    case ZMARSHALLINGERROR:
      return "ZMARSHALLINGERROR";
    case ZUNIMPLEMENTED:
      return "ZUNIMPLEMENTED";
    case ZOPERATIONTIMEOUT:
      return "ZOPERATIONTIMEOUT";
    case ZBADARGUMENTS:
      return "ZBADARGUMENTS";
    case ZINVALIDSTATE:
      return "ZINVALIDSTATE";
    case ZNEWCONFIGNOQUORUM:
      return "ZNEWCONFIGNOQUORUM";
    case ZRECONFIGINPROGRESS:
      return "ZRECONFIGINPROGRESS";
    case ZAPIERROR:
      return "ZAPIERROR";
    case ZNONODE:
      return "ZNONODE";
    case ZNOAUTH:
      return "ZNOAUTH";
    case ZBADVERSION:
      return "ZBADVERSION";
    case ZNOCHILDRENFOREPHEMERALS:
      return "ZNOCHILDRENFOREPHEMERALS";
    case ZNODEEXISTS:
      return "ZNODEEXISTS";
    case ZNOTEMPTY:
      return "ZNOTEMPTY";
    case ZSESSIONEXPIRED:
      return "ZSESSIONEXPIRED";
    case ZINVALIDCALLBACK:
      return "ZINVALIDCALLBACK";
    case ZINVALIDACL:
      return "ZINVALIDACL";
    case ZAUTHFAILED:
      return "ZAUTHFAILED";
    case ZCLOSING:
      return "ZCLOSING";
    case ZNOTHING:
      return "ZNOTHING";
    case ZSESSIONMOVED:
      return "ZSESSIONMOVED";
    case ZNOTREADONLY:
      return "ZNOTREADONLY";
    case ZEPHEMERALONLOCALSESSION:
      return "ZEPHEMERALONLOCALSESSION";
    case ZNOWATCHER:
      return "ZNOWATCHER";
    case ZRECONFIGDISABLED:
      return "ZRECONFIGDISABLED";
    case ZTHROTTLEDOP:
      return "ZTHROTTLEDOP";
    default:
      return absl::StrCat("Z", rc);
  }
}

bool IsAmbiguousWriteCode(int rc) { return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT; }

absl::Status ZkStatus(int rc, std::string_view op, std::string_view path) {
  if (rc == ZOK) return absl::OkStatus();
  std::string msg = absl::StrCat("zookeeper ", absl::string_view(op.data(), op.size()), " ",
                                 absl::string_view(path.data(), path.size()), ": ", ZkCodeName(rc),
                                 " (", zerror(rc), ")");
  absl::StatusCode code;
  switch (rc) {
    case ZNONODE:
      code = absl::StatusCode::kNotFound;
      break;
    case ZNODEEXISTS:
      code = absl::StatusCode::kAlreadyExists;
      break;
    case ZBADVERSION:
    case ZRUNTIMEINCONSISTENCY:
      code = absl::StatusCode::kAborted;
      break;
    case ZSESSIONEXPIRED:
    case ZINVALIDSTATE:
      absl::StrAppend(&msg, "; the session is gone, a new one is being established");
      code = absl::StatusCode::kUnavailable;
      break;
    case ZCONNECTIONLOSS:
    case ZOPERATIONTIMEOUT:
    case ZSESSIONMOVED:
    case ZNOTREADONLY:
    case ZTHROTTLEDOP:
    case ZNEWCONFIGNOQUORUM:
    case ZRECONFIGINPROGRESS:
      code = absl::StatusCode::kUnavailable;
      break;
    case ZNOAUTH:
    case ZAUTHFAILED:
      code = absl::StatusCode::kPermissionDenied;
      break;
    case ZNOTEMPTY:
    case ZNOCHILDRENFOREPHEMERALS:
    case ZEPHEMERALONLOCALSESSION:
      code = absl::StatusCode::kFailedPrecondition;
      break;
    case ZBADARGUMENTS:
    case ZINVALIDACL:
    case ZINVALIDCALLBACK:
      code = absl::StatusCode::kInvalidArgument;
      break;
    case ZCLOSING:
      code = absl::StatusCode::kCancelled;
      break;
    case ZUNIMPLEMENTED:
      code = absl::StatusCode::kUnimplemented;
      break;
    default:
      code = absl::StatusCode::kInternal;
      break;
  }
  absl::Status status(code, msg);
  status.SetPayload(kZkCodePayload, absl::Cord(absl::StrCat(rc)));
  return status;
}

std::optional<int> ZkCodeOf(const absl::Status& status) {
  auto payload = status.GetPayload(kZkCodePayload);
  if (!payload.has_value()) return std::nullopt;
  int rc = 0;
  if (!absl::SimpleAtoi(std::string(*payload), &rc)) return std::nullopt;
  return rc;
}

}  // namespace tempest::coord
