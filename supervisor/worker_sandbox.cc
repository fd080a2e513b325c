#include "supervisor/worker_sandbox.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "supervisor/worker_files.h"

namespace tempest::supervisor {
namespace {

using api::Sv;

constexpr size_t kMaxHeartbeatBytes = 1 << 20;

// The directory `name` in `parent_fd` (`path` names it in errors), created
// if absent, which must be a directory of this process's account; its mode
// is set to `mode`.
absl::StatusOr<os::UniqueFd> OwnedDirectoryAt(int parent_fd, std::string_view name,
                                              const std::string& path, mode_t mode) {
  absl::StatusOr<os::UniqueFd> dir = os::MakeDirectoryAt(parent_fd, name, mode);
  if (absl::IsAlreadyExists(dir.status())) dir = os::OpenDirectoryAt(parent_fd, name);
  if (!dir.ok()) {
    return absl::Status(dir.status().code(), absl::StrCat(path, ": ", dir.status().message()));
  }
  struct stat st {};
  if (::fstat(dir->get(), &st) != 0) {
    return absl::InternalError(absl::StrCat("cannot stat ", path, ": ", std::strerror(errno)));
  }
  if (st.st_uid != ::geteuid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " belongs to uid ", st.st_uid, ", not to the supervisor's account (uid ",
        ::geteuid(), "); it is not used: remove it"));
  }
  if ((st.st_mode & 07777) != mode && ::fchmod(dir->get(), mode) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot set the mode of ", path, ": ", std::strerror(errno)));
  }
  return dir;
}

// storm.local.dir itself is the operator's choice and may be a link; below
// it nothing is followed.
absl::StatusOr<os::UniqueFd> OpenLocalDir(const std::string& local_dir) {
  RETURN_IF_ERROR(os::MakeDirs(local_dir));
  os::UniqueFd fd(::open(local_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    return absl::InternalError(
        absl::StrCat("cannot open storm.local.dir ", local_dir, ": ", std::strerror(errno)));
  }
  return fd;
}

// {local}/workers: the supervisor's; workers may pass through to their own
// directory but neither list nor change it.
absl::StatusOr<os::UniqueFd> OpenScratchParent(const std::string& local_dir) {
  ASSIGN_OR_RETURN(const os::UniqueFd local, OpenLocalDir(local_dir));
  return OwnedDirectoryAt(local.get(), "workers", absl::StrCat(local_dir, "/workers"), 0711);
}

// The last beat of the slot's previous worker: its heartbeat, else the
// heartbeat.previous it was given (a worker that never beat keeps it).
std::optional<std::string> PreviousBeat(int scratch_parent, const std::string& port_name) {
  absl::StatusOr<os::UniqueFd> old = os::OpenDirectoryAt(scratch_parent, port_name);
  if (!old.ok()) return std::nullopt;
  for (const char* name : {kHeartbeatFile, kPreviousHeartbeatFile}) {
    absl::StatusOr<std::string> beat = os::ReadSmallFileAt(old->get(), name, kMaxHeartbeatBytes);
    if (beat.ok() && !beat->empty()) return *std::move(beat);
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<os::UniqueFd> OpenSlotRecordsDir(const std::string& local_dir, int port) {
  ASSIGN_OR_RETURN(const os::UniqueFd local, OpenLocalDir(local_dir));
  const std::string supervisor_path = absl::StrCat(local_dir, "/supervisor");
  ASSIGN_OR_RETURN(const os::UniqueFd supervisor,
                   OwnedDirectoryAt(local.get(), "supervisor", supervisor_path, 0755));
  const std::string workers_path = absl::StrCat(supervisor_path, "/workers");
  ASSIGN_OR_RETURN(const os::UniqueFd workers,
                   OwnedDirectoryAt(supervisor.get(), "workers", workers_path, 0750));
  return OwnedDirectoryAt(workers.get(), absl::StrCat(port), SlotRecordsDir(local_dir, port),
                          0750);
}

absl::StatusOr<PreparedSlot> PrepareSlot(const std::string& local_dir, int port,
                                         const std::optional<os::UnixUser>& account) {
  PreparedSlot slot;
  ASSIGN_OR_RETURN(slot.records, OpenSlotRecordsDir(local_dir, port));
  ASSIGN_OR_RETURN(slot.log, os::OpenForAppendAt(slot.records.get(), kWorkerLogFile, 0640));

  ASSIGN_OR_RETURN(const os::UniqueFd parent, OpenScratchParent(local_dir));
  const std::string name = absl::StrCat(port);
  slot.scratch = WorkerDir(local_dir, port);
  const std::optional<std::string> previous = PreviousBeat(parent.get(), name);
  if (absl::Status s = os::RemoveTreeAt(parent.get(), name); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("cannot clear ", slot.scratch, ": ", s.message()));
  }
  absl::StatusOr<os::UniqueFd> scratch = os::MakeDirectoryAt(parent.get(), name, 0700);
  if (!scratch.ok()) {
    return absl::Status(scratch.status().code(),
                        absl::StrCat(slot.scratch, ": ", scratch.status().message()));
  }
  if (previous) {
    // Read-only to the worker: what it carries forward is ours to give.
    RETURN_IF_ERROR(
        os::WriteFileAtomicallyAt(scratch->get(), kPreviousHeartbeatFile, *previous, 0444));
  }
  if (account && ::fchown(scratch->get(), account->uid, account->gid) != 0) {
    return absl::PermissionDeniedError(absl::StrCat("cannot give ", slot.scratch, " to ",
                                                    account->name, ": ", std::strerror(errno)));
  }
  return slot;
}

absl::StatusOr<std::string> ReadSlotHeartbeat(const std::string& local_dir, int port) {
  const std::string dir = WorkerDir(local_dir, port);
  ASSIGN_OR_RETURN(const os::UniqueFd scratch, os::OpenDirectory(dir));
  absl::StatusOr<std::string> beat =
      os::ReadSmallFileAt(scratch.get(), kHeartbeatFile, kMaxHeartbeatBytes);
  if (!beat.ok() && !absl::IsNotFound(beat.status())) {
    return absl::Status(beat.status().code(), absl::StrCat(dir, ": ", beat.status().message()));
  }
  return beat;
}

std::string ReadWorkerLogTail(const std::string& local_dir, int port, size_t max_bytes) {
  absl::StatusOr<os::UniqueFd> records = os::OpenDirectory(SlotRecordsDir(local_dir, port));
  if (!records.ok()) return "";
  const int fd = ::openat(records->get(), kWorkerLogFile,
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "";
  os::UniqueFd log(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return "";
  const off_t size = st.st_size;
  const off_t from = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes)
                                                           : 0;
  std::string tail(static_cast<size_t>(size - from), '\0');
  const ssize_t n = ::pread(fd, tail.data(), tail.size(), from);
  tail.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return tail;
}

void RemoveLaunchRecord(const std::string& local_dir, int port) {
  absl::StatusOr<os::UniqueFd> records = os::OpenDirectory(SlotRecordsDir(local_dir, port));
  if (records.ok()) ::unlinkat(records->get(), kWorkerJsonFile, 0);
}

}  // namespace tempest::supervisor
