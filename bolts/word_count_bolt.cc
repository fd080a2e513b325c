#include "bolts/word_count_bolt.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bolts/bolt_args.h"
#include "common/core/status_macros.h"
#include "spdlog/spdlog.h"

namespace tempest::bolts {

absl::StatusOr<std::unique_ptr<WordCountBolt>> WordCountBolt::Create(
    const api::ComponentArgs& raw) {
  return Create(raw, core::RealClock());
}

absl::StatusOr<std::unique_ptr<WordCountBolt>> WordCountBolt::Create(
    const api::ComponentArgs& raw, const core::Clock& clock) {
  ASSIGN_OR_RETURN(api::ComponentArgs args, WithPositionalArgs(raw, {}));
  ASSIGN_OR_RETURN(std::string field, args.StringProperty("field", "word"));
  ASSIGN_OR_RETURN(std::string every, args.StringProperty("emitEvery", "tick"));
  if (every != "tick" && every != "tuple") {
    return absl::InvalidArgumentError(absl::StrCat(
        raw.class_name, " property 'emitEvery' must be 'tick' or 'tuple'; got '", every, "'"));
  }
  if (field.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(raw.class_name, " property 'field' must not be empty"));
  }
  ASSIGN_OR_RETURN(int64_t interval, args.IntProperty("emitIntervalMs", 1000));
  if (interval < 1 || interval > 3'600'000) {
    return absl::InvalidArgumentError(absl::StrCat(
        raw.class_name, " property 'emitIntervalMs' must be in [1, 3600000]; got ", interval));
  }
  return std::make_unique<WordCountBolt>(std::move(field), every == "tuple",
                                         std::chrono::milliseconds(interval), clock);
}

absl::Status WordCountBolt::Prepare(const api::Config& config, const api::TopologyContext& context,
                                    api::OutputCollector& collector) {
  (void)config;
  collector_ = &collector;
  component_ = context.ThisComponentId().value();
  std::optional<int64_t> tick = context.config().GetOptionalInt(api::kTopologyTickTupleFreqSecs);
  emit_on_poll_ = !emit_every_tuple_ && !(tick.has_value() && *tick > 0);
  last_emit_ = clock_.Now();
  return absl::OkStatus();
}

std::optional<std::chrono::milliseconds> WordCountBolt::PollInterval() const {
  if (!emit_on_poll_) return std::nullopt;
  return emit_interval_;
}

bool WordCountBolt::Poll() {
  if (!emit_on_poll_ || clock_.Now() - last_emit_ < emit_interval_) return false;
  last_emit_ = clock_.Now();
  if (changed_.empty()) return false;
  EmitChanged();
  return true;
}

void WordCountBolt::EmitChanged() {
  for (const std::string& word : changed_) {
    collector_->Emit({api::Value(word), api::Value(counts_[word])});
  }
  changed_.clear();
}

void WordCountBolt::Execute(const api::Tuple& input) {
  if (input.IsTick()) {
    EmitChanged();
    collector_->Ack(input);
    return;
  }
  const api::Value* value = input.Find(field_);
  if (value == nullptr && input.size() > 0) value = &input.Get(0);
  if (value == nullptr) {
    collector_->Ack(input);
    return;
  }
  std::string word = ValueAsLine(*value);
  int64_t count = ++counts_[word];
  if (emit_every_tuple_) {
    collector_->Emit(input, {api::Value(word), api::Value(count)});
  } else {
    changed_.insert(std::move(word));
  }
  collector_->Ack(input);
}

void WordCountBolt::Cleanup() {
  std::vector<std::pair<std::string, int64_t>> top(counts_.begin(), counts_.end());
  size_t n = std::min<size_t>(top.size(), 10);
  std::partial_sort(top.begin(), top.begin() + n, top.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::string shown;
  for (size_t i = 0; i < n; ++i)
    absl::StrAppend(&shown, i ? ", " : "", top[i].first, "=", top[i].second);
  spdlog::info("WordCountBolt {}: {} distinct words; top: {}", component_, counts_.size(), shown);
}

int64_t WordCountBolt::CountOf(const std::string& word) const {
  auto it = counts_.find(word);
  return it == counts_.end() ? 0 : it->second;
}

void WordCountBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  declarer.Declare(api::Fields({"word", "count"}));
}

}  // namespace tempest::bolts
