#ifndef TEMPEST_SUPERVISOR_WORKER_LAUNCHER_H_
#define TEMPEST_SUPERVISOR_WORKER_LAUNCHER_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tempest::supervisor {

// POSIX plumbing for worker processes. Unlike os::ChildProcess, a worker
// must outlive a crashed supervisor (the next one adopts it), so there is no
// parent-death signal and nothing here kills on destruction. Stateless; safe
// from any thread.

// Starts `argv` (argv[0] is the program path, used as is) with posix_spawn:
// its own process group, every signal unblocked and at its default action
// (the supervisor blocks SIGINT/SIGTERM in all of its threads, and a blocked
// or ignored signal would survive exec), stdin from /dev/null, stdout and
// stderr onto `log_fd` (opened by the caller, in a directory only the
// supervisor writes, for appending), no other descriptor inherited, the
// supervisor's working directory and only the allowlisted part of its
// environment (os::AllowlistedEnvironment, without HOME). A non-empty
// `stdin_data` (the worker's identity handoff, coord::EncodeWorkerHandoff)
// is written to a pipe that is the worker's stdin, then the pipe is closed;
// empty: stdin from /dev/null. Returns the pid.
absl::StatusOr<pid_t> SpawnWorker(const std::vector<std::string>& argv, int log_fd,
                                  const std::string& stdin_data = "");

// For our own children: the wait status if `pid` has exited (reaping it),
// nullopt while it runs. A pid that is not our child reads as exited with
// status 0.
std::optional<int> ReapIfExited(pid_t pid);

// Linux start time of `pid` (field 22 of /proc/PID/stat, in clock ticks
// since boot); nullopt when there is no such process or it is a zombie. A
// pid reused by another process has another start time.
std::optional<uint64_t> ProcessStartTime(pid_t pid);

// Whether /proc/PID/cmdline looks like a worker for `port`: an argument
// "worker" and "--port" followed by the port. A running worker rewrites its
// command line to its title (worker::WorkerProcessTitle) but keeps "worker",
// "--supervisor-id ID" and "--port PORT" in it for this and FindWorkersOf.
bool LooksLikeWorker(pid_t pid, int port);

// Live processes (not zombies) whose command line is a worker launched for
// `supervisor_id` ("worker" ... "--supervisor-id ID"), from /proc. Finds
// workers whose worker.json was lost (a crash between launch and write).
std::vector<pid_t> FindWorkersOf(const std::string& supervisor_id);

// Sends `signal` to the process group `pid` leads and to `pid` itself (the
// group may outlive its leader, or the leader may have left it).
void SignalWorkerGroup(pid_t pid, int signal);

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_WORKER_LAUNCHER_H_
