#ifndef TEMPEST_BOLTS_VERIFIER_BOLT_H_
#define TEMPEST_BOLTS_VERIFIER_BOLT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bolts/append_only_file.h"
#include "common/api/bolt.h"
#include "common/api/component_registry.h"
#include "common/core/clock.h"

namespace tempest::bolts {

// Settings of a VerifierBolt (Flux properties; constructorArgs: logPath,
// reportPath). Paths may contain "{task}" (replaced by the task id) so
// several tasks keep separate logs.
struct VerifierBoltOptions {
  std::string field = "seq";
  std::string log_path;     // required
  std::string report_path;  // optional: JSON report written at Cleanup
  std::string seen_path;    // optional: sorted unique values at Cleanup
  std::optional<int64_t> expected;
  int64_t batch_size = 1000;        // flush when this many tuples are held
  int64_t flush_interval_ms = 200;  // ... or when the oldest held tuple is this old

  static absl::StatusOr<VerifierBoltOptions> FromArgs(const api::ComponentArgs& args);
};

// `tempest.VerifierBolt`: the sink end-to-end checks trust. Appends the
// integer value of `field` of every input to `logPath`, one per line, and
// acks an input only after the line holding it is durable (written and
// fdatasync'ed). At Cleanup it writes the report over the whole log (see
// VerifyLogs) to `reportPath`, and the sorted unique values to `seenPath`.
//
// Durability before ack: inputs are held (not acked) while their lines sit
// in an in-memory batch; Flush() writes the batch with one write() and one
// fdatasync() and only then acks every held input. A failed write or sync
// fails the held inputs instead (their spout tuples replay) and truncates
// the partial batch away. Batches flush when `batchSize` inputs are held,
// when the oldest is `flushIntervalMs` old (checked on each Execute), on
// every tick tuple, and at Cleanup. Give the component a tick frequency
// (Flux: `config: {topology.tick.tuple.freq.secs: 1}`) so the last inputs
// of a quiet stream are not held until their message timeout.
//
// A verifier restarted after a crash reopens the same log in append mode,
// first dropping a torn final line (never acknowledged), so counts continue.
// A value that is not an integer (or a missing field) is logged as a line
// starting with '!' and counted as malformed by the report, then acked.
//
// Owns the log file and the held tuples. Lives on its bolt executor thread
// (Prepare/Execute/Cleanup, no locking). One writer per log: run it with
// parallelism 1 (global grouping) or put "{task}" in the paths.
class VerifierBolt final : public api::Bolt {
 public:
  static absl::StatusOr<std::unique_ptr<VerifierBolt>> Create(const api::ComponentArgs& args);
  static absl::StatusOr<std::unique_ptr<VerifierBolt>> Create(const api::ComponentArgs& args,
                                                              const core::Clock& clock);
  VerifierBolt(VerifierBoltOptions options, const core::Clock& clock)
      : options_(std::move(options)), clock_(clock) {}

  absl::Status Prepare(const api::Config& config, const api::TopologyContext& context,
                       api::OutputCollector& collector) override;
  void Execute(const api::Tuple& input) override;
  void Cleanup() override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  // Writes and syncs the held lines, then acks (or, on error, fails) the
  // held inputs. Returns the write/sync status.
  absl::Status Flush();

  const VerifierBoltOptions& options() const { return options_; }
  const std::string& log_path() const { return log_path_; }
  int64_t held() const { return static_cast<int64_t>(held_.size()); }
  int64_t flushes() const { return flushes_; }
  bool ticks_configured() const { return ticks_configured_; }

 private:
  absl::Status WriteReport();

  const VerifierBoltOptions options_;
  const core::Clock& clock_;
  api::OutputCollector* collector_ = nullptr;
  std::string log_path_, report_path_, seen_path_;
  std::unique_ptr<AppendOnlyFile> log_;
  bool ticks_configured_ = false;

  std::string batch_;             // lines not yet written
  std::vector<api::Tuple> held_;  // inputs whose lines are in batch_
  core::Clock::TimePoint oldest_held_{};
  int64_t flushes_ = 0;
  int64_t malformed_reported_ = 0;
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_VERIFIER_BOLT_H_
