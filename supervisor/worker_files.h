#ifndef TEMPEST_SUPERVISOR_WORKER_FILES_H_
#define TEMPEST_SUPERVISOR_WORKER_FILES_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/os/files.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::supervisor {

// The files a supervisor shares with its workers under storm.local.dir
// (supervisor/worker_sandbox.h says who may write where):
//   {local}/supervisor/id                      the supervisor id (one line)
//   {local}/supervisor/workers/{port}/worker.json  written by the supervisor at launch
//   {local}/supervisor/workers/{port}/worker.log   the worker's stdout and stderr
//   {local}/workers/{port}/heartbeat           v1::WorkerHeartbeat, written by the worker
//   {local}/workers/{port}/heartbeat.previous  the previous worker's last beat
// Parsers take untrusted bytes: anything malformed is one clear error.
// Stateless functions; safe from any thread.

inline constexpr char kWorkerJsonFile[] = "worker.json";
inline constexpr char kWorkerLogFile[] = "worker.log";
inline constexpr char kHeartbeatFile[] = "heartbeat";
// The last beat of the slot's previous worker, put into the fresh scratch
// directory at launch for the new worker (worker/worker_process.cc reads it
// by the same name) to carry the slot's totals forward.
inline constexpr char kPreviousHeartbeatFile[] = "heartbeat.previous";

// {local}/workers/{port}: the worker's scratch and working directory.
std::string WorkerDir(std::string_view local_dir, int port);
// {local}/supervisor/workers/{port}: the supervisor's records of the slot.
std::string SlotRecordsDir(std::string_view local_dir, int port);
// {dir}/worker.json, {dir}/worker.log (dir: a SlotRecordsDir).
std::string WorkerJsonPath(std::string_view records_dir);
std::string WorkerLogPath(std::string_view records_dir);
// {dir}/heartbeat, {dir}/heartbeat.previous (dir: a WorkerDir).
std::string HeartbeatPath(std::string_view worker_dir);
std::string PreviousHeartbeatPath(std::string_view worker_dir);
std::string SupervisorIdPath(std::string_view local_dir);

// {"pid":N,"topologyId":"..","port":N,"supervisorId":"..","launchedAtSecs":N}
struct WorkerLaunchRecord {
  pid_t pid = 0;
  std::string topology_id;
  int port = 0;
  std::string supervisor_id;
  int64_t launched_at_secs = 0;
  friend bool operator==(const WorkerLaunchRecord&, const WorkerLaunchRecord&) = default;
};
std::string EncodeWorkerJson(const WorkerLaunchRecord& record);
// InvalidArgument for anything that is not such an object with a positive
// pid and port and a non-empty topology id.
absl::StatusOr<WorkerLaunchRecord> ParseWorkerJson(std::string_view text);

// A heartbeat file's content. InvalidArgument when it does not parse as a
// v1::WorkerHeartbeat or lacks a topology id, a port or a time: a torn or
// garbage file counts as no heartbeat.
absl::StatusOr<v1::WorkerHeartbeat> ParseWorkerHeartbeat(std::string_view bytes);
// Whether the beat was written by the worker we launched: same topology and
// port, and the same pid when the beat carries one (an old worker's last
// beat must not vouch for its successor).
bool HeartbeatBelongsTo(const v1::WorkerHeartbeat& beat, std::string_view topology_id, int port,
                        pid_t pid);

// Ids are file and znode names: 1-128 characters of [A-Za-z0-9._-], not "."
// or "..".
absl::Status ValidateSupervisorId(std::string_view id);
// Reads {local}/supervisor/id, or creates it with a random id (32 hex
// digits) the first time. A file that holds no valid id is an error naming
// the file (removing it gives the supervisor a new id).
absl::StatusOr<std::string> LoadOrCreateSupervisorId(std::string_view local_dir);

// File helpers shared with other services (common/os/files.h).
using os::MakeDirs;
using os::ReadSmallFile;
using os::WriteFileAtomically;

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_WORKER_FILES_H_
