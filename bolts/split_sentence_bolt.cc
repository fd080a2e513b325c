#include "bolts/split_sentence_bolt.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bolts/bolt_args.h"
#include "common/core/status_macros.h"

namespace tempest::bolts {

absl::StatusOr<std::unique_ptr<SplitSentenceBolt>> SplitSentenceBolt::Create(
    const api::ComponentArgs& raw) {
  ASSIGN_OR_RETURN(api::ComponentArgs args, WithPositionalArgs(raw, {}));
  ASSIGN_OR_RETURN(std::string field, args.StringProperty("field", "line"));
  ASSIGN_OR_RETURN(bool lowercase, args.BoolProperty("lowercase", false));
  if (field.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(raw.class_name, " property 'field' must not be empty"));
  }
  return std::make_unique<SplitSentenceBolt>(std::move(field), lowercase);
}

absl::Status SplitSentenceBolt::Execute(const api::Tuple& input,
                                        api::BasicOutputCollector& collector) {
  if (input.IsTick() || input.size() == 0) return absl::OkStatus();
  const api::Value* value = input.Find(field_);
  if (value == nullptr) value = &input.Get(0);
  const std::string* text = value->TryString();
  if (text == nullptr) text = value->TryBytes();
  if (text == nullptr) {
    collector.ReportError(absl::InvalidArgumentError(
        absl::StrCat("SplitSentenceBolt: not text: ", input.DebugString())));
    return absl::OkStatus();
  }
  for (absl::string_view word :
       absl::StrSplit(*text, absl::ByAnyChar(" \t\r\n\f\v"), absl::SkipEmpty())) {
    std::string w(word);
    if (lowercase_) absl::AsciiStrToLower(&w);
    collector.Emit({api::Value(std::move(w))});
  }
  return absl::OkStatus();
}

void SplitSentenceBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  declarer.Declare(api::Fields({"word"}));
}

}  // namespace tempest::bolts
