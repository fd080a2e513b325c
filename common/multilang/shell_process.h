#ifndef TEMPEST_COMMON_MULTILANG_SHELL_PROCESS_H_
#define TEMPEST_COMMON_MULTILANG_SHELL_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/api/topology_context.h"
#include "absl/synchronization/mutex.h"
#include "common/os/child_process.h"
#include "common/os/unique_fd.h"
#include "nlohmann/json.hpp"

namespace tempest::multilang {

// Topology config key bounding how long a child may stay silent (and how
// long a write to its stdin or the handshake may take), as in Storm.
inline constexpr std::string_view kSubprocessTimeoutSecs = "topology.subprocess.timeout.secs";
inline constexpr int64_t kDefaultSubprocessTimeoutSecs = 30;
// Where `tempest local` and workers put the topology's resources; children
// run there.
inline constexpr std::string_view kResourcesDirKey = api::kTempestResourcesDir;
// Storm's map of environment variables a topology's children get (on top of
// the allowlist, os::AllowlistedEnvironment).
inline constexpr std::string_view kTopologyEnvironmentKey = "topology.environment";

struct ShellOptions {
  std::vector<std::string> command;  // argv; argv[0] looked up on PATH
  std::string working_dir;           // empty: the current directory
  // Handshake, stdin writes and silence are each bounded by this.
  std::chrono::milliseconds timeout{kDefaultSubprocessTimeoutSecs * 1000};
  // A message (all lines before its "end") larger than this breaks the
  // stream instead of growing without bound.
  size_t max_message_bytes = 16u << 20;
  // Called by the reader thread after it queued each message (or the error
  // that ends the stream), e.g. to wake the owner's executor.
  std::function<void()> on_message;
  // Names the child in the log lines that carry its stderr (empty: the
  // command).
  std::string label;
};

// One message from the child: a JSON object, or (error non-empty) the
// reason the stream from the child is broken (malformed JSON, an oversized
// message, end of file). Nothing follows an error.
struct ShellMessage {
  nlohmann::json json;
  std::string error;
  bool ok() const { return error.empty(); }
};

// One multilang child process and both directions of Storm's protocol:
// JSON messages, each followed by a line `end`, over the child's stdin and
// stdout. The child's stderr is read too and logged line by line under the
// child's label (the log formatter escapes what it wrote), never passed
// through raw: a child must not be able to forge lines of the worker's log.
//
// Threads: the owner (an executor thread, which must also be the thread
// that calls Start, since the child's death signal follows it) writes and
// takes messages; a private reader thread parses stdout into a
// mutex-protected queue and stamps the time of the last message. The
// destructor kills the child's process group and joins the reader, both
// bounded.
class ShellProcess {
 public:
  // Starts `options.command` and performs the handshake: sends conf,
  // context and a fresh pidDir, and waits (bounded by options.timeout) for
  // the reply carrying the child's pid.
  static absl::StatusOr<std::unique_ptr<ShellProcess>> Start(const ShellOptions& options,
                                                             const api::Config& config,
                                                             const api::TopologyContext& context);
  // Starts a ShellBolt's or ShellSpout's child: `command` in the component's
  // tempest.resources.dir, bounded by `timeout`; an error names `label`.
  static absl::StatusOr<std::unique_ptr<ShellProcess>> StartForComponent(
      const std::vector<std::string>& command, const api::TopologyContext& context,
      std::chrono::milliseconds timeout, std::string_view label,
      std::function<void()> on_message = {});
  ShellProcess(const ShellProcess&) = delete;
  ShellProcess& operator=(const ShellProcess&) = delete;
  ~ShellProcess();

  // The pid the child reported in the handshake.
  int64_t reported_pid() const { return reported_pid_; }
  pid_t pid() const { return child_->pid(); }

  // Output is staged, then written in one go by Flush. Append one JSON
  // document to the returned buffer, then call EndMessage.
  std::string& out() { return out_; }
  void EndMessage() { out_ += "\nend\n"; }
  void Send(const nlohmann::json& message) {
    out_ += message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    EndMessage();
  }
  size_t staged_bytes() const { return out_.size(); }
  // Writes everything staged. DeadlineExceeded when the child does not read
  // for options.timeout, Unavailable when it closed its stdin.
  absl::Status Flush();

  // Moves every queued message to `out` (appending); never blocks.
  void TakeMessages(std::vector<ShellMessage>& out);
  // Waits until a message is queued or `deadline` passes.
  bool WaitForMessage(std::chrono::steady_clock::time_point deadline);
  // When the child last completed a message (or was started).
  std::chrono::steady_clock::time_point last_message_time() const;

  // "exited 1" / "killed by signal 9" once the child is gone (waiting up to
  // 200 ms for it to finish exiting), else "running".
  std::string DescribeExit();
  // SIGKILL the process group (the reader then sees end of file).
  void Kill();

 private:
  ShellProcess() = default;
  // Starts the child with pipes for its stdin, stdout and stderr, and the
  // reader thread.
  absl::Status Spawn(const api::Config& config);
  // Sends conf, context and a fresh pidDir; waits for the reply's pid.
  // Errors name the command, `what`.
  absl::Status Handshake(const api::Config& config, const api::TopologyContext& context,
                         const std::string& what);
  void ReadLoop();
  // Logs the complete lines readable now on the child's stderr (all of
  // what is left with `at_end`). False once the pipe is closed.
  bool ReadStderr(bool at_end);
  void Push(ShellMessage message);
  std::optional<ShellMessage> PopMessage(std::chrono::steady_clock::time_point deadline);
  // Waits (with mu_ held) until a message is queued or `deadline` passes;
  // whether one is.
  bool AwaitMessage(std::chrono::steady_clock::time_point deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool HasMessage() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); }

  ShellOptions options_;
  std::unique_ptr<os::ChildProcess> child_;
  os::UniqueFd stdin_fd_;   // our write end, non-blocking
  os::UniqueFd stdout_fd_;  // our read end, read by the reader thread
  os::UniqueFd stderr_fd_;  // our read end of the child's stderr, also the reader's
  std::string stderr_line_;  // the reader's unfinished stderr line
  std::string pid_dir_;
  int64_t reported_pid_ = 0;
  std::string out_;

  std::atomic<bool> stop_{false};
  std::atomic<int64_t> last_message_ns_{0};
  std::thread reader_;
  absl::Mutex mu_;
  std::deque<ShellMessage> queue_ ABSL_GUARDED_BY(mu_);
  bool broken_ ABSL_GUARDED_BY(mu_) = false;  // an error was queued
};

// The handshake's context object: this task and component, every task's
// component, this component's declared output fields per stream, and its
// subscriptions under Storm's keys (stream->target->grouping,
// source->stream->grouping, source->stream->fields).
nlohmann::json HandshakeContext(const api::TopologyContext& context);

// Reads topology.subprocess.timeout.secs (default 30; fractions allowed, at
// least 0.2 s).
std::chrono::milliseconds SubprocessTimeout(const api::Config& config);

// A message id ("id" of ack/fail, entries of "anchors") as the bolt's numeric
// id: accepts a decimal string or a non-negative integer; nullopt otherwise.
std::optional<uint64_t> ParseTupleId(const nlohmann::json& id);

}  // namespace tempest::multilang

#endif  // TEMPEST_COMMON_MULTILANG_SHELL_PROCESS_H_
