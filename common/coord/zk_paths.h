#ifndef TEMPEST_COMMON_COORD_ZK_PATHS_H_
#define TEMPEST_COMMON_COORD_ZK_PATHS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace tempest::coord {

// Pure helpers for ZooKeeper paths. No I/O; safe from any thread.

// OK if `path` is absolute, has no empty, "." or ".." components, no trailing
// slash (except "/" itself) and no NUL.
absl::Status ValidatePath(std::string_view path);

// "/a/b" + "c" -> "/a/b/c"; "/" + "c" -> "/c". `child` must not contain "/".
std::string JoinPath(std::string_view parent, std::string_view child);

// "/a/b/c" -> "/a/b"; "/a" -> "/"; "/" -> "/".
std::string ParentPath(std::string_view path);

// "/a/b/c" -> "c".
std::string BaseName(std::string_view path);

// Every proper ancestor below the root, outermost first: "/a/b/c" -> {"/a", "/a/b"}.
std::vector<std::string> Ancestors(std::string_view path);

// The 10-digit counter ZooKeeper appends to sequential nodes: "n_0000000042" -> 42.
std::optional<int64_t> SequenceNumber(std::string_view name);

// Sorts sequential node names by their counter (names without one go last,
// in name order). The counter wraps at 2^31, which we do not handle.
void SortBySequence(std::vector<std::string>& names);

// Splits "host:port,host:port/chroot" into the host list and the chroot
// ("" when absent); validates the chroot.
absl::Status SplitConnectString(std::string_view connect, std::string* hosts, std::string* chroot);

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_PATHS_H_
