#include "bolts/log_bolt.h"

#include "absl/strings/str_cat.h"
#include "bolts/bolt_args.h"
#include "common/core/status_macros.h"
#include "spdlog/spdlog.h"

namespace tempest::bolts {

absl::StatusOr<std::unique_ptr<LogBolt>> LogBolt::Create(const api::ComponentArgs& raw) {
  TEMPEST_ASSIGN_OR_RETURN(const api::ComponentArgs args, WithPositionalArgs(raw, {"prefix"}));
  TEMPEST_ASSIGN_OR_RETURN(std::string prefix, args.StringProperty("prefix", ""));
  TEMPEST_ASSIGN_OR_RETURN(const int64_t every, args.IntProperty("logEvery", 1));
  if (every < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(raw.class_name, " property 'logEvery' must be >= 1; got ", every));
  }
  return std::make_unique<LogBolt>(std::move(prefix), every);
}

absl::Status LogBolt::Execute(const api::Tuple& input, api::BasicOutputCollector& collector) {
  (void)collector;
  if (input.IsTick()) return absl::OkStatus();
  if (seen_++ % log_every_ == 0) {
    ++logged_;
    spdlog::info("{}{}", prefix_, input.DebugString());
  }
  return absl::OkStatus();
}

void LogBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const { (void)declarer; }

}  // namespace tempest::bolts
