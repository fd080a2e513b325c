#ifndef TEMPEST_COMMON_OS_PRIVILEGES_H_
#define TEMPEST_COMMON_OS_PRIVILEGES_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tempest::os {

// A local account from the password database.
struct UnixUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;  // its primary group
};

// Whether this process has root's effective uid: then submitted code
// (multilang commands, plugins) must not run with it.
bool RunningAsRoot();

// The name of this process's effective user from the password database
// (Storm's topology owner is the submitting user); the numeric uid when the
// account has no entry.
std::string CurrentUserName();

// The account `name` (a name or a numeric uid). NotFound when there is no
// such account; InvalidArgument for uid 0, which is never an unprivileged
// user, whatever it is called.
absl::StatusOr<UnixUser> LookUpUnprivilegedUser(std::string_view name);

// Gives `path` (a file or a directory, not followed if a symlink) to `user`.
absl::Status GiveToUser(const std::string& path, const UnixUser& user);

// Irrevocably becomes `user`: supplementary groups cleared, then gid, then
// uid (real, effective and saved). Checks afterwards that root cannot be
// regained. Call before any thread starts: setuid applies to the calling
// thread's credentials and glibc's broadcast to other threads is not
// something to rely on mid-run.
absl::Status DropPrivilegesTo(const UnixUser& user);

}  // namespace tempest::os

#endif  // TEMPEST_COMMON_OS_PRIVILEGES_H_
