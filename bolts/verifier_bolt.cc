#include "bolts/verifier_bolt.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bolts/bolt_args.h"
#include "bolts/verification_report.h"
#include "common/os/files.h"
#include "spdlog/spdlog.h"

namespace tempest::bolts {

absl::StatusOr<VerifierBoltOptions> VerifierBoltOptions::FromArgs(const api::ComponentArgs& raw) {
  absl::StatusOr<api::ComponentArgs> args = WithPositionalArgs(raw, {"logPath", "reportPath"});
  if (!args.ok()) return args.status();
  VerifierBoltOptions o;
  const std::string& cls = raw.class_name;
  absl::StatusOr<std::string> field = args->StringProperty("field", o.field);
  if (!field.ok()) return field.status();
  absl::StatusOr<std::string> log = args->StringProperty("logPath", "");
  if (!log.ok()) return log.status();
  absl::StatusOr<std::string> report = args->StringProperty("reportPath", "");
  if (!report.ok()) return report.status();
  absl::StatusOr<std::string> seen = args->StringProperty("seenPath", "");
  if (!seen.ok()) return seen.status();
  absl::StatusOr<int64_t> batch = args->IntProperty("batchSize", o.batch_size);
  if (!batch.ok()) return batch.status();
  absl::StatusOr<int64_t> interval = args->IntProperty("flushIntervalMs", o.flush_interval_ms);
  if (!interval.ok()) return interval.status();
  if (const api::Value* e = args->Property("expected"); e != nullptr && !e->is_nil()) {
    absl::StatusOr<int64_t> expected = args->IntProperty("expected", 0);
    if (!expected.ok()) return expected.status();
    if (*expected < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(cls, " property 'expected' must be >= 0; got ", *expected));
    }
    o.expected = *expected;
  }
  if (log->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " needs property 'logPath' (the file received values are appended to)"));
  }
  if (field->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(cls, " property 'field' must not be empty"));
  }
  if (*batch < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'batchSize' must be >= 1; got ", *batch));
  }
  if (*interval < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'flushIntervalMs' must be >= 0; got ", *interval));
  }
  o.field = *std::move(field);
  o.log_path = *std::move(log);
  o.report_path = *std::move(report);
  o.seen_path = *std::move(seen);
  o.batch_size = *batch;
  o.flush_interval_ms = *interval;
  return o;
}

absl::StatusOr<std::unique_ptr<VerifierBolt>> VerifierBolt::Create(const api::ComponentArgs& args) {
  return Create(args, core::RealClock());
}

absl::StatusOr<std::unique_ptr<VerifierBolt>> VerifierBolt::Create(const api::ComponentArgs& args,
                                                                   const core::Clock& clock) {
  absl::StatusOr<VerifierBoltOptions> options = VerifierBoltOptions::FromArgs(args);
  if (!options.ok()) return options.status();
  return std::make_unique<VerifierBolt>(*std::move(options), clock);
}

absl::Status VerifierBolt::Prepare(const api::Config& config, const api::TopologyContext& context,
                                   api::OutputCollector& collector) {
  (void)config;
  collector_ = &collector;
  log_path_ = ExpandTaskPlaceholder(options_.log_path, context.ThisTaskId());
  report_path_ = ExpandTaskPlaceholder(options_.report_path, context.ThisTaskId());
  seen_path_ = ExpandTaskPlaceholder(options_.seen_path, context.ThisTaskId());
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> log = AppendOnlyFile::Open(log_path_);
  if (!log.ok()) {
    return absl::Status(log.status().code(),
                        absl::StrCat("tempest.VerifierBolt logPath: ", log.status().message()));
  }
  log_ = *std::move(log);
  absl::StatusOr<int64_t> dropped = log_->DropTornTail();
  if (!dropped.ok()) return dropped.status();
  if (*dropped > 0) {
    spdlog::warn("VerifierBolt {}: dropped a torn last line ({} bytes) of {}",
                 context.ThisComponentId().value(), *dropped, log_path_);
  }
  // Per-component tick frequency (the context's config includes overrides).
  std::optional<int64_t> tick = context.config().GetOptionalInt(api::kTopologyTickTupleFreqSecs);
  ticks_configured_ = tick.has_value() && *tick > 0;
  if (!ticks_configured_) {
    spdlog::warn(
        "VerifierBolt {}: no {} configured for this component; held acks are released only by "
        "later tuples (batchSize {} / flushIntervalMs {}) or at cleanup. Set it to 1 in the "
        "bolt's Flux config.",
        context.ThisComponentId().value(), api::kTopologyTickTupleFreqSecs, options_.batch_size,
        options_.flush_interval_ms);
  }
  return absl::OkStatus();
}

void VerifierBolt::Execute(const api::Tuple& input) {
  if (input.IsTick()) {
    (void)Flush();
    collector_->Ack(input);
    return;
  }
  const api::Value* value = input.Find(options_.field);
  absl::StatusOr<int64_t> number =
      value != nullptr ? value->CoerceInt()
                       : absl::StatusOr<int64_t>(absl::NotFoundError("no such field"));
  if (number.ok()) {
    absl::StrAppend(&batch_, *number, "\n");
  } else {
    // Keep the evidence in the log; the report counts it as malformed.
    std::string shown = value != nullptr ? ValueAsLine(*value) : "<missing field>";
    absl::StrAppend(&batch_, "!", options_.field, "=", shown, "\n");
    if (malformed_reported_++ < 10) {
      collector_->ReportError(
          absl::InvalidArgumentError(absl::StrCat("VerifierBolt: field '", options_.field,
                                                  "' is not an integer in ", input.DebugString())));
    }
  }
  if (held_.empty()) oldest_held_ = clock_.Now();
  held_.push_back(input);
  if (static_cast<int64_t>(held_.size()) >= options_.batch_size ||
      clock_.Now() - oldest_held_ >= std::chrono::milliseconds(options_.flush_interval_ms)) {
    (void)Flush();
  }
}

absl::Status VerifierBolt::Flush() {
  if (held_.empty()) return absl::OkStatus();
  absl::Status written = log_ != nullptr
                             ? log_->Append(batch_, /*sync=*/true)
                             : absl::FailedPreconditionError("VerifierBolt log is not open");
  std::vector<api::Tuple> held = std::move(held_);
  held_.clear();
  batch_.clear();
  ++flushes_;
  if (written.ok()) {
    // Only now, with the lines durable, may their spout tuples complete.
    for (const api::Tuple& t : held) collector_->Ack(t);
  } else {
    collector_->ReportError(written);
    spdlog::error("VerifierBolt: failing {} tuples: {}", held.size(), written.ToString());
    for (const api::Tuple& t : held) collector_->Fail(t);
  }
  return written;
}

void VerifierBolt::Cleanup() {
  (void)Flush();
  log_.reset();
  absl::Status report = WriteReport();
  if (!report.ok()) spdlog::error("VerifierBolt: {}", report.ToString());
}

absl::Status VerifierBolt::WriteReport() {
  if (report_path_.empty() && seen_path_.empty()) return absl::OkStatus();
  std::vector<int64_t> seen;
  absl::StatusOr<VerificationReport> report =
      VerifyLogs({log_path_}, options_.expected, seen_path_.empty() ? nullptr : &seen);
  if (!report.ok()) return report.status();
  if (!report_path_.empty()) {
    absl::Status s = os::WriteFileAtomically(report_path_, ReportToJson(*report) + "\n");
    if (!s.ok()) return s;
    spdlog::info("VerifierBolt: report {} -> {}", report_path_, ReportToJson(*report));
  }
  if (!seen_path_.empty()) {
    std::string text;
    text.reserve(seen.size() * 8);
    for (int64_t v : seen) absl::StrAppend(&text, v, "\n");
    absl::Status s = os::WriteFileAtomically(seen_path_, text);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

void VerifierBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  (void)declarer;  // a sink
}

}  // namespace tempest::bolts
