#ifndef TEMPEST_COMMON_OS_FILES_H_
#define TEMPEST_COMMON_OS_FILES_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tempest::os {

// The whole file, refusing one larger than `max_bytes` (OutOfRange), so an
// untrusted or runaway file cannot exhaust memory. NotFound if it is absent.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 1 << 20);

// The rest of the open file `fd`, with the same bound: OutOfRange "NAME is
// larger than MAX bytes", Internal "cannot read NAME: why" on a read error.
// For callers that must check the file (its type, its owner) before reading
// it; `name` is only for messages.
absl::StatusOr<std::string> ReadSmallFd(int fd, std::string_view name, size_t max_bytes);

// Writes `data` to a temporary file next to `path` (creating the directory),
// syncs it and renames it over `path`, so readers see the old or the new
// content, never a torn one, even after a crash.
absl::Status WriteFileAtomically(const std::string& path, std::string_view data);

// mkdir -p.
absl::Status MakeDirs(const std::string& path);

}  // namespace tempest::os

#endif  // TEMPEST_COMMON_OS_FILES_H_
