#include "common/multilang/shell_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "common/core/config/secret_config.h"
#include "common/multilang/json_codec.h"
#include "common/os/dir_files.h"
#include "common/os/limits.h"
#include "common/os/unique_fd.h"
#include "spdlog/spdlog.h"

namespace tempest::multilang {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch())
      .count();
}

// A write to a pipe whose reader died raises SIGPIPE, which would kill the
// whole worker. Ignore it (writes then fail with EPIPE), unless the program
// installed its own handler.
void IgnoreSigpipeOnce() {
  static const bool done = [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      sigemptyset(&ignore.sa_mask);
      ::sigaction(SIGPIPE, &ignore, nullptr);
    }
    return true;
  }();
  (void)done;
}

absl::StatusOr<std::string> MakePidDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp",
                                     "/tempest-multilang-XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp ", pattern, ": ", std::strerror(errno)));
  }
  return pattern;
}

nlohmann::json GroupingJson(const api::StreamSubscription& s) {
  nlohmann::json grouping{{"type", s.grouping}};
  if (!s.fields.empty()) grouping["fields"] = s.fields;
  return grouping;
}

// Storm's subscription keys of the handshake context, for this component:
// stream->target->grouping (its outputs), source->stream->grouping and
// source->stream->fields (its inputs).
void AddSubscriptions(const api::TopologyContext& context, nlohmann::json& out) {
  const api::ComponentId& self = context.ThisComponentId();
  nlohmann::json targets = nlohmann::json::object();
  nlohmann::json source_groupings = nlohmann::json::object();
  nlohmann::json source_fields = nlohmann::json::object();
  for (const api::StreamSubscription& s : context.info().subscriptions) {
    if (s.from == self) targets[s.stream.value()][s.to.value()] = GroupingJson(s);
    if (s.to != self) continue;
    source_groupings[s.from.value()][s.stream.value()] = GroupingJson(s);
    nlohmann::json fields = nlohmann::json::array();
    if (const api::Fields* declared = context.OutputFields(s.from, s.stream)) {
      for (const std::string& f : declared->names()) fields.push_back(f);
    }
    source_fields[s.from.value()][s.stream.value()] = std::move(fields);
  }
  out["stream->target->grouping"] = std::move(targets);
  out["source->stream->grouping"] = std::move(source_groupings);
  out["source->stream->fields"] = std::move(source_fields);
}

}  // namespace

std::chrono::milliseconds SubprocessTimeout(const api::Config& config) {
  const double secs = config.GetDouble(kSubprocessTimeoutSecs, kDefaultSubprocessTimeoutSecs);
  const double ms = secs * 1000.0;
  if (!(ms >= 200.0)) return std::chrono::milliseconds(200);
  if (ms > 1e9) return std::chrono::milliseconds(1000000000);
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

std::optional<uint64_t> ParseTupleId(const nlohmann::json& id) {
  if (id.is_number_unsigned()) return id.get<uint64_t>();
  if (id.is_number_integer()) {
    const int64_t v = id.get<int64_t>();
    if (v < 0) return std::nullopt;
    return static_cast<uint64_t>(v);
  }
  if (!id.is_string()) return std::nullopt;
  const std::string& s = id.get_ref<const std::string&>();
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t next = v * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != v) return std::nullopt;  // overflow
    v = next;
  }
  return v;
}

nlohmann::json HandshakeContext(const api::TopologyContext& context) {
  nlohmann::json task_to_component = nlohmann::json::object();
  for (const auto& [task, component] : context.info().task_to_component) {
    task_to_component[absl::StrCat(task.value())] = component.value();
  }
  nlohmann::json output_fields = nlohmann::json::object();
  nlohmann::json streams = nlohmann::json::array();
  auto it = context.info().component_streams.find(context.ThisComponentId());
  if (it != context.info().component_streams.end()) {
    for (const auto& [stream, declaration] : it->second) {
      nlohmann::json fields = nlohmann::json::array();
      for (const std::string& f : declaration.fields.names()) fields.push_back(f);
      output_fields[stream.value()] = std::move(fields);
      streams.push_back(stream.value());
    }
  }
  nlohmann::json out{{"taskid", context.ThisTaskId().value()},
                     {"componentid", context.ThisComponentId().value()},
                     {"task->component", std::move(task_to_component)},
                     {"streams", std::move(streams)},
                     {"stream->outputfields", std::move(output_fields)}};
  AddSubscriptions(context, out);
  return out;
}

absl::StatusOr<std::unique_ptr<ShellProcess>> ShellProcess::StartForComponent(
    const std::vector<std::string>& command, const api::TopologyContext& context,
    std::chrono::milliseconds timeout, std::string_view label,
    std::function<void()> on_message) {
  ShellOptions options;
  options.on_message = std::move(on_message);
  options.command = command;
  options.working_dir = context.config().GetString(kResourcesDirKey, "");
  options.timeout = timeout;
  options.label = std::string(label);
  absl::StatusOr<std::unique_ptr<ShellProcess>> shell = Start(options, context.config(), context);
  if (!shell.ok()) {
    return absl::Status(shell.status().code(),
                        absl::StrCat(api::Sv(label), ": ",
                                     api::Sv(api::StdSv(shell.status().message()))));
  }
  return shell;
}

namespace {

// A child runs topology code: it gets the allowlisted variables
// (os::AllowlistedEnvironment) and the topology's own topology.environment
// (Storm's key, a map of names to values), nothing else of the worker's.
std::map<std::string, std::string> ChildEnvironment(const api::Config& config) {
  std::map<std::string, std::string> env = os::AllowlistedEnvironment();
  const api::Value* v = config.Find(kTopologyEnvironmentKey);
  if (v == nullptr || v->is_nil()) return env;
  const api::ValueMap* vars = v->TryMap();
  if (vars == nullptr) {
    spdlog::warn("multilang: {} is not a map; ignored", kTopologyEnvironmentKey);
    return env;
  }
  for (const auto& [name, value] : *vars) {
    std::string text;
    if (const std::string* s = value.TryString()) {
      text = *s;
    } else if (std::optional<int64_t> i = value.TryInt(); i.has_value() && value.is_int()) {
      text = absl::StrCat(*i);
    } else if (value.is_bool()) {
      text = *value.TryBool() ? "true" : "false";
    } else {
      spdlog::warn("multilang: {}.{} is not a string, integer or boolean; ignored",
                   kTopologyEnvironmentKey, name);
      continue;
    }
    if (name.empty() || name.find_first_of(std::string_view("=\0", 2)) != std::string::npos ||
        text.find('\0') != std::string::npos) {
      spdlog::warn("multilang: {} holds a name or value a process environment cannot; ignored",
                   kTopologyEnvironmentKey);
      continue;
    }
    env[name] = std::move(text);
  }
  return env;
}

// The three pipes between a child and us.
struct ChildPipes {
  os::Pipe to_child;
  os::Pipe from_child;
  os::Pipe err_child;
};

absl::StatusOr<ChildPipes> MakeChildPipes() {
  ChildPipes pipes;
  ASSIGN_OR_RETURN(pipes.to_child, os::MakePipe(O_CLOEXEC));
  ASSIGN_OR_RETURN(pipes.from_child, os::MakePipe(O_CLOEXEC));
  ASSIGN_OR_RETURN(pipes.err_child, os::MakePipe(O_CLOEXEC));
  return pipes;
}

// The message the child ended with an `end` line: a JSON object or array,
// or an error saying why not.
ShellMessage ParseMessage(const std::string& message) {
  absl::StatusOr<nlohmann::json> parsed = ParseChildJson(message);
  if (!parsed.ok()) {
    return {{}, absl::StrCat("malformed JSON from the child (", parsed.status().message(),
                             "): ", absl::CHexEscape(message.substr(0, 120)))};
  }
  if (!parsed->is_object() && !parsed->is_array()) {
    return {{}, absl::StrCat("a message from the child is not a JSON object: ",
                             absl::CHexEscape(message.substr(0, 120)))};
  }
  return {*std::move(parsed), {}};
}

void SetNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

absl::StatusOr<std::unique_ptr<ShellProcess>> ShellProcess::Start(
    const ShellOptions& options, const api::Config& config, const api::TopologyContext& context) {
  if (options.command.empty()) return absl::InvalidArgumentError("multilang: empty command");
  IgnoreSigpipeOnce();
  auto shell = std::unique_ptr<ShellProcess>(new ShellProcess());
  shell->options_ = options;
  const std::string what = absl::StrJoin(options.command, " ");
  if (shell->options_.label.empty()) shell->options_.label = what;
  // On an error the destructor kills and reaps the child.
  RETURN_IF_ERROR(shell->Spawn(config));
  RETURN_IF_ERROR(shell->Handshake(config, context, what));
  return shell;
}

absl::Status ShellProcess::Spawn(const api::Config& config) {
  ASSIGN_OR_RETURN(ChildPipes pipes, MakeChildPipes());
  stdin_fd_ = std::move(pipes.to_child.write);
  stdout_fd_ = std::move(pipes.from_child.read);
  stderr_fd_ = std::move(pipes.err_child.read);
  SetNonBlocking(stderr_fd_.get());
  // Bigger pipes mean fewer wake-ups per batch; failure is harmless.
  (void)::fcntl(stdin_fd_.get(), F_SETPIPE_SZ, 1 << 20);  // a refusal keeps the default size
  (void)::fcntl(pipes.from_child.write.get(), F_SETPIPE_SZ, 1 << 20);  // likewise
  SetNonBlocking(stdin_fd_.get());

  os::ChildProcess::Options child_options;
  child_options.argv = options_.command;
  child_options.working_dir = options_.working_dir;
  child_options.stdin_fd = pipes.to_child.read.get();
  child_options.stdout_fd = pipes.from_child.write.get();
  child_options.stderr_fd = pipes.err_child.write.get();
  child_options.inherit_env = false;
  child_options.env = ChildEnvironment(config);
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> child = os::ChildProcess::Start(child_options);
  // The child has its copies: ours would keep its stdout open after it exits.
  pipes.to_child.read.Reset();
  pipes.from_child.write.Reset();
  pipes.err_child.write.Reset();
  ASSIGN_OR_RETURN(child_, std::move(child));
  last_message_ns_.store(NowNs());
  return os::StartThread(reader_, "a multilang child's reader", [this] { ReadLoop(); });
}

absl::Status ShellProcess::Handshake(const api::Config& config,
                                     const api::TopologyContext& context,
                                     const std::string& what) {
  ASSIGN_OR_RETURN(pid_dir_, MakePidDir());
  nlohmann::json conf = nlohmann::json::object();
  // The worker hands components a config without credentials already; this
  // is the last stop before a process of the topology's own.
  for (const auto& [key, value] : config.entries()) {
    if (!core::IsSecretConfigKey(key)) conf[key] = ValueToJson(value);
  }
  Send(nlohmann::json{
      {"conf", std::move(conf)}, {"pidDir", pid_dir_}, {"context", HandshakeContext(context)}});
  if (absl::Status s = Flush(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("multilang handshake with '", what, "': ",
                                               api::Sv(api::StdSv(s.message()))));
  }
  std::optional<ShellMessage> reply = PopMessage(SteadyClock::now() + options_.timeout);
  auto fail = [&](std::string_view why) {
    return absl::UnavailableError(absl::StrCat("multilang handshake with '", what,
                                               "' failed: ", api::Sv(why), " (child ",
                                               DescribeExit(), ")"));
  };
  if (!reply) return fail(absl::StrCat("no reply within ", options_.timeout.count(), " ms"));
  if (!reply->ok()) return fail(reply->error);
  const nlohmann::json* pid = nullptr;
  if (auto it = reply->json.find("pid"); it != reply->json.end()) pid = &*it;
  if (pid == nullptr || !pid->is_number_integer()) {
    return fail(absl::StrCat("reply has no integer pid: ",
                             reply->json.dump(-1, ' ', false,
                                              nlohmann::json::error_handler_t::replace)
                                 .substr(0, 200)));
  }
  reported_pid_ = pid->get<int64_t>();
  return absl::OkStatus();
}

ShellProcess::~ShellProcess() {
  stop_.store(true);
  if (child_ != nullptr) child_->Kill();
  stdin_fd_.Reset();
  if (reader_.joinable()) reader_.join();
  stdout_fd_.Reset();
  stderr_fd_.Reset();
  if (!pid_dir_.empty()) {
    // The child owns what is in it: removed without following its links
    // (the temporary directory it sits in may itself be a link).
    const std::filesystem::path dir(pid_dir_);
    const os::UniqueFd parent(
        ::open(dir.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    // Best effort: a destructor has nobody to tell, and a leftover directory
    // under TMPDIR harms nothing.
    if (parent.valid()) (void)os::RemoveTreeAt(parent.get(), dir.filename().string());
  }
}

void ShellProcess::Kill() {
  if (child_ != nullptr) child_->Kill();
}

std::string ShellProcess::DescribeExit() {
  if (child_ == nullptr) return "not started";
  // A child that just closed its stdout may not have finished exiting yet.
  std::optional<int> status = child_->WaitFor(std::chrono::milliseconds(200));
  return status ? os::DescribeWaitStatus(*status) : "running";
}

absl::Status ShellProcess::Flush() {
  size_t done = 0;
  const SteadyClock::time_point deadline = SteadyClock::now() + options_.timeout;
  while (done < out_.size()) {
    const ssize_t n = ::write(stdin_fd_.get(), out_.data() + done, out_.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) {
      out_.clear();
      return absl::UnavailableError(
          absl::StrCat("writing to the child's stdin: ", std::strerror(errno)));
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
    if (left <= 0) {
      out_.clear();
      return absl::DeadlineExceededError(absl::StrCat("the child has not read its stdin for ",
                                                      options_.timeout.count(), " ms"));
    }
    pollfd p{stdin_fd_.get(), POLLOUT, 0};
    ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 100)));
  }
  out_.clear();
  return absl::OkStatus();
}

void ShellProcess::Push(ShellMessage message) {
  {
    // Unlocking wakes a waiter whose condition now holds.
    absl::MutexLock lock(&mu_);
    if (broken_) return;
    if (!message.ok()) broken_ = true;
    queue_.push_back(std::move(message));
  }
  last_message_ns_.store(NowNs(), std::memory_order_relaxed);
  if (options_.on_message) options_.on_message();
}

void ShellProcess::ReadLoop() {
  std::string message;  // lines of the current message
  std::string line;     // the current, unfinished line
  char buf[64 * 1024];
  auto too_big = [&] { return message.size() + line.size() > options_.max_message_bytes; };
  bool stderr_open = true;
  while (!stop_.load()) {
    pollfd p[2] = {{stdout_fd_.get(), POLLIN, 0},
                   {stderr_open ? stderr_fd_.get() : -1, POLLIN, 0}};
    const int ready = ::poll(p, 2, 100);
    if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
    if (p[1].revents != 0) stderr_open = ReadStderr(/*at_end=*/false);
    if (p[0].revents == 0) continue;
    const ssize_t n = ::read(stdout_fd_.get(), buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      // What the child wrote to stderr last usually says why it stopped.
      if (stderr_open) ReadStderr(/*at_end=*/true);
      Push({{}, n == 0 ? "the child closed its stdout"
                       : absl::StrCat("reading the child's stdout: ", std::strerror(errno))});
      return;
    }
    std::string_view chunk(buf, static_cast<size_t>(n));
    while (!chunk.empty()) {
      const size_t nl = chunk.find('\n');
      if (nl == std::string_view::npos) {
        line.append(chunk);
        chunk = {};
      } else {
        line.append(chunk.substr(0, nl));
        chunk.remove_prefix(nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line == "end") {
          ShellMessage parsed = ParseMessage(message);
          const bool ok = parsed.ok();
          Push(std::move(parsed));
          if (!ok) return;  // the child's stream cannot be trusted past a bad message
          message.clear();
        } else {
          message.append(line);
          message += '\n';
        }
        line.clear();
      }
      if (too_big()) {
        Push({{}, absl::StrCat("a message from the child exceeds ", options_.max_message_bytes,
                               " bytes")});
        return;
      }
    }
  }
}

bool ShellProcess::ReadStderr(bool at_end) {
  // A line longer than this is logged in pieces: the log stays bounded.
  constexpr size_t kMaxStderrLine = 4096;
  char buf[8192];
  bool open = true;
  // Bounded: at most this much per call, so stdout is never starved.
  for (int round = 0; round < 16; ++round) {
    const ssize_t n = ::read(stderr_fd_.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = n < 0 && errno == EAGAIN;
      break;
    }
    for (char c : std::string_view(buf, static_cast<size_t>(n))) {
      if (c != '\n') stderr_line_ += c;
      if (c == '\n' || stderr_line_.size() >= kMaxStderrLine) {
        spdlog::info("{} stderr: {}", options_.label, stderr_line_);
        stderr_line_.clear();
      }
    }
  }
  if ((at_end || !open) && !stderr_line_.empty()) {
    spdlog::info("{} stderr: {}", options_.label, stderr_line_);
    stderr_line_.clear();
  }
  return open;
}

void ShellProcess::TakeMessages(std::vector<ShellMessage>& out) {
  absl::MutexLock lock(&mu_);
  while (!queue_.empty()) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
}

bool ShellProcess::AwaitMessage(SteadyClock::time_point deadline) {
  return mu_.AwaitWithTimeout(absl::Condition(this, &ShellProcess::HasMessage),
                              absl::FromChrono(deadline - SteadyClock::now()));
}

bool ShellProcess::WaitForMessage(SteadyClock::time_point deadline) {
  absl::MutexLock lock(&mu_);
  return AwaitMessage(deadline);
}

std::optional<ShellMessage> ShellProcess::PopMessage(SteadyClock::time_point deadline) {
  absl::MutexLock lock(&mu_);
  if (!AwaitMessage(deadline)) return std::nullopt;
  ShellMessage m = std::move(queue_.front());
  queue_.pop_front();
  return m;
}

SteadyClock::time_point ShellProcess::last_message_time() const {
  return SteadyClock::time_point(std::chrono::nanoseconds(last_message_ns_.load()));
}

}  // namespace tempest::multilang
