#include "common/api/api.h"

namespace tempest::api {

const char* TempestVersion() { return "0.1.0"; }

}  // namespace tempest::api
