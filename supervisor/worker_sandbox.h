#ifndef TEMPEST_SUPERVISOR_WORKER_SANDBOX_H_
#define TEMPEST_SUPERVISOR_WORKER_SANDBOX_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/os/dir_files.h"
#include "common/os/privileges.h"

namespace tempest::supervisor {

// Where a slot's files live, split by who may write them (docs/security.md,
// "The worker sandbox"):
//   {local}/supervisor/workers/{port}/  the supervisor's own (0750): the
//       launch record worker.json and worker.log, the worker's stdout and
//       stderr. Nothing a worker runs can write there.
//   {local}/workers/{port}/             the worker's scratch directory and
//       working directory (0700, the slot's account): its heartbeat, the
//       topology's resources, whatever topology code writes. Removed and
//       made afresh, without following links, before every launch.
// Every step from {local} down is opened relative to its parent, without
// following links, and must belong to the supervisor's own account.
// Stateless functions; the control thread calls them.

// Opens the supervisor's directory for slot `port`, creating what is
// missing. FailedPrecondition when a directory on the way belongs to
// another account or is a link.
absl::StatusOr<os::UniqueFd> OpenSlotRecordsDir(const std::string& local_dir, int port);

// What a new worker of slot `port` starts with.
struct PreparedSlot {
  os::UniqueFd records;  // {local}/supervisor/workers/{port}
  os::UniqueFd log;      // worker.log there, opened for appending
  std::string scratch;   // {local}/workers/{port}, fresh
};

// Makes the slot ready for a launch: the last heartbeat of the slot's
// previous worker is kept for the new one (as heartbeat.previous, so the
// slot's running totals carry forward), the old scratch directory is removed
// without following links and a fresh one is made, given to `account` (when
// the supervisor is root) and closed to everyone else.
absl::StatusOr<PreparedSlot> PrepareSlot(const std::string& local_dir, int port,
                                         const std::optional<os::UnixUser>& account);

// The heartbeat file of slot `port`'s worker: opened in the scratch
// directory without following a link, a regular file of at most 1 MiB.
absl::StatusOr<std::string> ReadSlotHeartbeat(const std::string& local_dir, int port);

// The last `max_bytes` of slot `port`'s worker.log (the output of its
// workers), opened in the records directory without following a link;
// empty when there is none.
std::string ReadWorkerLogTail(const std::string& local_dir, int port, size_t max_bytes);

// Removes worker.json of slot `port` (after its worker is gone).
void RemoveLaunchRecord(const std::string& local_dir, int port);

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_WORKER_SANDBOX_H_
