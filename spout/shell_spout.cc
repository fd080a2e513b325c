#include "spout/shell_spout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "common/multilang/json_codec.h"
#include "spdlog/spdlog.h"

namespace tempest::spout {
namespace {

// How long one NextTuple waits for the child's answer before returning.
constexpr std::chrono::milliseconds kNextTupleWait(5);
// How long Deactivate and Close wait for the child to answer what was sent.
constexpr std::chrono::milliseconds kSettleWait(1000);

}  // namespace

absl::StatusOr<std::unique_ptr<ShellSpout>> ShellSpout::Create(const api::ComponentArgs& args) {
  return multilang::CreateShellComponent<ShellSpout>(args);
}

ShellSpout::ShellSpout(multilang::ShellComponentSpec spec) : spec_(std::move(spec)) {}

ShellSpout::~ShellSpout() = default;

void ShellSpout::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  multilang::DeclareShellStreams(spec_, declarer);
}

absl::Status ShellSpout::Open(const api::Config& config, const api::TopologyContext& context,
                              api::SpoutOutputCollector& collector) {
  (void)config;
  context_.emplace(context);
  collector_ = &collector;
  label_ = multilang::ShellTaskLabel("ShellSpout", context);
  timeout_ = multilang::SubprocessTimeout(context.config());
  return StartChild();
}

absl::Status ShellSpout::StartChild() {
  TEMPEST_ASSIGN_OR_RETURN(shell_,
                           multilang::StartShellChild(spec_, *context_, timeout_, label_));
  restarts_.Started(SteadyClock::now());
  awaiting_syncs_ = 0;
  // A restarted child learns that its spout is active, as at start-up.
  if (active_) SendCommand("activate", nullptr);
  return absl::OkStatus();
}

void ShellSpout::Close() {
  // Let the child see the last acks and fails before it is killed.
  AwaitSyncs(SteadyClock::now() + std::min(timeout_, kSettleWait));
  shell_.reset();
}

void ShellSpout::AwaitSyncs(SteadyClock::time_point deadline) {
  if (shell_ == nullptr || !Drain()) return;
  while (shell_ != nullptr && awaiting_syncs_ > 0 && SteadyClock::now() < deadline) {
    if (!shell_->WaitForMessage(deadline)) break;
    if (!Drain()) return;
  }
}

void ShellSpout::SendCommand(std::string_view command, const api::MessageId* id) {
  if (shell_ == nullptr) return;
  std::string& out = shell_->out();
  out += "{\"command\":";
  multilang::AppendJsonString(command, out);
  if (id != nullptr) {
    out += ",\"id\":";
    multilang::AppendJsonValue(*id, out);
  }
  out += '}';
  shell_->EndMessage();
  if (awaiting_syncs_++ == 0) waiting_since_ = SteadyClock::now();
  absl::Status written = shell_->Flush();
  if (!written.ok()) ChildFailed(api::StdSv(written.message()));
}

void ShellSpout::Activate() {
  active_ = true;
  SendCommand("activate", nullptr);
}

void ShellSpout::Deactivate() {
  active_ = false;
  // NextTuple is no longer called: answer what the child sent before (an
  // emit blocked on its task ids) and wait for its answer to deactivate.
  SendCommand("deactivate", nullptr);
  AwaitSyncs(SteadyClock::now() + std::min(timeout_, kSettleWait));
}

void ShellSpout::Ack(const api::MessageId& message_id) {
  // Ids of an earlier child mean nothing to this one.
  if (shell_ == nullptr || in_flight_.erase(message_id) == 0) return;
  SendCommand("ack", &message_id);
  // Read without waiting: while deactivated, nothing else reads the child.
  if (shell_ != nullptr) Drain();
}

void ShellSpout::Fail(const api::MessageId& message_id) {
  if (shell_ == nullptr || in_flight_.erase(message_id) == 0) return;
  SendCommand("fail", &message_id);
  if (shell_ != nullptr) Drain();
}

void ShellSpout::NextTuple() {
  if (shell_ == nullptr) {
    std::optional<absl::Status> started =
        multilang::RestartWhenDue(restarts_, label_, [this] { return StartChild(); });
    if (started && !started->ok()) collector_->ReportError(*started);
    return;
  }
  if (!Drain()) return;
  if (awaiting_syncs_ == 0) SendCommand("next", nullptr);
  AwaitSyncs(SteadyClock::now() + kNextTupleWait);
  if (shell_ == nullptr || awaiting_syncs_ == 0) return;
  const SteadyClock::time_point heard = std::max(waiting_since_, shell_->last_message_time());
  const auto silent =
      std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - heard);
  if (silent > timeout_) {
    ChildFailed(absl::StrCat("subprocess heartbeat timeout: no sync for ", silent.count(),
                             " ms (topology.subprocess.timeout.secs allows ", timeout_.count(),
                             " ms)"));
  }
}

bool ShellSpout::Drain() {
  inbox_.clear();
  shell_->TakeMessages(inbox_);
  for (const multilang::ShellMessage& message : inbox_) {
    if (!message.ok()) {
      ChildFailed(message.error);
      return false;
    }
    HandleMessage(message.json);
    if (shell_ == nullptr) return false;
  }
  inbox_.clear();
  if (shell_->staged_bytes() > 0) {
    absl::Status written = shell_->Flush();
    if (!written.ok()) {
      ChildFailed(api::StdSv(written.message()));
      return false;
    }
  }
  return true;
}

void ShellSpout::ChildFailed(std::string_view reason) {
  collector_->ReportError(multilang::ChildFailure(
      label_, spec_, shell_.get(), reason,
      absl::StrCat(in_flight_.size(), " of its tuple(s) are still in flight; restarting it")));
  shell_.reset();
  in_flight_.clear();
  awaiting_syncs_ = 0;
  restarts_.Failed(SteadyClock::now());
}

void ShellSpout::ReportChildError(std::string_view what) {
  absl::Status warning = multilang::ChildWarning(restarts_, label_, what);
  if (!warning.ok()) collector_->ReportError(warning);
}

void ShellSpout::HandleMessage(const nlohmann::json& message) {
  if (!message.is_object()) {
    ChildFailed(absl::StrCat("expected a JSON object, got ", multilang::Excerpt(message)));
    return;
  }
  auto command_it = message.find("command");
  if (command_it == message.end() || !command_it->is_string()) {
    ChildFailed(absl::StrCat("message without a command: ", multilang::Excerpt(message)));
    return;
  }
  const std::string& command = command_it->get_ref<const std::string&>();
  if (command == "sync") {
    if (awaiting_syncs_ > 0 && --awaiting_syncs_ > 0) waiting_since_ = SteadyClock::now();
    return;
  }
  if (command == "emit") {
    absl::Status parsed = multilang::ParseEmit(message, *context_, emit_);
    task_ids_.clear();
    if (!parsed.ok()) {
      ReportChildError(api::StdSv(parsed.message()));
    } else {
      api::MessageId id;
      if (emit_.id != nullptr) {
        absl::StatusOr<api::Value> v = multilang::JsonToValue(*emit_.id);
        if (v.ok()) id = *std::move(v);
      }
      if (!id.is_nil()) in_flight_.insert(id);
      if (emit_.direct_task) {
        collector_->EmitDirect(*emit_.direct_task, emit_.stream, std::move(emit_.values),
                               std::move(id));
      } else {
        collector_->Emit(emit_.stream, std::move(emit_.values), std::move(id),
                         emit_.need_task_ids ? &task_ids_ : nullptr);
      }
    }
    if (emit_.need_task_ids) multilang::AppendTaskIds(task_ids_, shell_->out());
    return;
  }
  if (command == "log") {
    multilang::LogChildMessage(label_, message);
    return;
  }
  if (command == "error") {
    auto msg = message.find("msg");
    std::string text = msg != message.end() && msg->is_string() ? msg->get<std::string>()
                                                                 : multilang::Excerpt(message);
    collector_->ReportError(absl::UnknownError(absl::StrCat(label_, ": ", text)));
    return;
  }
  if (command == "metrics") return;  // accepted; custom child metrics are not collected
  ReportChildError(absl::StrCat("unknown command: ", multilang::Excerpt(message)));
}

}  // namespace tempest::spout
