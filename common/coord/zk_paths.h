#ifndef TEMPEST_COMMON_COORD_ZK_PATHS_H_
#define TEMPEST_COMMON_COORD_ZK_PATHS_H_

#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"

namespace tempest::coord {

// Pure helpers for ZooKeeper paths. No I/O; safe from any thread.

// OK if `path` is absolute, has no empty, "." or ".." components, no trailing
// slash (except "/" itself) and no NUL.
absl::Status ValidatePath(absl::string_view path);

// "/a/b" + "c" -> "/a/b/c"; "/" + "c" -> "/c". `child` must not contain "/".
std::string JoinPath(absl::string_view parent, absl::string_view child);

// "/a/b/c" -> "/a/b"; "/a" -> "/"; "/" -> "/".
std::string ParentPath(absl::string_view path);

// "/a/b/c" -> "c".
std::string BaseName(absl::string_view path);

// Every proper ancestor below the root, outermost first: "/a/b/c" -> {"/a", "/a/b"}.
std::vector<std::string> Ancestors(absl::string_view path);

// The 10-digit counter ZooKeeper appends to sequential nodes: "n_0000000042" -> 42.
std::optional<int64_t> SequenceNumber(absl::string_view name);

// Sorts sequential node names by their counter (names without one go last,
// in name order). The counter wraps at 2^31, which we do not handle.
void SortBySequence(std::vector<std::string>& names);

// Splits "host:port,host:port/chroot" into the host list and the chroot
// ("" when absent); validates the chroot.
absl::Status SplitConnectString(absl::string_view connect, std::string* hosts,
                                std::string* chroot);

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_PATHS_H_
