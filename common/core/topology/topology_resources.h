#ifndef TEMPEST_COMMON_CORE_TOPOLOGY_RESOURCES_H_
#define TEMPEST_COMMON_CORE_TOPOLOGY_RESOURCES_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::core {

// Bounds of what a topology may carry to its workers (scripts and data of
// multilang components, `tempest submit --resources DIR`).
inline constexpr int64_t kMaxResourceBytes = 16 << 20;
inline constexpr int kMaxResourceFiles = 10000;

// Every regular file under `dir` (recursively; hidden entries skipped), by
// its path relative to `dir`, with its executable bit. InvalidArgument when
// the bounds above are exceeded or `dir` is not a directory.
absl::StatusOr<v1::TopologyResources> CollectResources(const std::string& dir);

// A path is acceptable when it is relative, non-empty and never climbs out
// ("..", absolute paths and empty components are refused).
absl::Status ValidateResources(const v1::TopologyResources& resources);

// Writes every file under `dir` (created; existing files replaced), after
// ValidateResources, so untrusted input can never write outside `dir`.
absl::Status MaterializeResources(const v1::TopologyResources& resources, const std::string& dir);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_TOPOLOGY_RESOURCES_H_
