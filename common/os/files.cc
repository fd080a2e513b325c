#include "common/os/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/os/unique_fd.h"

namespace tempest::os {
namespace {

// Debian's Abseil has its own string_view type.
absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

absl::Status Errno(std::string_view what, const std::string& path) {
  const int err = errno;
  const std::string message = absl::StrCat(absl::string_view(what.data(), what.size()), " ", path, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  return absl::InternalError(message);
}

}  // namespace

absl::StatusOr<std::string> ReadSmallFd(int fd, std::string_view name, size_t max_bytes) {
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(
          absl::StrCat("cannot read ", Sv(name), ": ", std::strerror(errno)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      return absl::OutOfRangeError(absl::StrCat(Sv(name), " is larger than ", max_bytes, " bytes"));
    }
  }
  return out;
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Errno("cannot open", path);
  return ReadSmallFd(fd.get(), path, max_bytes);
}

absl::Status MakeDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec)
    return absl::InternalError(absl::StrCat("cannot create directory ", path, ": ", ec.message()));
  return absl::OkStatus();
}


absl::Status WriteFileAtomically(const std::string& path, std::string_view data) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) {
    if (absl::Status s = MakeDirs(target.parent_path().string()); !s.ok()) return s;
  }
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  // A leftover, or a link planted under the predictable temporary name, is
  // removed (unlink never follows) and never opened (O_EXCL, O_NOFOLLOW).
  ::unlink(tmp.c_str());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid()) return Errno("cannot create", tmp);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      absl::Status s = Errno("cannot write", tmp);
      fd.Reset();
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd.get()) == 0;
  if (fd.Close() != 0 || !synced) {
    absl::Status s = Errno("cannot write", tmp);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    absl::Status s = Errno("cannot rename onto", path);
    ::unlink(tmp.c_str());
    return s;
  }
  return absl::OkStatus();
}

}  // namespace tempest::os
