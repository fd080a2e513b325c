#ifndef TEMPEST_BOLTS_SHELL_BOLT_H_
#define TEMPEST_BOLTS_SHELL_BOLT_H_

#include <string_view>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/api/bolt.h"
#include "common/api/component_registry.h"
#include "common/multilang/child_restarts.h"
#include "common/multilang/shell_component.h"
#include "common/multilang/shell_process.h"

namespace tempest::bolts {

inline constexpr char kFluxShellBoltClass[] =
    "org.apache.storm.flux.wrappers.bolts.FluxShellBolt";

// A bolt written in another language, spoken to through Storm's multilang
// protocol (`tempest.ShellBolt`, `org.apache.storm.flux.wrappers.bolts.FluxShellBolt`).
// Flux: `constructorArgs: [[command, args...], [output fields...]]`, or
// properties `command` and `fields`; configMethods `setDefaultStream([fields])`
// and `setNamedStream(name, [fields])` declare further streams.
//
// Asynchronous, as in Storm: Execute hands each input to the child and
// returns; the child's emits, acks and fails are read by the child's reader
// thread and applied by Poll on the executor thread. A heartbeat tuple goes
// out every second; a child that writes nothing for
// topology.subprocess.timeout.secs, dies, or writes something that breaks
// the protocol is reported once (ReportError plus a log line), its in-flight
// inputs are failed (so spouts replay them) and it is restarted, with a
// growing delay for a child that fails soon after starting
// (multilang::ChildRestarts). Inputs that arrive while no child runs (the
// spouts' replays among them) are held, up to kMaxHeldInputs, and handed to
// the next child; only beyond that are they failed, so a restarting child
// causes no replay storm.
//
// The child's reader thread wakes the executor (SetPollWaker) whenever a
// message arrives, so an emit's task ids go back without waiting for the
// next poll interval.
//
// Lives on its executor thread; the child runs in tempest.resources.dir.
class ShellBolt final : public api::Bolt {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"command", "fields"};
  // Inputs held while no child runs; more than this are failed.
  static constexpr size_t kMaxHeldInputs = 10000;
  static absl::StatusOr<std::unique_ptr<ShellBolt>> Create(const api::ComponentArgs& args);
  explicit ShellBolt(multilang::ShellComponentSpec spec);
  ~ShellBolt() override;

  absl::Status Prepare(const api::Config& config, const api::TopologyContext& context,
                       api::OutputCollector& collector) override;
  void Execute(const api::Tuple& input) override;
  void Cleanup() override;
  std::optional<std::chrono::milliseconds> PollInterval() const override;
  bool Poll() override;
  void SetPollWaker(std::function<void()> wake) override { waker_ = std::move(wake); }
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  // How many times the child was restarted (for tests and metrics).
  int64_t restarts() const { return restarts_.restarts(); }
  // Inputs failed because kMaxHeldInputs were already held.
  int64_t overflow_failures() const { return overflow_failures_; }

 private:
  using SteadyClock = std::chrono::steady_clock;

  absl::Status StartChild();
  // Restarts the child when its delay has passed and sends it the held inputs.
  bool RestartChild();
  void SendToChild(const api::Tuple& input);
  void ChildFailed(std::string_view reason);
  bool HandleMessage(const nlohmann::json& message);
  bool HandleEmit(const nlohmann::json& message);
  void ReportChildError(std::string_view what);
  void StageTuple(std::string_view id, const api::Tuple& input);
  void StageHeartbeat();
  bool FlushToChild();

  const multilang::ShellComponentSpec spec_;

  api::Config config_;
  std::optional<api::TopologyContext> context_;
  api::OutputCollector* collector_ = nullptr;
  std::string label_;  // "ShellBolt 'split' task 3"
  std::chrono::milliseconds timeout_{30000};

  std::function<void()> waker_;
  std::unique_ptr<multilang::ShellProcess> shell_;
  absl::flat_hash_map<uint64_t, api::Tuple> in_flight_;
  std::deque<api::Tuple> held_;  // inputs waiting for a child
  int64_t overflow_failures_ = 0;
  uint64_t next_id_ = 1;
  SteadyClock::time_point last_heartbeat_sent_;
  multilang::ChildRestarts restarts_;

  // Reused per message, so the steady state allocates little.
  std::vector<multilang::ShellMessage> inbox_;
  std::vector<api::Tuple> anchors_;
  std::vector<api::TaskId> task_ids_;
  multilang::ParsedEmit emit_;
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_SHELL_BOLT_H_
