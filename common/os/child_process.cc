#include "common/os/child_process.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/os/unique_fd.h"

namespace tempest::os {
namespace {

// Everything the child needs is prepared before fork(): after fork in a
// multi-threaded parent only async-signal-safe calls are allowed.
struct PreparedExec {
  std::vector<std::string> env_storage;
  std::vector<char*> argv;
  std::vector<char*> envp;
};

std::map<std::string, std::string> CurrentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq == nullptr) continue;
    env[std::string(static_cast<const char*>(*e), eq)] = eq + 1;
  }
  return env;
}

bool AllowedVariable(const std::string& name) {
  return name == "PATH" || name == "LANG" || name == "TZ" || name == "TMPDIR" ||
         name.rfind("LC_", 0) == 0 ||
         (name.size() > 11 && name.compare(name.size() - 11, 11, "SAN_OPTIONS") == 0);
}

PreparedExec Prepare(const ChildProcess::Options& options) {
  PreparedExec p;
  std::map<std::string, std::string> env;
  if (options.inherit_env) env = CurrentEnvironment();
  for (const auto& [k, v] : options.env) env[k] = v;
  for (const auto& [k, v] : env) p.env_storage.push_back(k + "=" + v);
  for (auto& s : p.env_storage) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);
  for (const auto& a : options.argv) p.argv.push_back(const_cast<char*>(a.c_str()));
  p.argv.push_back(nullptr);
  return p;
}

}  // namespace

std::map<std::string, std::string> AllowlistedEnvironment() {
  std::map<std::string, std::string> env;
  for (auto& [name, value] : CurrentEnvironment()) {
    if (AllowedVariable(name)) env[name] = std::move(value);
  }
  // The home of the account this process runs as, never the one it was
  // started from (a root supervisor's HOME is root's).
  std::string buffer(16384, '\0');
  struct passwd entry {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &entry, buffer.data(), buffer.size(), &found) == 0 &&
      found != nullptr && found->pw_dir != nullptr && found->pw_dir[0] != '\0') {
    env["HOME"] = found->pw_dir;
  }
  return env;
}

namespace {

[[noreturn]] void ChildFail(int fd, const char* what) {
  // Report through the pipe (async-signal-safe write) and exit.
  int err = errno;
  (void)!write(fd, &err, sizeof(err));
  (void)!write(fd, what, std::strlen(what));
  _exit(127);
}

// The files Options names by path, opened in the parent so that a failure
// is reported as a Status rather than from the child.
struct OutputFiles {
  UniqueFd out;
  UniqueFd err;
  bool err_to_out = false;  // stderr_path "=stdout"
};

absl::StatusOr<UniqueFd> OpenForAppend(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  return fd;
}

absl::StatusOr<OutputFiles> OpenOutputFiles(const ChildProcess::Options& options) {
  OutputFiles files;
  files.err_to_out = options.stderr_path == "=stdout";
  if (!options.stdout_path.empty()) {
    ASSIGN_OR_RETURN(files.out, OpenForAppend(options.stdout_path));
  }
  if (!options.stderr_path.empty() && !files.err_to_out) {
    ASSIGN_OR_RETURN(files.err, OpenForAppend(options.stderr_path));
  }
  return files;
}

// Between fork and exec, in the child: only async-signal-safe calls. Every
// failure is written to `report` and ends the child with 127.
[[noreturn]] void ExecChild(const ChildProcess::Options& options, const PreparedExec& exec,
                            const OutputFiles& files, int report, pid_t parent) {
  ::setpgid(0, 0);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ChildFail(report, "prctl");
  // The parent may have died between fork and prctl.
  if (::getppid() != parent) _exit(1);
  if (options.stdin_fd >= 0 && ::dup2(options.stdin_fd, STDIN_FILENO) < 0) {
    ChildFail(report, "dup2 stdin");
  }
  if (options.stdout_fd >= 0 && ::dup2(options.stdout_fd, STDOUT_FILENO) < 0) {
    ChildFail(report, "dup2 stdout");
  }
  if (options.stderr_fd >= 0 && ::dup2(options.stderr_fd, STDERR_FILENO) < 0) {
    ChildFail(report, "dup2 stderr");
  }
  if (files.out.valid() && ::dup2(files.out.get(), STDOUT_FILENO) < 0) {
    ChildFail(report, "dup2 stdout");
  }
  if (files.err.valid() && ::dup2(files.err.get(), STDERR_FILENO) < 0) {
    ChildFail(report, "dup2 stderr");
  }
  if (files.err_to_out && ::dup2(STDOUT_FILENO, STDERR_FILENO) < 0) ChildFail(report, "dup2");
  if (!options.working_dir.empty() && ::chdir(options.working_dir.c_str()) != 0) {
    ChildFail(report, "chdir");
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execvpe(exec.argv[0], exec.argv.data(), exec.envp.data());
  ChildFail(report, "exec");
}

// What the child wrote to the report pipe before exec: nothing (end of file)
// when exec succeeded, else the errno and the step that failed.
struct ExecReport {
  bool failed = false;
  int child_errno = 0;
  char what[64] = {};
};

ExecReport ReadExecReport(int fd) {
  ExecReport report;
  ssize_t n;
  do {
    n = ::read(fd, &report.child_errno, sizeof(report.child_errno));
  } while (n < 0 && errno == EINTR);
  report.failed = n > 0;
  // The step's name is for the message only: a short read leaves it shorter.
  if (report.failed) (void)!::read(fd, report.what, sizeof(report.what) - 1);
  return report;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(const Options& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("ChildProcess: empty argv");
  PreparedExec exec = Prepare(options);
  ASSIGN_OR_RETURN(OutputFiles files, OpenOutputFiles(options));
  // A close-on-exec pipe tells us whether exec succeeded: EOF means it did.
  ASSIGN_OR_RETURN(Pipe report, MakePipe(O_CLOEXEC));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(report.read.get());
    ExecChild(options, exec, files, report.write.get(), parent);
  }
  report.write.Reset();
  files.out.Reset();
  files.err.Reset();
  // Also set the group from the parent, so SignalGroup works even if we race
  // the child's own setpgid.
  ::setpgid(pid, pid);

  const ExecReport exec_report = ReadExecReport(report.read.get());
  report.read.Reset();
  auto child = std::unique_ptr<ChildProcess>(new ChildProcess(pid));
  if (exec_report.failed) {
    child->Kill();
    return absl::FailedPreconditionError(absl::StrCat("cannot start ", options.argv[0], ": ",
                                                      exec_report.what, ": ",
                                                      std::strerror(exec_report.child_errno)));
  }
  return child;
}

ChildProcess::~ChildProcess() {
  if (!exit_status_) Kill();
}

bool ChildProcess::TryReap(int options) {
  if (exit_status_) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, options);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exit_status_ = status;
    return true;
  }
  if (r < 0 && errno == ECHILD) {
    exit_status_ = 0;  // reaped elsewhere; nothing left to wait for
    return true;
  }
  return false;
}

bool ChildProcess::SignalGroup(int signal) {
  if (exit_status_) return false;
  // The group may outlive its leader (a child's own children), and the leader
  // may have left it. Signal the leader on its own only then: a process that
  // counts stop signals (a second SIGINT means "stop at once") must get one.
  if (::kill(-pid_, signal) == 0 && ::getpgid(pid_) == pid_) return true;
  return ::kill(pid_, signal) == 0 || errno != ESRCH;
}

bool ChildProcess::Running() { return !TryReap(WNOHANG); }

std::optional<int> ChildProcess::WaitFor(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto sleep = std::chrono::milliseconds(1);
  while (!TryReap(WNOHANG)) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(sleep);
    sleep = std::min(sleep * 2, std::chrono::milliseconds(50));
  }
  return exit_status_;
}

int ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (exit_status_) return *exit_status_;
  SignalGroup(SIGTERM);
  if (auto status = WaitFor(grace)) {
    ::kill(-pid_, SIGKILL);  // stragglers in the group
    return *status;
  }
  return Kill();
}

int ChildProcess::Kill() {
  if (!exit_status_) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    TryReap(0);
  }
  return *exit_status_;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exited ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("killed by signal ", WTERMSIG(status));
  return absl::StrCat("wait status ", status);
}

absl::StatusOr<std::string> AwaitLogLine(const std::string& path, const std::string& prefix,
                                         ChildProcess& process,
                                         std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    // Checked before reading, so a line printed just before exiting counts.
    const bool running = process.Running();
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
    }
    if (!running) {
      return absl::FailedPreconditionError(
          absl::StrCat("the process exited before printing '", prefix, "'; see ", path));
    }
    if (std::chrono::steady_clock::now() >= until) {
      return absl::DeadlineExceededError(absl::StrCat("no line '", prefix, "' within ",
                                                      timeout.count(), " ms; see ", path));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace tempest::os
