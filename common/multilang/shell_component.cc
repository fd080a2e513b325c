#include "common/multilang/shell_component.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"
#include "common/multilang/json_codec.h"
#include "spdlog/spdlog.h"

namespace tempest::multilang {
namespace {

absl::StatusOr<std::vector<std::string>> StringList(const api::ComponentArgs& args,
                                                    std::string_view what,
                                                    const api::Value& value) {
  std::vector<std::string> out;
  const api::ValueList* list = value.TryList();
  auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(args.class_name, " ", api::Sv(what),
                                                   ": expected a list of strings, got ",
                                                   value.DebugString()));
  };
  if (list == nullptr) {
    // A single string is a one-element list (Storm's varargs constructors).
    if (const std::string* s = value.TryString()) return std::vector<std::string>{*s};
    return bad();
  }
  for (const api::Value& item : *list) {
    absl::StatusOr<std::string> s = item.CoerceString();
    if (!s.ok()) return bad();
    out.push_back(*std::move(s));
  }
  return out;
}

}  // namespace

absl::StatusOr<ShellComponentSpec> ParseShellComponentArgs(const api::ComponentArgs& args) {
  ShellComponentSpec spec;
  const api::Value* command = args.Property("command");
  const api::Value* fields = args.Property("fields");
  if (args.constructor_args.size() > 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        args.class_name, " takes at most 2 constructorArgs ([command...], [fields...]), got ",
        args.constructor_args.size()));
  }
  if (!args.constructor_args.empty()) {
    if (command != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(args.class_name, ": command given both as constructorArgs and property"));
    }
    command = &args.constructor_args[0];
  }
  if (args.constructor_args.size() == 2) {
    if (fields != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(args.class_name, ": fields given both as constructorArgs and property"));
    }
    fields = &args.constructor_args[1];
  }
  if (command == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        args.class_name, " needs a command: constructorArgs [[\"python3\", \"bolt.py\"], [fields]]"));
  }
  TEMPEST_ASSIGN_OR_RETURN(spec.command, StringList(args, "command", *command));
  if (spec.command.empty() || spec.command[0].empty()) {
    return absl::InvalidArgumentError(absl::StrCat(args.class_name, ": empty command"));
  }
  if (fields != nullptr) {
    TEMPEST_ASSIGN_OR_RETURN(std::vector<std::string> names, StringList(args, "fields", *fields));
    if (!names.empty()) spec.streams[std::string(api::kDefaultStreamName)] = std::move(names);
  }
  for (const api::Value& method : args.config_methods) {
    const api::Value* name = method.Find("name");
    const api::Value* method_args = method.Find("args");
    const std::string* n = name != nullptr ? name->TryString() : nullptr;
    const api::ValueList* a = method_args != nullptr ? method_args->TryList() : nullptr;
    static const api::ValueList kNoArgs;
    if (a == nullptr) a = &kNoArgs;
    if (n != nullptr && *n == "setDefaultStream" && a->size() == 1) {
      TEMPEST_ASSIGN_OR_RETURN(spec.streams[std::string(api::kDefaultStreamName)],
                               StringList(args, "setDefaultStream", (*a)[0]));
    } else if (n != nullptr && *n == "setNamedStream" && a->size() == 2 && (*a)[0].is_string()) {
      TEMPEST_ASSIGN_OR_RETURN(spec.streams[(*a)[0].AsString()],
                               StringList(args, "setNamedStream", (*a)[1]));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          args.class_name, ": unsupported configMethod ", method.DebugString(),
          " (supported: setDefaultStream([fields]), setNamedStream(name, [fields]))"));
    }
  }
  return spec;
}

void DeclareShellStreams(const ShellComponentSpec& spec, api::OutputFieldsDeclarer& declarer) {
  for (const auto& [stream, fields] : spec.streams) {
    declarer.DeclareStream(stream, api::Fields(fields));
  }
}

absl::Status ParseEmit(const nlohmann::json& message, const api::TopologyContext& context,
                       ParsedEmit& out) {
  out.values.clear();
  out.direct_task.reset();
  out.anchors = nullptr;
  out.id = nullptr;
  auto task_it = message.find("task");
  const bool direct = task_it != message.end() && !task_it->is_null();
  out.need_task_ids = !direct;
  if (auto it = message.find("need_task_ids"); it != message.end() && it->is_boolean()) {
    out.need_task_ids = !direct && it->get<bool>();
  }
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("emit ", api::Sv(why), ": ", Excerpt(message)));
  };
  std::string stream(api::kDefaultStreamName);
  if (auto it = message.find("stream"); it != message.end() && !it->is_null()) {
    if (!it->is_string()) return bad("with a non-string stream");
    stream = it->get<std::string>();
  }
  out.stream = api::StreamId(std::move(stream));
  if (direct) {
    if (!task_it->is_number_integer() || task_it->get<int64_t>() < 0 ||
        task_it->get<int64_t>() > INT32_MAX) {
      return bad("with a task that is not a task id");
    }
    out.direct_task = api::TaskId(static_cast<int32_t>(task_it->get<int64_t>()));
  }
  auto tuple_it = message.find("tuple");
  if (tuple_it == message.end() || !tuple_it->is_array()) return bad("without a tuple array");
  const api::Fields* fields = context.ThisOutputFields(out.stream);
  if (fields == nullptr) {
    return bad(absl::StrCat("on undeclared stream '", out.stream.value(), "'"));
  }
  if (fields->size() != static_cast<int>(tuple_it->size())) {
    return bad(absl::StrCat("with ", tuple_it->size(), " value(s) on stream '", out.stream.value(),
                            "', which declares ", fields->size()));
  }
  out.values.reserve(tuple_it->size());
  for (const nlohmann::json& item : *tuple_it) {
    absl::StatusOr<api::Value> v = JsonToValue(item);
    if (!v.ok()) return bad(api::StdSv(v.status().message()));
    out.values.push_back(*std::move(v));
  }
  if (auto it = message.find("anchors"); it != message.end() && it->is_array()) {
    out.anchors = &*it;
  }
  if (auto it = message.find("id"); it != message.end() && !it->is_null()) out.id = &*it;
  return absl::OkStatus();
}

void AppendTaskIds(const std::vector<api::TaskId>& task_ids, std::string& out) {
  out += '[';
  for (size_t i = 0; i < task_ids.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(task_ids[i].value());
  }
  out += "]\nend\n";
}

std::string Excerpt(const nlohmann::json& json, size_t max_bytes) {
  std::string text = json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > max_bytes) {
    text.resize(max_bytes);
    text += "...";
  }
  return absl::CHexEscape(text);
}

void LogChildMessage(std::string_view label, const nlohmann::json& message) {
  std::string text;
  if (auto it = message.find("msg"); it != message.end()) {
    text = it->is_string() ? it->get<std::string>() : Excerpt(*it, 4096);
  }
  int64_t level = 2;
  if (auto it = message.find("level"); it != message.end() && it->is_number_integer()) {
    level = it->get<int64_t>();
  }
  switch (level) {
    case 0: spdlog::trace("{}: {}", label, text); break;
    case 1: spdlog::debug("{}: {}", label, text); break;
    case 3: spdlog::warn("{}: {}", label, text); break;
    case 4: spdlog::error("{}: {}", label, text); break;
    default: spdlog::info("{}: {}", label, text); break;
  }
}

std::string ShellTaskLabel(std::string_view component_class, const api::TopologyContext& context) {
  return absl::StrCat(api::Sv(component_class), " '", context.ThisComponentId().value(),
                      "' task ", context.ThisTaskId().value());
}

absl::StatusOr<std::unique_ptr<ShellProcess>> StartShellChild(const ShellComponentSpec& spec,
                                                              const api::TopologyContext& context,
                                                              std::chrono::milliseconds timeout,
                                                              const std::string& label,
                                                              std::function<void()> on_message) {
  TEMPEST_ASSIGN_OR_RETURN(std::unique_ptr<ShellProcess> shell,
                           ShellProcess::StartForComponent(spec.command, context, timeout, label,
                                                           std::move(on_message)));
  spdlog::info("{}: started '{}' (pid {})", label, absl::StrJoin(spec.command, " "),
               shell->reported_pid());
  return shell;
}

absl::Status ChildFailure(std::string_view label, const ShellComponentSpec& spec,
                          ShellProcess* shell, std::string_view reason,
                          std::string_view consequence) {
  const std::string exit = shell != nullptr ? shell->DescribeExit() : "gone";
  const std::string text =
      absl::StrCat(api::Sv(label), ": multilang child '", absl::StrJoin(spec.command, " "),
                   "' failed: ", api::Sv(reason), " (child ", exit, "); ", api::Sv(consequence));
  spdlog::error("{}", text);
  return absl::UnavailableError(text);
}

absl::Status ChildWarning(ChildRestarts& restarts, std::string_view label, std::string_view what) {
  uint64_t held = 0;
  if (!restarts.ShouldReportWarning(&held)) return absl::OkStatus();
  std::string text = absl::StrCat(api::Sv(label), ": ", api::Sv(what));
  if (held > 0) absl::StrAppend(&text, " (", held, " more warnings held back)");
  spdlog::warn("{}", text);
  return absl::InvalidArgumentError(text);
}

std::optional<absl::Status> RestartWhenDue(ChildRestarts& restarts, std::string_view label,
                                           const std::function<absl::Status()>& start) {
  if (!restarts.RestartDue(std::chrono::steady_clock::now())) return std::nullopt;
  absl::Status started = start();
  if (!started.ok()) {
    restarts.StartFailed(std::chrono::steady_clock::now());
    spdlog::error("{}: restart failed, retrying in {} ms: {}", label, restarts.backoff().count(),
                  started.ToString());
  }
  return started;
}

}  // namespace tempest::multilang
