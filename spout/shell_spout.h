#ifndef TEMPEST_SPOUT_SHELL_SPOUT_H_
#define TEMPEST_SPOUT_SHELL_SPOUT_H_

#include <string_view>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/spout.h"
#include "common/multilang/child_restarts.h"
#include "common/multilang/shell_component.h"
#include "common/multilang/shell_process.h"

namespace tempest::spout {

inline constexpr char kFluxShellSpoutClass[] =
    "org.apache.storm.flux.wrappers.spouts.FluxShellSpout";

// A spout written in another language, spoken to through Storm's multilang
// protocol (`tempest.ShellSpout`, `org.apache.storm.flux.wrappers.spouts.FluxShellSpout`).
// Flux arguments as for ShellBolt: `constructorArgs: [[command, args...],
// [output fields...]]`, or properties `command` and `fields`.
//
// Synchronous, as in Storm: `next`, `ack`, `fail`, `activate` and
// `deactivate` are each answered by the child with emits and logs ending in
// `sync`. Commands are written in order and their syncs counted, so Ack and
// Fail never wait (they read what is already there); NextTuple asks for more
// only once every earlier command was answered, and waits at most a few
// milliseconds for the answer before returning (the rest is read on the next
// call). A deactivated spout keeps talking to its child: Deactivate answers
// what the child sent before (e.g. an emit waiting for its task ids) and
// waits up to a second for the child's sync; acks and fails still reach the
// child; Close waits up to a second for the child to answer them.
//
// A child that dies, breaks the protocol, or leaves a command unanswered for
// topology.subprocess.timeout.secs is reported once (ReportError plus a log
// line) and restarted. Its message ids die with it: acks and fails of ids a
// running child did not emit are not forwarded. Replaying those tuples is up
// to the child's source, as in Storm, where the whole worker would restart.
//
// Lives on its executor thread; the child runs in tempest.resources.dir.
class ShellSpout final : public api::Spout {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"command", "fields"};
  static absl::StatusOr<std::unique_ptr<ShellSpout>> Create(const api::ComponentArgs& args);
  explicit ShellSpout(multilang::ShellComponentSpec spec);
  ~ShellSpout() override;

  absl::Status Open(const api::Config& config, const api::TopologyContext& context,
                    api::SpoutOutputCollector& collector) override;
  void NextTuple() override;
  void Ack(const api::MessageId& message_id) override;
  void Fail(const api::MessageId& message_id) override;
  void Activate() override;
  void Deactivate() override;
  void Close() override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  int64_t restarts() const { return restarts_.restarts(); }

 private:
  using SteadyClock = std::chrono::steady_clock;

  absl::Status StartChild();
  void SendCommand(std::string_view command, const api::MessageId* id);
  // Applies queued messages; false when the child failed meanwhile.
  bool Drain();
  // Drains until every command sent was answered (sync) or `deadline`.
  void AwaitSyncs(SteadyClock::time_point deadline);
  void HandleMessage(const nlohmann::json& message);
  void ChildFailed(std::string_view reason);
  void ReportChildError(std::string_view what);

  const multilang::ShellComponentSpec spec_;
  std::optional<api::TopologyContext> context_;
  api::SpoutOutputCollector* collector_ = nullptr;
  std::string label_;
  std::chrono::milliseconds timeout_{30000};

  std::unique_ptr<multilang::ShellProcess> shell_;
  int64_t awaiting_syncs_ = 0;
  SteadyClock::time_point waiting_since_;
  bool active_ = false;
  absl::flat_hash_set<api::MessageId> in_flight_;
  multilang::ChildRestarts restarts_;

  std::vector<multilang::ShellMessage> inbox_;
  std::vector<api::TaskId> task_ids_;
  multilang::ParsedEmit emit_;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_SHELL_SPOUT_H_
