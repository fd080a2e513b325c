#ifndef TEMPEST_COMMON_OS_DIR_FILES_H_
#define TEMPEST_COMMON_OS_DIR_FILES_H_

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/os/unique_fd.h"

namespace tempest::os {

// Files in directories that someone else can write (a worker's scratch
// directory, anything an unprivileged account owns). Such a directory may
// hold a symbolic link, a FIFO or a device where a file is expected, and may
// change between two calls; a daemon that resolves a path there by name can
// be steered into writing or reading any file it can reach. So every call
// here works relative to an open directory, takes a single name (no '/', not
// "." or ".."), never follows a symbolic link in that name, and refuses
// anything that is not a regular file (or, for directories, a directory).
// A refusal is FailedPrecondition naming the entry; NotFound when absent.
// Stateless; safe from any thread.

// Opens the directory `path`. Its ancestors are the operator's and are
// followed; `path` itself must be a directory, not a link to one.
absl::StatusOr<UniqueFd> OpenDirectory(const std::string& path);

// Opens the directory `name` in `dir_fd`, not following a link.
absl::StatusOr<UniqueFd> OpenDirectoryAt(int dir_fd, std::string_view name);

// Creates the directory `name` in `dir_fd` with `mode` (exactly: the umask
// does not apply) and opens it. AlreadyExists when the name is taken, by
// anything (a link is never followed).
absl::StatusOr<UniqueFd> MakeDirectoryAt(int dir_fd, std::string_view name, mode_t mode);

// The regular file `name` in `dir_fd`, whole; OutOfRange when larger than
// `max_bytes`. Never blocks on a FIFO.
absl::StatusOr<std::string> ReadSmallFileAt(int dir_fd, std::string_view name,
                                            size_t max_bytes = 1 << 20);

// Replaces `name` in `dir_fd` with a new regular file holding `data` (mode
// `mode`), written to a temporary name first, synced and renamed over it:
// a link or anything else at `name` is replaced, never written through.
absl::Status WriteFileAtomicallyAt(int dir_fd, std::string_view name, std::string_view data,
                                   mode_t mode = 0644);

// Opens the regular file `name` in `dir_fd` for appending, creating it with
// `mode` if absent.
absl::StatusOr<UniqueFd> OpenForAppendAt(int dir_fd, std::string_view name, mode_t mode = 0644);

// Removes `name` from `dir_fd` and, when it is a directory, everything in
// it, never following a link (a link is removed, not its target). OK when
// `name` is absent. Trees of any depth are removed with a bounded number of
// open descriptors.
absl::Status RemoveTreeAt(int dir_fd, std::string_view name);

}  // namespace tempest::os

#endif  // TEMPEST_COMMON_OS_DIR_FILES_H_
