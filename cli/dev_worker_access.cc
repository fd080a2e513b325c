#include "cli/dev_worker_access.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/os/privileges.h"

namespace tempest::cli {
namespace {

// Owned by root, writable by the workers' group only; setgid keeps what a
// worker writes in that group, so a topology moved to another slot (another
// uid) continues its own files.
absl::Status OpenToGroup(const std::string& folder, gid_t gid) {
  if (::chown(folder.c_str(), 0, gid) != 0 || ::chmod(folder.c_str(), 02770) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot give ", folder, " to the workers: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> PrepareWorkerOutput(const std::string& dir,
                                                const std::string& worker_user) {
  std::string folder = (std::filesystem::path(dir) / "output").string();
  if (::mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrCat("cannot create ", folder, ": ", std::strerror(errno)));
  }
  if (!os::RunningAsRoot()) return folder;  // workers run as this user: they reach what it does
  ASSIGN_OR_RETURN(const os::UnixUser account, os::LookUpUnprivilegedUser(worker_user));
  const std::optional<std::string> closed = os::FirstDirClosedTo(dir, account);
  if (!closed.has_value()) {
    RETURN_IF_ERROR(OpenToGroup(folder, account.gid));
    return folder;
  }
  const std::optional<std::string> parent = os::TempParentReachableBy(account);
  std::string made =
      (std::filesystem::path(parent.value_or("/tmp")) / "tempest-dev-output-XXXXXX").string();
  if (!parent.has_value() || ::mkdtemp(made.data()) == nullptr ||
      !OpenToGroup(made, account.gid).ok()) {
    std::fprintf(stderr,
                 "tempest: workers (%s's group) cannot pass through %s, nor into a temp "
                 "directory; topology output must go where they can reach\n",
                 account.name.c_str(), closed->c_str());
    return folder;
  }
  std::fprintf(stderr,
               "tempest: workers (%s's group) cannot pass through %s: the cluster's own files "
               "reach them anyway; topology output goes to %s (output=), made for them\n",
               account.name.c_str(), closed->c_str(), made.c_str());
  return made;
}

}  // namespace tempest::cli
