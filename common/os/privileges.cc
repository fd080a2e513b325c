#include "common/os/privileges.h"

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
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

std::optional<std::string> FirstDirClosedTo(const std::string& path, const UnixUser& user) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec).lexically_normal();
  if (ec) return path;
  std::filesystem::path dir;
  for (const std::filesystem::path& part : absolute) {
    if (part.empty()) continue;
    dir /= part;
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) return std::nullopt;  // made later, by Tempest
    if (!S_ISDIR(st.st_mode)) continue;
    const mode_t bit = st.st_uid == user.uid   ? S_IXUSR
                       : st.st_gid == user.gid ? S_IXGRP
                                               : S_IXOTH;
    if ((st.st_mode & bit) == 0) return dir.string();
  }
  return std::nullopt;
}

std::optional<std::string> TempParentReachableBy(const UnixUser& user) {
  std::error_code ec;
  std::vector<std::string> candidates;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
  if (!ec) candidates.push_back(temp.string());
  candidates.insert(candidates.end(), {"/tmp", "/var/tmp"});
  for (const std::string& dir : candidates) {
    if (std::filesystem::is_directory(dir, ec) && !FirstDirClosedTo(dir, user).has_value()) {
      return dir;
    }
  }
  return std::nullopt;
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

std::optional<std::string> AccountNameOf(uid_t uid) {
  std::vector<char> buffer(16384);
  struct passwd entry {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return std::string(found->pw_name);
  }
  return std::nullopt;
}

bool UidIsMapped(uid_t uid) {
  std::FILE* map = std::fopen("/proc/self/uid_map", "re");
  if (map == nullptr) return true;
  bool mapped = false;
  unsigned long inside = 0, outside = 0, count = 0;  // NOLINT(runtime/int): fscanf's %lu
  while (!mapped && std::fscanf(map, "%lu %lu %lu", &inside, &outside, &count) == 3) {
    mapped = uid >= inside && uid - inside < count;
  }
  std::fclose(map);
  return mapped;
}

absl::Status KillEveryProcessOf(uid_t uid) {
  if (uid == 0) return absl::InvalidArgumentError("refusing to kill every process of uid 0");
  const pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    // Only async-signal-safe calls here (the parent has threads). The raw
    // system call changes this thread's ids, the only thread of the child;
    // kill(-1) from that uid reaches exactly the processes it owns, and
    // not the caller itself. Twice: a process forking while the first
    // signal goes round cannot leave a child behind the second.
    if (::syscall(SYS_setresuid, uid, uid, uid) != 0) ::_exit(2);
    for (int round = 0; round < 2; ++round) {
      if (::kill(-1, SIGKILL) != 0 && errno != ESRCH) ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot kill the processes of uid ", uid, " (status ", status, ")"));
  }
  return absl::OkStatus();
}

}  // namespace tempest::os
