#ifndef TEMPEST_COMMON_API_API_H_
#define TEMPEST_COMMON_API_API_H_

namespace tempest::api {

// The version of the component API, bumped when a user component must be
// rebuilt to load into this runtime.
inline constexpr int kApiVersion = 1;

// Tempest's release string, e.g. "0.1.0".
const char* TempestVersion();

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_API_H_
