#include "bolts/test_word_counter_bolt.h"

#include "absl/strings/str_cat.h"
#include "bolts/bolt_args.h"

namespace tempest::bolts {

absl::StatusOr<std::unique_ptr<TestWordCounterBolt>> TestWordCounterBolt::Create(
    const api::ComponentArgs& args) {
  if (!args.constructor_args.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(args.class_name, " takes no constructor arguments"));
  }
  return std::make_unique<TestWordCounterBolt>();
}

absl::Status TestWordCounterBolt::Execute(const api::Tuple& input,
                                          api::BasicOutputCollector& collector) {
  if (input.IsTick()) return absl::OkStatus();
  if (input.values().empty()) {
    return absl::InvalidArgumentError("TestWordCounter got a tuple with no values");
  }
  const api::Value& first = input.Get(0);
  std::string word = first.is_string() ? std::string(first.AsString()) : ValueAsLine(first);
  const int64_t count = ++counts_[word];
  collector.Emit({api::Value(std::move(word)), api::Value(count)});
  return absl::OkStatus();
}

void TestWordCounterBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  declarer.Declare(api::Fields({"word", "count"}));
}

int64_t TestWordCounterBolt::CountOf(const std::string& word) const {
  auto it = counts_.find(word);
  return it == counts_.end() ? 0 : it->second;
}

}  // namespace tempest::bolts
