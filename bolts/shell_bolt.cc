#include "bolts/shell_bolt.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "common/multilang/json_codec.h"
#include "spdlog/spdlog.h"

namespace tempest::bolts {
namespace {

constexpr std::chrono::milliseconds kPollInterval(10);
constexpr std::chrono::milliseconds kHeartbeatInterval(1000);
// Staged input beyond this is written at once instead of at the end of the
// batch, bounding memory when a batch carries large tuples.
constexpr size_t kFlushThresholdBytes = 256 * 1024;

}  // namespace

absl::StatusOr<std::unique_ptr<ShellBolt>> ShellBolt::Create(const api::ComponentArgs& args) {
  return multilang::CreateShellComponent<ShellBolt>(args);
}

ShellBolt::ShellBolt(multilang::ShellComponentSpec spec) : spec_(std::move(spec)) {}

ShellBolt::~ShellBolt() = default;

void ShellBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  multilang::DeclareShellStreams(spec_, declarer);
}

std::optional<std::chrono::milliseconds> ShellBolt::PollInterval() const {
  return kPollInterval;
}

absl::Status ShellBolt::Prepare(const api::Config& config, const api::TopologyContext& context,
                                api::OutputCollector& collector) {
  config_ = config;
  context_.emplace(context);
  collector_ = &collector;
  label_ = multilang::ShellTaskLabel("ShellBolt", context);
  timeout_ = multilang::SubprocessTimeout(context.config());
  return StartChild();
}

absl::Status ShellBolt::StartChild() {
  TEMPEST_ASSIGN_OR_RETURN(shell_, multilang::StartShellChild(spec_, *context_, timeout_, label_,
                                                              waker_));
  last_heartbeat_sent_ = SteadyClock::now();
  restarts_.Started(last_heartbeat_sent_);
  return absl::OkStatus();
}

void ShellBolt::Cleanup() {
  // Unfinished inputs time out and replay; the child is killed with its group.
  shell_.reset();
}

void ShellBolt::StageTuple(std::string_view id, const api::Tuple& input) {
  std::string& out = shell_->out();
  out += "{\"id\":\"";
  out.append(id);
  out += "\",\"comp\":";
  multilang::AppendJsonString(input.source_component().value(), out);
  out += ",\"stream\":";
  multilang::AppendJsonString(input.source_stream().value(), out);
  out += ",\"task\":";
  out += std::to_string(input.source_task().value());
  out += ",\"tuple\":";
  multilang::AppendJsonArray(input.values(), out);
  out += '}';
  shell_->EndMessage();
}

void ShellBolt::StageHeartbeat() {
  shell_->out() += R"({"id":"0","comp":null,"stream":"__heartbeat","task":-1,"tuple":[]})";
  shell_->EndMessage();
  last_heartbeat_sent_ = SteadyClock::now();
}

bool ShellBolt::FlushToChild() {
  if (shell_->staged_bytes() == 0) return true;
  absl::Status written = shell_->Flush();
  if (written.ok()) return true;
  ChildFailed(api::StdSv(written.message()));
  return false;
}

void ShellBolt::Execute(const api::Tuple& input) {
  if (shell_ != nullptr) {
    SendToChild(input);
    return;
  }
  // No child right now (a restart is pending): the next one gets it.
  if (held_.size() < kMaxHeldInputs) {
    held_.push_back(input);
    return;
  }
  ++overflow_failures_;
  ReportChildError(absl::StrCat("failing an input: ", kMaxHeldInputs,
                                " inputs already wait for the child's restart"));
  collector_->Fail(input);
}

void ShellBolt::SendToChild(const api::Tuple& input) {
  const uint64_t id = next_id_++;
  in_flight_.emplace(id, input);
  char id_text[24];
  const int n = std::snprintf(id_text, sizeof(id_text), "%llu", static_cast<unsigned long long>(id));
  StageTuple(std::string_view(id_text, static_cast<size_t>(n)), input);
  if (shell_->staged_bytes() >= kFlushThresholdBytes) FlushToChild();
}

bool ShellBolt::Poll() {
  const SteadyClock::time_point now = SteadyClock::now();
  if (shell_ == nullptr) return RestartChild();
  if (!FlushToChild()) return true;
  bool progress = false;
  inbox_.clear();
  shell_->TakeMessages(inbox_);
  for (const multilang::ShellMessage& message : inbox_) {
    if (!message.ok()) {
      ChildFailed(message.error);
      return true;
    }
    progress |= HandleMessage(message.json);
    if (shell_ == nullptr) return true;  // the message broke the protocol
  }
  inbox_.clear();
  if (now - last_heartbeat_sent_ >= kHeartbeatInterval) StageHeartbeat();
  if (!FlushToChild()) return true;
  const auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(
      SteadyClock::now() - shell_->last_message_time());
  if (silent > timeout_) {
    ChildFailed(absl::StrCat("subprocess heartbeat timeout: no message for ", silent.count(),
                             " ms (topology.subprocess.timeout.secs allows ", timeout_.count(),
                             " ms)"));
    return true;
  }
  return progress;
}

bool ShellBolt::RestartChild() {
  std::optional<absl::Status> started =
      multilang::RestartWhenDue(restarts_, label_, [this] { return StartChild(); });
  if (!started) return false;
  if (!started->ok()) {
    collector_->ReportError(*started);
    return false;
  }
  if (!held_.empty()) {
    spdlog::info("{}: handing {} held input(s) to the new child", label_, held_.size());
  }
  while (!held_.empty() && shell_ != nullptr) {
    SendToChild(held_.front());
    held_.pop_front();
  }
  if (shell_ != nullptr) FlushToChild();
  return true;
}

void ShellBolt::ChildFailed(std::string_view reason) {
  collector_->ReportError(multilang::ChildFailure(
      label_, spec_, shell_.get(), reason,
      absl::StrCat("failing ", in_flight_.size(), " in-flight tuple(s) and restarting it")));
  shell_.reset();  // kills the process group, joins the reader
  for (auto& [id, tuple] : in_flight_) collector_->Fail(tuple);
  in_flight_.clear();
  restarts_.Failed(SteadyClock::now());
}

void ShellBolt::ReportChildError(std::string_view what) {
  absl::Status warning = multilang::ChildWarning(restarts_, label_, what);
  if (!warning.ok()) collector_->ReportError(warning);
}

bool ShellBolt::HandleMessage(const nlohmann::json& message) {
  if (!message.is_object()) {
    ChildFailed(absl::StrCat("expected a JSON object, got ", multilang::Excerpt(message)));
    return true;
  }
  auto command_it = message.find("command");
  if (command_it == message.end() || !command_it->is_string()) {
    ChildFailed(absl::StrCat("message without a command: ", multilang::Excerpt(message)));
    return true;
  }
  const std::string& command = command_it->get_ref<const std::string&>();
  if (command == "emit") return HandleEmit(message);
  if (command == "ack" || command == "fail") {
    auto id_it = message.find("id");
    std::optional<uint64_t> id =
        id_it != message.end() ? multilang::ParseTupleId(*id_it) : std::nullopt;
    auto tuple_it = id ? in_flight_.find(*id) : in_flight_.end();
    if (tuple_it == in_flight_.end()) {
      ReportChildError(absl::StrCat(command, " of an unknown tuple id: ",
                                    multilang::Excerpt(message)));
      return false;
    }
    restarts_.Progressed();
    if (command == "ack") {
      collector_->Ack(tuple_it->second);
    } else {
      collector_->Fail(tuple_it->second);
    }
    in_flight_.erase(tuple_it);
    return true;
  }
  if (command == "sync") return false;  // a heartbeat answer; any message refreshes it
  if (command == "log") {
    multilang::LogChildMessage(label_, message);
    return false;
  }
  if (command == "error") {
    auto msg = message.find("msg");
    std::string text = msg != message.end() && msg->is_string() ? msg->get<std::string>()
                                                                 : multilang::Excerpt(message);
    collector_->ReportError(absl::UnknownError(absl::StrCat(label_, ": ", text)));
    return false;
  }
  if (command == "metrics") return false;  // accepted; custom child metrics are not collected
  ReportChildError(absl::StrCat("unknown command: ", multilang::Excerpt(message)));
  return false;
}

bool ShellBolt::HandleEmit(const nlohmann::json& message) {
  absl::Status parsed = multilang::ParseEmit(message, *context_, emit_);
  task_ids_.clear();
  if (!parsed.ok()) {
    ReportChildError(api::StdSv(parsed.message()));
  } else {
    anchors_.clear();
    if (emit_.anchors != nullptr) {
      for (const nlohmann::json& anchor : *emit_.anchors) {
        std::optional<uint64_t> id = multilang::ParseTupleId(anchor);
        auto found = id ? in_flight_.find(*id) : in_flight_.end();
        if (found == in_flight_.end()) {
          ReportChildError(absl::StrCat("emit anchored to an unknown tuple id ",
                                        multilang::Excerpt(anchor)));
          continue;
        }
        anchors_.push_back(found->second);
      }
    }
    if (emit_.direct_task) {
      collector_->EmitDirect(*emit_.direct_task, emit_.stream, anchors_, std::move(emit_.values));
    } else {
      collector_->Emit(emit_.stream, anchors_, std::move(emit_.values),
                       emit_.need_task_ids ? &task_ids_ : nullptr);
    }
  }
  // The child waits for the task ids even when its emit was rejected, so the
  // reply goes out in every case (empty when nothing was emitted).
  if (emit_.need_task_ids) multilang::AppendTaskIds(task_ids_, shell_->out());
  return parsed.ok();
}

}  // namespace tempest::bolts
