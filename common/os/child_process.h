#ifndef TEMPEST_COMMON_OS_CHILD_PROCESS_H_
#define TEMPEST_COMMON_OS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tempest::os {

// One child process started with fork/exec, in its own process group, that
// dies with its parent (PR_SET_PDEATHSIG) so a crashed test or daemon never
// leaves servers behind. Owns the child: the destructor kills the whole group
// and reaps it. Not thread-safe; use from the thread that started it (the
// death signal is tied to that thread, so start children from a long-lived
// thread such as main).
class ChildProcess {
 public:
  struct Options {
    std::vector<std::string> argv;            // argv[0] is looked up on PATH
    std::string working_dir;                  // empty: inherit
    std::string stdout_path;                  // empty: inherit; else appended to
    std::string stderr_path;                  // empty: inherit; "=stdout" joins stdout
    std::map<std::string, std::string> env;   // added to / overriding the parent's
    // False: the child gets only `env`, nothing of the parent's environment
    // (see AllowlistedEnvironment for the variables a sandboxed child keeps).
    bool inherit_env = true;
    // Descriptors the child gets as its stdin / stdout (e.g. pipe ends), so a
    // parent can talk to it; -1: stdin is inherited, stdout follows
    // stdout_path. The caller keeps ownership and closes its copies.
    int stdin_fd = -1;
    int stdout_fd = -1;
    // Likewise for stderr (-1: stderr follows stderr_path).
    int stderr_fd = -1;
  };

  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const Options& options);

  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // Sends `signal` to the child's whole process group. False once reaped.
  bool SignalGroup(int signal);
  // True while the child has not exited (reaps it if it just did).
  bool Running();
  // Waits up to `timeout` for exit; returns the wait status, or nullopt on
  // timeout.
  std::optional<int> WaitFor(std::chrono::milliseconds timeout);
  // SIGTERM, wait up to `grace`, then SIGKILL; always reaps. Returns the wait
  // status.
  int Stop(std::chrono::milliseconds grace);
  // SIGKILL the group and reap.
  int Kill();

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  bool TryReap(int options);

  pid_t pid_;
  std::optional<int> exit_status_;
};

// The part of this process's environment a process running untrusted code
// gets (docs/security.md, "The environment of workers and multilang
// children"): PATH, LANG, LC_*, TZ, TMPDIR, the sanitizers' *SAN_OPTIONS, and
// HOME set to the home directory of the effective user's passwd entry (left
// out when it has none). Everything else (tokens, credentials, the daemon's
// own settings) stays behind.
std::map<std::string, std::string> AllowlistedEnvironment();

// Waits until the text file at `path` (a child's log) holds a line starting
// with `prefix` and returns the rest of that line. FailedPrecondition as soon
// as `process` exits without printing it; DeadlineExceeded after `timeout`.
// Both errors name the log. Polls every 50 ms; use from the child's owner.
absl::StatusOr<std::string> AwaitLogLine(const std::string& path, const std::string& prefix,
                                         ChildProcess& process,
                                         std::chrono::milliseconds timeout);

// Human-readable form of a wait status ("exited 0", "killed by signal 9").
std::string DescribeWaitStatus(int status);

}  // namespace tempest::os

#endif  // TEMPEST_COMMON_OS_CHILD_PROCESS_H_
