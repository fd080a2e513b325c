#ifndef TEMPEST_COMMON_OS_PRIVILEGES_H_
#define TEMPEST_COMMON_OS_PRIVILEGES_H_

#include <sys/types.h>

#include <optional>
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

// The first directory on the way to `path` (itself included) that `user`
// may not search, or nullopt when every existing one lets it through. Only
// the mode bits count (owner, then group, then other), as for a process
// without supplementary groups, which is how workers run; components that do
// not exist yet are not judged. Answers whether a worker running as `user`
// can open `path` by its absolute name.
std::optional<std::string> FirstDirClosedTo(const std::string& path, const UnixUser& user);

// A directory for new folders `user` must reach: the temp directory (TMPDIR)
// when `user` can pass through to it, else /tmp, else /var/tmp; nullopt when
// none will do.
std::optional<std::string> TempParentReachableBy(const UnixUser& user);

// Irrevocably becomes `user`: supplementary groups cleared, then gid, then
// uid (real, effective and saved). Checks afterwards that root cannot be
// regained. Call before any thread starts: setuid applies to the calling
// thread's credentials and glibc's broadcast to other threads is not
// something to rely on mid-run.
absl::Status DropPrivilegesTo(const UnixUser& user);

// The name of the password-database entry with `uid`, or nullopt when no
// account has it (a uid Tempest may then hand out to a worker of its own).
std::optional<std::string> AccountNameOf(uid_t uid);

// Whether `uid` exists in this process's user namespace (/proc/self/uid_map):
// in a container with a partial map, an unmapped uid can be neither taken
// nor given a file. True when the map cannot be read.
bool UidIsMapped(uid_t uid);

// SIGKILLs every process running as `uid` (real or saved uid), from a
// short-lived child that becomes `uid` and signals all it may: nothing a
// previous user of the uid started survives. Needs root; refuses uid 0.
absl::Status KillEveryProcessOf(uid_t uid);

}  // namespace tempest::os

#endif  // TEMPEST_COMMON_OS_PRIVILEGES_H_
