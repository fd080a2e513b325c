#include "supervisor/worker_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "common/os/child_process.h"
#include "common/os/unique_fd.h"
#include "supervisor/worker_files.h"

namespace tempest::supervisor {

namespace {

// The worker runs topology code: it gets the allowlisted variables only,
// never the supervisor's tokens or settings, and no HOME (root's, here).
// "NAME=value" entries.
std::vector<std::string> WorkerEnvironment() {
  std::map<std::string, std::string> env = os::AllowlistedEnvironment();
  env.erase("HOME");
  std::vector<std::string> entries;
  for (const auto& [k, v] : env) entries.push_back(k + "=" + v);
  return entries;
}

// stdin from the credentials pipe (`stdin_fd`, -1: /dev/null), stdout and
// stderr to the worker's log.
void SetChildDescriptors(posix_spawn_file_actions_t& files, int stdin_fd, int log_fd) {
  if (stdin_fd >= 0) {
    posix_spawn_file_actions_adddup2(&files, stdin_fd, STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&files, log_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&files, STDOUT_FILENO, STDERR_FILENO);
  // ZooKeeper and log descriptors of the supervisor are not the worker's.
  posix_spawn_file_actions_addclosefrom_np(&files, STDERR_FILENO + 1);
}

// No blocked signals, default dispositions, and a process group of its own.
void SetChildSignalsAndGroup(posix_spawnattr_t& attr) {
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own, led by the worker
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

}  // namespace

absl::StatusOr<pid_t> SpawnWorker(const std::vector<std::string>& argv, int log_fd,
                                  const std::string& stdin_data) {
  if (argv.empty()) return absl::InvalidArgumentError("empty worker command");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage = WorkerEnvironment();
  std::vector<char*> envp;
  for (std::string& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  // Credentials go through a pipe the worker reads before it runs anything
  // else: never through a file, an argument or the environment.
  os::Pipe handoff;
  if (!stdin_data.empty()) {
    ASSIGN_OR_RETURN(handoff, os::MakePipe(O_CLOEXEC));
  }

  posix_spawn_file_actions_t files;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&files);
  posix_spawnattr_init(&attr);
  SetChildDescriptors(files, handoff.read.valid() ? handoff.read.get() : -1, log_fd);
  SetChildSignalsAndGroup(attr);

  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args[0], &files, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (handoff.read.valid()) {
    handoff.read.Reset();
    // A few hundred bytes fit the pipe's buffer: the write never waits for
    // the worker. A worker that died at once only loses its copy.
    if (rc == 0) {
      size_t done = 0;
      while (done < stdin_data.size()) {
        const ssize_t n =
            ::write(handoff.write.get(), stdin_data.data() + done, stdin_data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
    }
    handoff.write.Reset();
  }
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start worker ", argv[0], ": ", std::strerror(rc)));
  }
  return pid;
}

std::optional<int> ReapIfExited(pid_t pid) {
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid) return status;
  if (r < 0) return 0;  // ECHILD: not ours (or reaped already)
  return std::nullopt;
}

std::optional<uint64_t> ProcessStartTime(pid_t pid) {
  absl::StatusOr<std::string> stat = ReadSmallFile(absl::StrCat("/proc/", pid, "/stat"), 4096);
  if (!stat.ok()) return std::nullopt;
  // "pid (comm) S ppid ...": comm may hold spaces and parentheses, so parse
  // after the last ')'.
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::vector<std::string> fields;
  std::istringstream in(stat->substr(close + 1));
  for (std::string f; in >> f;) fields.push_back(f);
  // fields[0] is the state (field 3); the start time is field 22.
  if (fields.size() < 20 || fields[0] == "Z" || fields[0] == "X") return std::nullopt;
  uint64_t start = 0;
  if (!absl::SimpleAtoi(api::Sv(fields[19]), &start)) return std::nullopt;
  return start;
}

namespace {

std::vector<std::string> CommandLine(pid_t pid) {
  std::vector<std::string> args;
  absl::StatusOr<std::string> cmdline =
      ReadSmallFile(absl::StrCat("/proc/", pid, "/cmdline"), 1 << 16);
  if (!cmdline.ok()) return args;
  for (size_t begin = 0; begin < cmdline->size();) {
    size_t end = cmdline->find('\0', begin);
    if (end == std::string::npos) end = cmdline->size();
    args.push_back(cmdline->substr(begin, end - begin));
    begin = end + 1;
  }
  return args;
}

}  // namespace

std::vector<pid_t> FindWorkersOf(const std::string& supervisor_id) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(api::Sv(entry.path().filename().string()), &pid) || pid == ::getpid()) {
      continue;
    }
    const std::vector<std::string> args = CommandLine(pid);
    bool worker = false, ours = false;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "worker") worker = true;
      if (args[i] == "--supervisor-id" && i + 1 < args.size() && args[i + 1] == supervisor_id) {
        ours = true;
      }
    }
    if (worker && ours && ProcessStartTime(pid).has_value()) out.push_back(pid);
  }
  return out;
}

bool LooksLikeWorker(pid_t pid, int port) {
  const std::vector<std::string> args = CommandLine(pid);
  const std::string port_text = absl::StrCat(port);
  bool worker = false, has_port = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "worker") worker = true;
    if (args[i] == "--port" && i + 1 < args.size() && args[i + 1] == port_text) has_port = true;
    if (args[i] == absl::StrCat("--port=", port_text)) has_port = true;
  }
  return worker && has_port;
}

void SignalWorkerGroup(pid_t pid, int signal) {
  if (pid <= 1) return;  // never signal every process, or init
  ::kill(-pid, signal);
  ::kill(pid, signal);
}

}  // namespace tempest::supervisor
