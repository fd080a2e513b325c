#include "spout/sequence_spout.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"

namespace tempest::spout {

absl::StatusOr<SequenceSpoutOptions> SequenceSpoutOptions::FromArgs(const api::ComponentArgs& raw) {
  ASSIGN_OR_RETURN(const api::ComponentArgs args, raw.WithPositionalArgs({"count", "rate"}));
  SequenceSpoutOptions o;
  ASSIGN_OR_RETURN(const int64_t count, args.IntProperty("count", o.count));
  ASSIGN_OR_RETURN(const double rate, args.DoubleProperty("rate", o.rate));
  ASSIGN_OR_RETURN(const int64_t keys, args.IntProperty("keys", o.keys));
  ASSIGN_OR_RETURN(const int64_t payload, args.IntProperty("payloadBytes", o.payload_bytes));
  ASSIGN_OR_RETURN(const bool reliable, args.BoolProperty("reliable", o.reliable));

  const std::string& cls = raw.class_name;
  if (count < -1) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'count' must be >= 0, or -1 for forever; got ", count));
  }
  if (!std::isfinite(rate) || rate < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'rate' must be >= 0 tuples/s (0 = unlimited); got ", rate));
  }
  if (keys < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'keys' must be >= 1; got ", keys));
  }
  // A cap well above any sensible payload keeps a typo from allocating GBs.
  constexpr int64_t kMaxPayload = 64 << 20;
  if (payload < 0 || payload > kMaxPayload) {
    return absl::InvalidArgumentError(absl::StrCat(cls, " property 'payloadBytes' must be in [0, ",
                                                   kMaxPayload, "]; got ", payload));
  }
  o.count = count;
  o.rate = rate;
  o.keys = keys;
  o.payload_bytes = payload;
  o.reliable = reliable;
  return o;
}

absl::StatusOr<std::unique_ptr<SequenceSpout>> SequenceSpout::Create(
    const api::ComponentArgs& args) {
  return Create(args, core::RealClock());
}

absl::StatusOr<std::unique_ptr<SequenceSpout>> SequenceSpout::Create(const api::ComponentArgs& args,
                                                                     const core::Clock& clock) {
  ASSIGN_OR_RETURN(const SequenceSpoutOptions options, SequenceSpoutOptions::FromArgs(args));
  return std::make_unique<SequenceSpout>(options, clock);
}

SequenceSpout::SequenceSpout(SequenceSpoutOptions options, const core::Clock& clock)
    : options_(options), clock_(clock) {}

absl::Status SequenceSpout::Open(const api::Config& config, const api::TopologyContext& context,
                                 api::SpoutOutputCollector& collector) {
  (void)context;
  collector_ = &collector;
  max_pending_ = config.GetOptionalInt(api::kTopologyMaxSpoutPending);
  // Unreliable emits are never pending, so their count needs no check.
  if (!options_.reliable) max_pending_.reset();
  // The key strings, made once when there are few: formatting one per tuple
  // is a noticeable share of an emit.
  key_names_.clear();
  if (options_.keys <= kMaxKeyNames) {
    key_names_.reserve(static_cast<size_t>(options_.keys));
    for (int64_t k = 0; k < options_.keys; ++k) key_names_.push_back(absl::StrCat("k", k));
  }
  // A recognisable, position-dependent pattern (not zeros) so a corrupted
  // payload would be visible when debugging serialization.
  payload_.resize(static_cast<size_t>(options_.payload_bytes));
  for (size_t i = 0; i < payload_.size(); ++i) payload_[i] = static_cast<char>('a' + i % 26);
  schedule_start_ = clock_.Now();
  emitted_since_start_ = 0;
  return absl::OkStatus();
}

void SequenceSpout::Activate() {
  // Time spent deactivated must not turn into a burst of overdue tuples.
  schedule_start_ = clock_.Now();
  emitted_since_start_ = 0;
}

int64_t SequenceSpout::DueNow() {
  if (options_.rate <= 0) return kMaxBurst;
  const double elapsed_secs = std::chrono::duration<double>(clock_.Now() - schedule_start_).count();
  // +1: the first tuple of a schedule is due at its start. The epsilon keeps
  // rounding (1.011 s * 1000/s = 1010.999..) from delaying a due tuple.
  int64_t due_total = static_cast<int64_t>(std::floor(elapsed_secs * options_.rate + 1e-6)) + 1;
  int64_t due = due_total - emitted_since_start_;
  // Far behind (back pressure, a stalled executor): start a new schedule
  // instead of catching up with a flood.
  if (static_cast<double>(due) > std::max<double>(kMaxBurst, options_.rate)) {
    schedule_start_ = clock_.Now();
    emitted_since_start_ = 0;
    due = 1;
  }
  return std::min(due, kMaxBurst);
}

void SequenceSpout::NextTuple() {
  if (collector_ == nullptr) return;
  int64_t due = DueNow();
  for (int64_t i = 0; i < due; ++i) {
    if (max_pending_.has_value() && *max_pending_ > 0 && i > 0 &&
        collector_->PendingCount() >= *max_pending_) {
      break;
    }
    if (!EmitOne()) break;
    ++emitted_since_start_;
  }
}

bool SequenceSpout::EmitOne() {
  int64_t seq;
  if (!replay_.empty()) {
    seq = *replay_.begin();
    replay_.erase(replay_.begin());
  } else if (options_.count < 0 || next_seq_ < options_.count) {
    seq = next_seq_++;
  } else {
    return false;
  }
  api::Values values;
  values.reserve(3);
  values.emplace_back(seq);
  const int64_t key = seq % options_.keys;
  if (key_names_.empty()) {
    values.emplace_back(absl::StrCat("k", key));
  } else {
    values.emplace_back(key_names_[static_cast<size_t>(key)]);
  }
  values.emplace_back(api::Value::OfBytes(payload_));
  if (options_.reliable) {
    in_flight_.insert(seq);
    collector_->Emit(std::move(values), api::MessageId(seq));
  } else {
    collector_->Emit(std::move(values));
  }
  return true;
}

void SequenceSpout::Ack(const api::MessageId& message_id) {
  std::optional<int64_t> seq = message_id.TryInt();
  if (!seq.has_value()) return;
  // Only the first ack of an in-flight seq counts; stray acks are ignored.
  if (in_flight_.erase(*seq) > 0) ++acked_;
}

void SequenceSpout::Fail(const api::MessageId& message_id) {
  std::optional<int64_t> seq = message_id.TryInt();
  if (!seq.has_value()) return;
  // Replay only what is in flight: a duplicate fail must not emit twice.
  if (in_flight_.erase(*seq) > 0) replay_.insert(*seq);
}

void SequenceSpout::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  declarer.Declare(api::Fields({"seq", "key", "payload"}));
}

bool SequenceSpout::IsExhausted() const {
  if (options_.count < 0) return false;
  return next_seq_ >= options_.count && replay_.empty() && in_flight_.empty();
}

}  // namespace tempest::spout
