#include "common/os/dir_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/os/files.h"

namespace tempest::os {
namespace {

// Past this depth a directory is moved up to the top of the tree being
// removed rather than entered, so removal holds at most this many open
// descriptors however deep the tree is.
constexpr int kMaxOpenDepth = 24;
// Bounds the passes over a tree that something keeps refilling.
constexpr int kMaxRemovePasses = 100000;

// absl::string_view is not std::string_view in this build.
absl::string_view V(std::string_view s) { return absl::string_view(s.data(), s.size()); }

absl::Status Errno(int err, std::string_view what, std::string_view name) {
  std::string message = absl::StrCat(V(what), " ", V(name), ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EEXIST) return absl::AlreadyExistsError(message);
  if (err == ELOOP) {
    return absl::FailedPreconditionError(
        absl::StrCat(V(what), " ", V(name),
                     ": it is a symbolic link, which is never followed here"));
  }
  if (err == ENOTDIR) {
    return absl::FailedPreconditionError(absl::StrCat(V(what), " ", V(name), ": not a directory"));
  }
  return absl::InternalError(std::move(message));
}

absl::Status CheckName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("'", V(name), "' is not a single file name"));
  }
  return absl::OkStatus();
}

absl::Status RequireRegular(int fd, std::string_view name) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Errno(errno, "cannot stat", name);
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(V(name), " is not a regular file; refused"));
  }
  return absl::OkStatus();
}

absl::Status WriteAll(int fd, std::string_view data, std::string_view name) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno(errno, "cannot write", name);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// The names in the open directory `fd` (not "." or "..").
absl::StatusOr<std::vector<std::string>> ListNames(int fd) {
  UniqueFd copy(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  if (!copy.valid()) return Errno(errno, "cannot list", "directory");
  DIR* dir = ::fdopendir(copy.get());
  if (dir == nullptr) return Errno(errno, "cannot list", "directory");
  copy.Release();  // the DIR owns it now; closedir closes it
  ::rewinddir(dir);
  std::vector<std::string> names;
  while (const struct dirent* e = ::readdir(dir)) {
    const std::string_view n(e->d_name);
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(dir);
  return names;
}

// Empties the directory `fd` (at `depth` below `top_fd`). Directories at
// kMaxOpenDepth are renamed into `top_fd` instead and `moved` is set: the
// caller passes over the tree again.
absl::Status EmptyDirectory(int fd, int top_fd, int depth, bool& moved, uint64_t& serial) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, ListNames(fd));
  for (const std::string& name : names) {
    struct stat st {};
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return Errno(errno, "cannot stat", name);
    }
    if (!S_ISDIR(st.st_mode)) {
      if (::unlinkat(fd, name.c_str(), 0) != 0 && errno != ENOENT) {
        return Errno(errno, "cannot remove", name);
      }
      continue;
    }
    if (depth + 1 >= kMaxOpenDepth) {
      for (;;) {
        const std::string aside = absl::StrCat(".removing-", ++serial);
        if (::renameat2(fd, name.c_str(), top_fd, aside.c_str(), RENAME_NOREPLACE) == 0) break;
        if (errno != EEXIST) return Errno(errno, "cannot move aside", name);
      }
      moved = true;
      continue;
    }
    ASSIGN_OR_RETURN(UniqueFd child, OpenDirectoryAt(fd, name));
    RETURN_IF_ERROR(EmptyDirectory(child.get(), top_fd, depth + 1, moved, serial));
    if (::unlinkat(fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return Errno(errno, "cannot remove", name);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<UniqueFd> OpenDirectory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "cannot open directory", path);
  return UniqueFd(fd);
}

absl::StatusOr<UniqueFd> OpenDirectoryAt(int dir_fd, std::string_view name) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  const std::string n(name);
  const int fd = ::openat(dir_fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Errno(errno, "cannot open directory", name);
  return UniqueFd(fd);
}

absl::StatusOr<UniqueFd> MakeDirectoryAt(int dir_fd, std::string_view name, mode_t mode) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  const std::string n(name);
  if (::mkdirat(dir_fd, n.c_str(), mode) != 0) return Errno(errno, "cannot create directory", name);
  ASSIGN_OR_RETURN(UniqueFd fd, OpenDirectoryAt(dir_fd, name));
  // mkdir applied the umask; the caller asked for exactly `mode`.
  if (::fchmod(fd.get(), mode) != 0) return Errno(errno, "cannot set the mode of", name);
  return fd;
}

absl::StatusOr<std::string> ReadSmallFileAt(int dir_fd, std::string_view name, size_t max_bytes) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  const std::string n(name);
  // O_NONBLOCK: a FIFO planted under the name must not hang the reader
  // before fstat can refuse it.
  UniqueFd fd(::openat(dir_fd, n.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return Errno(errno, "cannot open", name);
  if (absl::Status s = RequireRegular(fd.get(), name); !s.ok()) return s;
  return ReadSmallFd(fd.get(), name, max_bytes);
}

absl::Status WriteFileAtomicallyAt(int dir_fd, std::string_view name, std::string_view data,
                                   mode_t mode) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  const std::string target(name);
  const std::string tmp = absl::StrCat(".", target, ".tmp.", ::getpid());
  // Whatever holds the temporary name (a leftover, or a planted link) goes:
  // unlinkat removes a link itself, and O_EXCL never opens an existing entry.
  ::unlinkat(dir_fd, tmp.c_str(), 0);
  UniqueFd fd(::openat(dir_fd, tmp.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd.valid()) return Errno(errno, "cannot create", tmp);
  absl::Status s = WriteAll(fd.get(), data, tmp);
  if (s.ok() && ::fchmod(fd.get(), mode) != 0) s = Errno(errno, "cannot set the mode of", tmp);
  if (s.ok() && ::fsync(fd.get()) != 0) s = Errno(errno, "cannot sync", tmp);
  if (s.ok() && fd.Close() != 0) s = Errno(errno, "cannot write", tmp);
  if (s.ok() && ::renameat(dir_fd, tmp.c_str(), dir_fd, target.c_str()) != 0) {
    s = Errno(errno, "cannot rename onto", target);
  }
  if (!s.ok()) ::unlinkat(dir_fd, tmp.c_str(), 0);
  return s;
}

absl::StatusOr<UniqueFd> OpenForAppendAt(int dir_fd, std::string_view name, mode_t mode) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  const std::string n(name);
  UniqueFd fd(::openat(dir_fd, n.c_str(),
                       O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
  // A FIFO without a reader refuses a non-blocking writer with ENXIO.
  if (!fd.valid() && errno == ENXIO) {
    return absl::FailedPreconditionError(absl::StrCat(V(name), " is not a regular file; refused"));
  }
  if (!fd.valid()) return Errno(errno, "cannot open", name);
  if (absl::Status s = RequireRegular(fd.get(), name); !s.ok()) return s;
  // Back to blocking writes, as any log file.
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

absl::Status RemoveTreeAt(int dir_fd, std::string_view name) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  const std::string n(name);
  struct stat st {};
  if (::fstatat(dir_fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? absl::OkStatus() : Errno(errno, "cannot stat", name);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dir_fd, n.c_str(), 0) != 0 && errno != ENOENT) {
      return Errno(errno, "cannot remove", name);
    }
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(UniqueFd top, OpenDirectoryAt(dir_fd, name));
  uint64_t serial = 0;
  for (int pass = 0;; ++pass) {
    if (pass == kMaxRemovePasses) {
      return absl::ResourceExhaustedError(
          absl::StrCat("cannot remove ", V(name), ": it keeps growing while being removed"));
    }
    bool moved = false;
    if (absl::Status s = EmptyDirectory(top.get(), top.get(), 0, moved, serial); !s.ok()) {
      return s;
    }
    if (!moved) break;
  }
  if (::unlinkat(dir_fd, n.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return Errno(errno, "cannot remove", name);
  }
  return absl::OkStatus();
}

}  // namespace tempest::os
