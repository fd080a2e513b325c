#include "bolts/append_only_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace tempest::bolts {
namespace {

absl::Status ErrnoStatus(int err, std::string_view what, const std::string& path) {
  std::string msg = absl::StrCat(std::string(what), " '", path, "': ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<AppendOnlyFile>> AppendOnlyFile::Open(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty file path");
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) return ErrnoStatus(ec.value(), "cannot create the directory of", path);
  }
  // The umask decides who else may append: a worker's (0007) lets the worker
  // group, so the topology's next worker on another slot uid continues the file.
  os::UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666));
  if (!fd.valid()) return ErrnoStatus(errno, "cannot open", path);
  return std::unique_ptr<AppendOnlyFile>(new AppendOnlyFile(path, std::move(fd)));
}

AppendOnlyFile::~AppendOnlyFile() = default;

absl::StatusOr<int64_t> AppendOnlyFile::DropTornTail() {
  struct stat st;
  if (::fstat(fd_.get(), &st) != 0) return ErrnoStatus(errno, "cannot stat", path_);
  if (st.st_size == 0 || !S_ISREG(st.st_mode)) return 0;
  // The write fd is O_APPEND-only; read through a second descriptor.
  const os::UniqueFd rfd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
  if (!rfd.valid()) return ErrnoStatus(errno, "cannot read", path_);
  off_t end = st.st_size;
  off_t keep = 0;
  char buf[4096];
  bool found = false;
  while (end > 0 && !found) {
    off_t start = end > static_cast<off_t>(sizeof(buf)) ? end - sizeof(buf) : 0;
    ssize_t n = ::pread(rfd.get(), buf, end - start, start);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot read", path_);
    }
    if (n == 0) break;
    for (ssize_t i = n - 1; i >= 0; --i) {
      if (buf[i] == '\n') {
        keep = start + i + 1;
        found = true;
        break;
      }
    }
    end = start;
  }
  if (keep == st.st_size) return 0;
  if (::ftruncate(fd_.get(), keep) != 0) return ErrnoStatus(errno, "cannot truncate", path_);
  return static_cast<int64_t>(st.st_size - keep);
}

absl::Status AppendOnlyFile::Append(std::string_view data, bool sync) {
  struct stat st;
  bool know_size = ::fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode);
  size_t done = 0;
  absl::Status failure;
  while (done < data.size()) {
    ssize_t n = ::write(fd_.get(), data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      failure = ErrnoStatus(errno, "cannot write", path_);
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (failure.ok() && sync && ::fdatasync(fd_.get()) != 0 && errno != EINVAL) {
    // EINVAL: the file does not support syncing (e.g. a pipe); nothing to do.
    failure = ErrnoStatus(errno, "cannot fdatasync", path_);
  }
  if (!failure.ok()) {
    // Best effort, the write's own failure being what the caller must see: a
    // rollback that fails too leaves the partial write (DropTornTail cuts a
    // torn last line when the file is next opened).
    if (know_size && done > 0) (void)::ftruncate(fd_.get(), st.st_size);
    return failure;
  }
  bytes_appended_ += static_cast<int64_t>(data.size());
  return absl::OkStatus();
}

}  // namespace tempest::bolts
