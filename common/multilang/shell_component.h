#ifndef TEMPEST_COMMON_MULTILANG_SHELL_COMPONENT_H_
#define TEMPEST_COMMON_MULTILANG_SHELL_COMPONENT_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/output_fields_declarer.h"
#include "common/api/topology_context.h"
#include "common/core/status_macros.h"
#include "common/multilang/child_restarts.h"
#include "common/multilang/shell_process.h"
#include "nlohmann/json.hpp"

namespace tempest::multilang {

// What a ShellBolt / ShellSpout is built from: the child's command line and
// its declared output streams (stream -> fields).
struct ShellComponentSpec {
  std::vector<std::string> command;
  std::map<std::string, std::vector<std::string>> streams;
};

// Reads Storm's FluxShellBolt / FluxShellSpout shapes:
//   constructorArgs: [[command, args...], [fields...]]   (fields optional)
// or properties `command` and `fields`, plus configMethods
// `setDefaultStream([fields])` and `setNamedStream(name, [fields])`.
// InvalidArgument naming the class for anything else.
absl::StatusOr<ShellComponentSpec> ParseShellComponentArgs(const api::ComponentArgs& args);

void DeclareShellStreams(const ShellComponentSpec& spec, api::OutputFieldsDeclarer& declarer);

// `Component::Create` of ShellBolt / ShellSpout: the component built from
// its parsed arguments.
template <typename Component>
absl::StatusOr<std::unique_ptr<Component>> CreateShellComponent(const api::ComponentArgs& args) {
  TEMPEST_ASSIGN_OR_RETURN(ShellComponentSpec spec, ParseShellComponentArgs(args));
  return std::make_unique<Component>(std::move(spec));
}

// How logs and errors name one shell component task: "ShellBolt 'split' task 3".
std::string ShellTaskLabel(std::string_view component_class, const api::TopologyContext& context);

// Starts the component's child (ShellProcess::StartForComponent) and logs
// "<label>: started '<command>' (pid N)".
absl::StatusOr<std::unique_ptr<ShellProcess>> StartShellChild(const ShellComponentSpec& spec,
                                                              const api::TopologyContext& context,
                                                              std::chrono::milliseconds timeout,
                                                              const std::string& label,
                                                              std::function<void()> on_message = {});

// A child that died or broke the protocol, logged as an error: Unavailable
// "<label>: multilang child '<command>' failed: <reason> (child <exit>);
// <consequence>", for the collector's ReportError. `shell` may be null.
absl::Status ChildFailure(std::string_view label, const ShellComponentSpec& spec,
                          ShellProcess* shell, std::string_view reason,
                          std::string_view consequence);

// A warning about what the child wrote, rate-limited by `restarts`
// (ChildRestarts::ShouldReportWarning): InvalidArgument "<label>: <what>",
// logged, for the collector's ReportError; OK when this one is not reported.
absl::Status ChildWarning(ChildRestarts& restarts, std::string_view label, std::string_view what);

// Once `restarts` says a restart is due, calls `start`; a failure is logged
// ("<label>: restart failed, retrying in N ms"), backs off and is returned
// for the caller to report. nullopt while the restart is not due yet.
std::optional<absl::Status> RestartWhenDue(ChildRestarts& restarts, std::string_view label,
                                           const std::function<absl::Status()>& start);

// Applies a `log` message (`msg`, `level` 0=trace .. 4=error, default info)
// to spdlog, prefixed with `label`.
void LogChildMessage(std::string_view label, const nlohmann::json& message);

// The parts of an `emit` message both shell components share, checked
// against the emitting component's declared streams.
struct ParsedEmit {
  api::StreamId stream;
  api::Values values;
  std::optional<api::TaskId> direct_task;  // "task": an emit to one task
  // Whether the child waits for the target task ids (Storm's default unless
  // the emit is direct or says "need_task_ids": false). Set even when
  // parsing fails, so the child can be answered and stay in step.
  bool need_task_ids = true;
  const nlohmann::json* anchors = nullptr;  // bolts: input ids, or nullptr
  const nlohmann::json* id = nullptr;       // spouts: the message id, or nullptr
};
// InvalidArgument (with an excerpt) for an undeclared stream, a wrong number
// of values, non-list tuples, a non-integer task or values nested too deep.
absl::Status ParseEmit(const nlohmann::json& message, const api::TopologyContext& context,
                       ParsedEmit& out);

// Stages the reply to an emit: the JSON array of task ids, then "end".
void AppendTaskIds(const std::vector<api::TaskId>& task_ids, std::string& out);

// A short, printable excerpt of an untrusted JSON document for error text.
std::string Excerpt(const nlohmann::json& json, size_t max_bytes = 200);

}  // namespace tempest::multilang

#endif  // TEMPEST_COMMON_MULTILANG_SHELL_COMPONENT_H_
