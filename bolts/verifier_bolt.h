#ifndef TEMPEST_BOLTS_VERIFIER_BOLT_H_
#define TEMPEST_BOLTS_VERIFIER_BOLT_H_

#include <string_view>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "bolts/append_only_file.h"
#include "bolts/applied_offsets.h"
#include "common/api/bolt.h"
#include "common/api/component_registry.h"
#include "common/core/clock.h"
#include "common/core/rate_limited_log.h"

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
  // Effectively-once mode (see the class comment): deduplicate by the key in
  // these three fields (topic, partition, offset).
  bool dedup = false;
  std::vector<std::string> dedup_fields = {"topic", "partition", "offset"};
  int64_t dedup_window = AppliedOffsets::kDefaultWindow;

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
// when the oldest is `flushIntervalMs` old, on every tick tuple (if the
// component has a tick frequency: optional) and at Cleanup. The age is
// checked on each Execute and by Poll, which the executor calls at least
// every PollInterval (half of `flushIntervalMs`) while no input arrives, so
// the last inputs of a quiet stream are acked within about 1.5 x
// `flushIntervalMs` with no tick configuration.
//
// A verifier restarted after a crash reopens the same log in append mode,
// first dropping a torn final line (never acknowledged), so counts continue.
// A value that is not an integer (or a missing field) is logged as a line
// starting with '!' and counted as malformed by the report, then acked.
//
// Effectively-once sink (`dedup: true`). At-least-once delivery replays a
// Kafka record after a failure anywhere in its tuple tree, so a plain sink
// may apply it twice. In dedup mode every input carries a key in
// `dedupFields` (default topic, partition, offset: what tempest.KafkaSpout
// emits) and:
//  * an input whose key was not applied is written as one line holding both
//    the key and the value ("@topic partition offset value"). Data and "what
//    was applied" are in the same durable append, so after a crash they can
//    never disagree: a record is applied iff its line is in the log.
//  * an input whose key was already applied (durably, or earlier in the
//    batch being built) is not written again. Only a marker with its key is
//    added ("=topic partition offset", no value), so `deduplicated` in the
//    report survives restarts; the input is held and acked with the batch,
//    because a replay of a key still in an unflushed batch may only be acked
//    once that batch is durable (if the write fails, both are failed).
//  * Prepare rebuilds the applied keys from the log itself (after dropping
//    a torn last line, which was never acked), so a restarted sink on the
//    same log keeps dropping replays. It reads the whole log once.
//  * an input with a missing field, a partition or offset that is not a
//    non-negative integer, or a topic with spaces or control characters is
//    logged as a "!key ..." line, counted as malformed, reported and acked;
//    it is never applied or deduplicated.
// The applied keys live in AppliedOffsets: per partition a contiguous
// watermark plus the runs of applied offsets above it, not just the highest
// applied offset, since the KafkaSpout retries an old failed offset after
// newer ones of its partition were applied and that record must still be
// applied. Runs fold into the watermark as gaps close; offsets more than
// `dedupWindow` (default 1,000,000) below the highest applied one count as
// applied, which bounds memory by the holes inside that window. Keep
// `dedupWindow` above the spout's `maxUncommittedOffsets` (default 100,000).
// The value (`field`, e.g. `value`) is still checked as an integer for the
// report; a non-integer value is applied and logged as "!field=text".
// Deduplication is per log, so with parallelism > 1 route each partition to
// one task (fields grouping on [topic, partition]) and put "{task}" in the
// paths; otherwise a replay reaching another task is applied there again.
//
// Why a mode of VerifierBolt and not a separate class: the dedup sink needs
// exactly the verifier's machinery (held acks until write + fdatasync,
// rollback on failure, torn-tail repair, {task} paths, ticks, the report and
// `tempest verify`), and the study compares the same sink with and without
// deduplication; a second class would duplicate all of it.
//
// Owns the log file and the held tuples. Lives on its bolt executor thread
// (Prepare/Execute/Cleanup, no locking). One writer per log: run it with
// parallelism 1 (global grouping) or put "{task}" in the paths.
class VerifierBolt final : public api::Bolt {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"logPath", "field", "reportPath", "seenPath", "expected", "batchSize", "flushIntervalMs", "dedup", "dedupFields", "dedupWindow"};
  static absl::StatusOr<std::unique_ptr<VerifierBolt>> Create(const api::ComponentArgs& args);
  static absl::StatusOr<std::unique_ptr<VerifierBolt>> Create(const api::ComponentArgs& args,
                                                              const core::Clock& clock);
  VerifierBolt(VerifierBoltOptions options, const core::Clock& clock)
      : options_(std::move(options)), clock_(clock), applied_(options_.dedup_window) {}

  absl::Status Prepare(const api::Config& config, const api::TopologyContext& context,
                       api::OutputCollector& collector) override;
  void Execute(const api::Tuple& input) override;
  void Cleanup() override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;
  // Flushes a batch whose oldest input is `flushIntervalMs` old, so held
  // acks never wait for more input or for ticks.
  std::optional<std::chrono::milliseconds> PollInterval() const override;
  bool Poll() override;

  // Writes and syncs the held lines, then acks (or, on error, fails) the
  // held inputs. Returns the write/sync status.
  absl::Status Flush();

  const VerifierBoltOptions& options() const { return options_; }
  const std::string& log_path() const { return log_path_; }
  int64_t held() const { return static_cast<int64_t>(held_.size()); }
  int64_t flushes() const { return flushes_; }
  // Dedup mode: replays dropped and acked by this instance (the report
  // counts them over the whole log), keys rebuilt from the log at Prepare,
  // inputs with malformed keys, and the durable applied keys.
  int64_t deduplicated() const { return deduplicated_; }
  int64_t recovered() const { return recovered_; }
  int64_t malformed_keys() const { return malformed_keys_; }
  const AppliedOffsets& applied() const { return applied_; }

 private:
  bool BatchIsDue() const;
  absl::Status WriteReport();
  absl::Status RecoverAppliedKeys();
  // Appends the line(s) for `input` to batch_ (dedup mode).
  void StageDedup(const api::Tuple& input);
  // Appends the plain line for `input` to batch_.
  void StageValue(const api::Tuple& input);
  std::string ValuePayload(const api::Tuple& input);

  const VerifierBoltOptions options_;
  const core::Clock& clock_;
  api::OutputCollector* collector_ = nullptr;
  std::string log_path_, report_path_, seen_path_;
  std::unique_ptr<AppendOnlyFile> log_;

  std::string batch_;             // lines not yet written
  std::vector<api::Tuple> held_;  // inputs whose lines are in batch_
  core::Clock::TimePoint oldest_held_{};
  int64_t flushes_ = 0;
  // Malformed inputs reported as errors: 10 a minute (the report counts
  // them all).
  core::RateLimitedLog malformed_log_{10, std::chrono::minutes(1)};

  // Dedup mode. applied_ holds only keys whose lines are durable; keys of the
  // batch being built are in batch_keys_ until Flush succeeds (a failed
  // write forgets them, so their replays are applied again).
  AppliedOffsets applied_;
  absl::flat_hash_set<RecordKey> batch_keys_;
  int64_t batch_dropped_ = 0;
  int64_t deduplicated_ = 0;
  int64_t recovered_ = 0;
  int64_t malformed_keys_ = 0;
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_VERIFIER_BOLT_H_
