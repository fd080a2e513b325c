#include "bolts/verifier_bolt.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bolts/bolt_args.h"
#include "bolts/verification_report.h"
#include "common/core/status_macros.h"
#include "common/os/files.h"
#include "spdlog/spdlog.h"

namespace tempest::bolts {

namespace {

// 'expected', when given and not nil: how many distinct values the report
// should find.
absl::Status ReadExpected(const api::ComponentArgs& args, const std::string& cls,
                          VerifierBoltOptions& o) {
  const api::Value* e = args.Property("expected");
  if (e == nullptr || e->is_nil()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const int64_t expected, args.IntProperty("expected", 0));
  if (expected < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'expected' must be >= 0; got ", expected));
  }
  o.expected = expected;
  return absl::OkStatus();
}

// 'dedup', and the key fields and window it uses (which need it).
absl::Status ReadDedupOptions(const api::ComponentArgs& args, const std::string& cls,
                              VerifierBoltOptions& o) {
  ASSIGN_OR_RETURN(const bool dedup, args.BoolProperty("dedup", false));
  ASSIGN_OR_RETURN(std::vector<std::string> dedup_fields,
                   StringListProperty(args, "dedupFields", o.dedup_fields));
  ASSIGN_OR_RETURN(const int64_t window, args.IntProperty("dedupWindow", o.dedup_window));
  if (dedup_fields.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'dedupFields' needs 3 names (topic, partition, offset); got ",
                     absl::StrJoin(dedup_fields, ",")));
  }
  if (window < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'dedupWindow' must be >= 1; got ", window));
  }
  if (!dedup &&
      (args.Property("dedupFields") != nullptr || args.Property("dedupWindow") != nullptr)) {
    // Catches a forgotten `dedup: true` instead of silently not deduplicating.
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " properties 'dedupFields' and 'dedupWindow' need 'dedup: true'"));
  }
  o.dedup = dedup;
  o.dedup_fields = std::move(dedup_fields);
  o.dedup_window = window;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<VerifierBoltOptions> VerifierBoltOptions::FromArgs(const api::ComponentArgs& raw) {
  ASSIGN_OR_RETURN(const api::ComponentArgs args,
                   WithPositionalArgs(raw, {"logPath", "reportPath"}));
  VerifierBoltOptions o;
  const std::string& cls = raw.class_name;
  ASSIGN_OR_RETURN(std::string field, args.StringProperty("field", o.field));
  ASSIGN_OR_RETURN(std::string log, args.StringProperty("logPath", ""));
  ASSIGN_OR_RETURN(std::string report, args.StringProperty("reportPath", ""));
  ASSIGN_OR_RETURN(std::string seen, args.StringProperty("seenPath", ""));
  ASSIGN_OR_RETURN(const int64_t batch, args.IntProperty("batchSize", o.batch_size));
  ASSIGN_OR_RETURN(const int64_t interval,
                   args.IntProperty("flushIntervalMs", o.flush_interval_ms));
  RETURN_IF_ERROR(ReadExpected(args, cls, o));
  if (log.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " needs property 'logPath' (the file received values are appended to)"));
  }
  if (field.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(cls, " property 'field' must not be empty"));
  }
  if (batch < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'batchSize' must be >= 1; got ", batch));
  }
  if (interval < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'flushIntervalMs' must be >= 0; got ", interval));
  }
  RETURN_IF_ERROR(ReadDedupOptions(args, cls, o));
  o.field = std::move(field);
  o.log_path = std::move(log);
  o.report_path = std::move(report);
  o.seen_path = std::move(seen);
  o.batch_size = batch;
  o.flush_interval_ms = interval;
  return o;
}

absl::StatusOr<std::unique_ptr<VerifierBolt>> VerifierBolt::Create(const api::ComponentArgs& args) {
  return Create(args, core::RealClock());
}

absl::StatusOr<std::unique_ptr<VerifierBolt>> VerifierBolt::Create(const api::ComponentArgs& args,
                                                                   const core::Clock& clock) {
  ASSIGN_OR_RETURN(VerifierBoltOptions options, VerifierBoltOptions::FromArgs(args));
  return std::make_unique<VerifierBolt>(std::move(options), clock);
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
  ASSIGN_OR_RETURN(const int64_t dropped, log_->DropTornTail());
  if (dropped > 0) {
    spdlog::warn("VerifierBolt {}: dropped a torn last line ({} bytes) of {}",
                 context.ThisComponentId().value(), dropped, log_path_);
  }
  if (options_.dedup) {
    RETURN_IF_ERROR(RecoverAppliedKeys());
    spdlog::info(
        "VerifierBolt {}: dedup on [{}]; {} applied keys recovered from {} ({} partitions)",
        context.ThisComponentId().value(), absl::StrJoin(options_.dedup_fields, ","), recovered_,
        log_path_, applied_.partitions());
  }
  return absl::OkStatus();
}

void VerifierBolt::Execute(const api::Tuple& input) {
  if (input.IsTick()) {
    (void)Flush();  // a failed write is reported and its tuples failed by Flush itself
    collector_->Ack(input);
    return;
  }
  if (options_.dedup) {
    StageDedup(input);
  } else {
    StageValue(input);
  }
  if (held_.empty()) oldest_held_ = clock_.Now();
  held_.push_back(input);
  if (static_cast<int64_t>(held_.size()) >= options_.batch_size || BatchIsDue()) {
    (void)Flush();  // a failed write is reported and its tuples failed by Flush itself
  }
}

bool VerifierBolt::BatchIsDue() const {
  return !held_.empty() &&
         clock_.Now() - oldest_held_ >= std::chrono::milliseconds(options_.flush_interval_ms);
}

std::optional<std::chrono::milliseconds> VerifierBolt::PollInterval() const {
  // 0 flushes on every input, so nothing is ever held for Poll. Otherwise
  // half the interval bounds how long past its due time a batch can wait.
  if (options_.flush_interval_ms == 0) return std::nullopt;
  return std::chrono::milliseconds(std::max<int64_t>(1, options_.flush_interval_ms / 2));
}

bool VerifierBolt::Poll() {
  if (!BatchIsDue()) return false;
  (void)Flush();  // a failed write is reported and its tuples failed by Flush itself
  return true;
}

std::string VerifierBolt::ValuePayload(const api::Tuple& input) {
  const api::Value* value = input.Find(options_.field);
  absl::StatusOr<int64_t> number =
      value != nullptr ? value->CoerceInt()
                       : absl::StatusOr<int64_t>(absl::NotFoundError("no such field"));
  if (number.ok()) return absl::StrCat(*number);
  // Keep the evidence in the log; the report counts it as malformed.
  std::string shown = value != nullptr ? ValueAsLine(*value) : "<missing field>";
  if (malformed_log_.Allow()) {
    collector_->ReportError(absl::InvalidArgumentError(absl::StrCat(
        "VerifierBolt: field '", options_.field, "' is not an integer in ", input.DebugString())));
  }
  return absl::StrCat("!", options_.field, "=", shown);
}

void VerifierBolt::StageValue(const api::Tuple& input) {
  absl::StrAppend(&batch_, ValuePayload(input), "\n");
}

namespace {

// The key of `input` in `fields` (topic, partition, offset), or why not.
absl::StatusOr<RecordKey> KeyOf(const api::Tuple& input, const std::vector<std::string>& fields) {
  const api::Value* values[3] = {nullptr, nullptr, nullptr};
  for (int i = 0; i < 3; ++i) {
    values[i] = input.Find(fields[i]);
    if (values[i] == nullptr || values[i]->is_nil()) {
      return absl::InvalidArgumentError(absl::StrCat("missing field '", fields[i], "'"));
    }
  }
  RecordKey key;
  absl::StatusOr<std::string> topic = values[0]->CoerceString();
  if (!topic.ok() || !IsLoggableTopic(*topic)) {
    return absl::InvalidArgumentError(
        absl::StrCat(fields[0], "=", ValueAsLine(*values[0]),
                     " is not a topic name (non-empty, no spaces or control characters)"));
  }
  key.topic = *std::move(topic);
  for (int i = 1; i < 3; ++i) {
    absl::StatusOr<int64_t> n = values[i]->CoerceInt();
    if (!n.ok() || *n < 0 || *n == std::numeric_limits<int64_t>::max()) {
      return absl::InvalidArgumentError(
          absl::StrCat(fields[i], "=", ValueAsLine(*values[i]), " is not a non-negative integer"));
    }
    (i == 1 ? key.partition : key.offset) = *n;
  }
  return key;
}

}  // namespace

void VerifierBolt::StageDedup(const api::Tuple& input) {
  absl::StatusOr<RecordKey> key = KeyOf(input, options_.dedup_fields);
  if (!key.ok()) {
    // Cannot be deduplicated; kept as evidence, counted as malformed, acked.
    ++malformed_keys_;
    std::string why(key.status().message());
    std::replace(why.begin(), why.end(), '\n', ' ');
    std::replace(why.begin(), why.end(), '\r', ' ');
    absl::StrAppend(&batch_, "!key ", why, "\n");
    if (malformed_log_.Allow()) {
      collector_->ReportError(absl::InvalidArgumentError(
          absl::StrCat("VerifierBolt: no dedup key: ", why, " in ", input.DebugString())));
    }
    return;
  }
  if (applied_.Contains(*key) || batch_keys_.contains(*key)) {
    // A replay of an applied record: only a marker, never the record again.
    absl::StrAppend(&batch_, DroppedLine(*key));
    ++batch_dropped_;
    return;
  }
  absl::StrAppend(&batch_, AppliedLine(*key, ValuePayload(input)));
  batch_keys_.insert(*std::move(key));
}

absl::Status VerifierBolt::RecoverAppliedKeys() {
  recovered_ = 0;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(log_path_, ec)) {
    // A device or pipe (e.g. /dev/full in tests) holds no earlier records,
    // and reading it might never end.
    return absl::OkStatus();
  }
  int64_t bad = 0;
  absl::Status read = ForEachLogLine(log_path_, [&](std::string_view line, bool complete) {
    if (!complete || line.empty() || line[0] != '@') return;
    std::optional<DedupLine> keyed = ParseDedupLine(line);
    if (!keyed.has_value()) {
      ++bad;
      return;
    }
    if (applied_.Add(keyed->key)) ++recovered_;
  });
  if (!read.ok()) {
    return absl::Status(read.code(), absl::StrCat("tempest.VerifierBolt cannot recover applied "
                                                  "keys: ",
                                                  read.message()));
  }
  if (bad > 0) {
    spdlog::warn("VerifierBolt: {} lines of {} start with '@' but are not applied records; ignored",
                 bad, log_path_);
  }
  return absl::OkStatus();
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
    // The batch's keys are durable now; replays of them are dropped from here on.
    for (const RecordKey& key : batch_keys_) applied_.Add(key);
    deduplicated_ += batch_dropped_;
  }
  batch_keys_.clear();
  batch_dropped_ = 0;
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
  (void)Flush();  // a failed write is reported and its tuples failed by Flush itself
  log_.reset();
  absl::Status report = WriteReport();
  if (!report.ok()) spdlog::error("VerifierBolt: {}", report.ToString());
}

absl::Status VerifierBolt::WriteReport() {
  if (report_path_.empty() && seen_path_.empty()) return absl::OkStatus();
  std::vector<int64_t> seen;
  ASSIGN_OR_RETURN(
      const VerificationReport report,
      VerifyLogs({log_path_}, options_.expected, seen_path_.empty() ? nullptr : &seen));
  if (!report_path_.empty()) {
    RETURN_IF_ERROR(os::WriteFileAtomically(report_path_, ReportToJson(report) + "\n"));
    spdlog::info("VerifierBolt: report {} -> {}", report_path_, ReportToJson(report));
  }
  if (!seen_path_.empty()) {
    std::string text;
    text.reserve(seen.size() * 8);
    for (int64_t v : seen) absl::StrAppend(&text, v, "\n");
    RETURN_IF_ERROR(os::WriteFileAtomically(seen_path_, text));
  }
  return absl::OkStatus();
}

void VerifierBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  // A sink: no output. Its inputs must carry the value (and, deduplicating,
  // the key) it reads, or every line would be malformed.
  std::vector<std::string> reads = {options_.field};
  if (options_.dedup) reads.insert(reads.end(), options_.dedup_fields.begin(),
                                   options_.dedup_fields.end());
  declarer.RequireInputFields(std::move(reads),
                              options_.dedup ? "set its 'field' and 'dedupFields' properties"
                                             : "set its 'field' property");
}

}  // namespace tempest::bolts
