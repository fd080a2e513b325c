#include "common/coord/zk_status.h"

#include <zookeeper/zookeeper.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tempest::coord {
namespace {
constexpr absl::string_view kZkCodePayload = "type.tempest.dev/zookeeper.rc";

// The C client's codes by name (zerror gives prose, not the name).
struct ZkCodeAndName {
  int rc;
  const char* name;
};
constexpr ZkCodeAndName kZkCodeNames[] = {
    {ZOK, "ZOK"},
    {ZSYSTEMERROR, "ZSYSTEMERROR"},
    {ZRUNTIMEINCONSISTENCY, "ZRUNTIMEINCONSISTENCY"},
    {ZDATAINCONSISTENCY, "ZDATAINCONSISTENCY"},
    {ZCONNECTIONLOSS, "ZCONNECTIONLOSS"},
    {ZMARSHALLINGERROR, "ZMARSHALLINGERROR"},
    {ZUNIMPLEMENTED, "ZUNIMPLEMENTED"},
    {ZOPERATIONTIMEOUT, "ZOPERATIONTIMEOUT"},
    {ZBADARGUMENTS, "ZBADARGUMENTS"},
    {ZINVALIDSTATE, "ZINVALIDSTATE"},
    {ZNEWCONFIGNOQUORUM, "ZNEWCONFIGNOQUORUM"},
    {ZRECONFIGINPROGRESS, "ZRECONFIGINPROGRESS"},
    {ZAPIERROR, "ZAPIERROR"},
    {ZNONODE, "ZNONODE"},
    {ZNOAUTH, "ZNOAUTH"},
    {ZBADVERSION, "ZBADVERSION"},
    {ZNOCHILDRENFOREPHEMERALS, "ZNOCHILDRENFOREPHEMERALS"},
    {ZNODEEXISTS, "ZNODEEXISTS"},
    {ZNOTEMPTY, "ZNOTEMPTY"},
    {ZSESSIONEXPIRED, "ZSESSIONEXPIRED"},
    {ZINVALIDCALLBACK, "ZINVALIDCALLBACK"},
    {ZINVALIDACL, "ZINVALIDACL"},
    {ZAUTHFAILED, "ZAUTHFAILED"},
    {ZCLOSING, "ZCLOSING"},
    {ZNOTHING, "ZNOTHING"},
    {ZSESSIONMOVED, "ZSESSIONMOVED"},
    {ZNOTREADONLY, "ZNOTREADONLY"},
    {ZEPHEMERALONLOCALSESSION, "ZEPHEMERALONLOCALSESSION"},
    {ZNOWATCHER, "ZNOWATCHER"},
    {ZRECONFIGDISABLED, "ZRECONFIGDISABLED"},
    {ZTHROTTLEDOP, "ZTHROTTLEDOP"},
};
}  // namespace

std::string ZkCodeName(int rc) {
  for (const ZkCodeAndName& code : kZkCodeNames) {
    if (code.rc == rc) return code.name;
  }
  return absl::StrCat("Z", rc);
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
