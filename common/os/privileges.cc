#include "common/os/privileges.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tempest::os {

bool RunningAsRoot() { return ::geteuid() == 0; }

std::string CurrentUserName() {
  std::vector<char> buffer(16384);
  struct passwd entry {};
  struct passwd* found = nullptr;
  const uid_t uid = ::geteuid();
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return absl::StrCat(uid);
}

absl::StatusOr<UnixUser> LookUpUnprivilegedUser(std::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("the worker user is empty");
  const std::string text(name);
  std::vector<char> buffer(16384);
  struct passwd entry {};
  struct passwd* found = nullptr;
  uint32_t numeric = 0;
  int rc = ::getpwnam_r(text.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (rc == 0 && found == nullptr && absl::SimpleAtoi(text, &numeric)) {
    rc = ::getpwuid_r(static_cast<uid_t>(numeric), &entry, buffer.data(), buffer.size(), &found);
  }
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("looking up user '", text, "': ", std::strerror(rc)));
  }
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("there is no user '", text, "' on this host"));
  }
  if (found->pw_uid == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("user '", text, "' is uid 0: workers never run as root"));
  }
  return UnixUser{found->pw_name, found->pw_uid, found->pw_gid};
}

absl::Status GiveToUser(const std::string& path, const UnixUser& user) {
  if (::lchown(path.c_str(), user.uid, user.gid) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot give ", path, " to ", user.name, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status DropPrivilegesTo(const UnixUser& user) {
  auto failed = [&](const char* what) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot become ", user.name, " (", what, "): ", std::strerror(errno)));
  };
  // Groups first: once the uid is gone, they cannot be changed.
  if (::setgroups(0, nullptr) != 0) return failed("setgroups");
  if (::setresgid(user.gid, user.gid, user.gid) != 0) return failed("setresgid");
  if (::setresuid(user.uid, user.uid, user.uid) != 0) return failed("setresuid");
  if (::setuid(0) == 0 || ::geteuid() == 0 || ::getegid() == 0) {
    return absl::InternalError(
        absl::StrCat("still able to become root after switching to ", user.name));
  }
  return absl::OkStatus();
}

}  // namespace tempest::os
