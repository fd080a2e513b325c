#ifndef TEMPEST_COMMON_OS_SECRET_FILE_H_
#define TEMPEST_COMMON_OS_SECRET_FILE_H_

// Small files holding one secret (the API token, the ZooKeeper password, the
// cluster secret): read with the same checks everywhere, written 0600.
// Functions only; safe from any thread.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tempest::os {

inline constexpr size_t kMaxSecretFileBytes = 4096;

// What a secret file holds, for messages: `noun` in "it should hold one
// NOUN" and `what` in "other users can read WHAT".
struct SecretKind {
  std::string_view noun = "token";
  std::string_view what = "the API token";
};

struct LoadedSecret {
  std::string value;  // the first line, surrounding whitespace removed
  // Set when the file is readable by its group or by everyone (the secret
  // still works; callers log this once).
  std::optional<std::string> warning;
};

// Reads the secret file `path`, named by `key` (the config key) in every
// message. InvalidArgument "KEY PATH: why" for a missing, unreadable,
// non-regular, empty or oversized (> 4 KiB) file, or a first line holding a
// space or a control character.
absl::StatusOr<LoadedSecret> LoadSecretFile(const std::string& path, std::string_view key,
                                            const SecretKind& kind = {});

// Writes `value` and a newline to `path`, created (or truncated) with mode
// 0600 and left at 0600 whatever the umask. FailedPrecondition naming
// `label` ("token file") and the path when it cannot.
absl::Status WriteSecretFile(const std::string& path, std::string_view value,
                             std::string_view label = "token file");

}  // namespace tempest::os

#endif  // TEMPEST_COMMON_OS_SECRET_FILE_H_
