#ifndef TEMPEST_BOLTS_SPLIT_SENTENCE_BOLT_H_
#define TEMPEST_BOLTS_SPLIT_SENTENCE_BOLT_H_

#include <string_view>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/api/basic_bolt.h"
#include "common/api/component_registry.h"

namespace tempest::bolts {

// `tempest.SplitSentenceBolt`: splits the text of field `field` (default
// `line`; the first field when the input has no such field) on whitespace
// and emits one tuple (word) per word, anchored to the input (a BasicBolt:
// acked when Execute returns). `lowercase: true` lower-cases words (ASCII).
// A value that is not text is reported and acked without output.
//
// Stateless apart from its options; lives on its bolt executor thread.
class SplitSentenceBolt final : public api::BasicBolt {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"field", "lowercase"};
  static absl::StatusOr<std::unique_ptr<SplitSentenceBolt>> Create(const api::ComponentArgs& args);
  SplitSentenceBolt(std::string field, bool lowercase)
      : field_(std::move(field)), lowercase_(lowercase) {}

  absl::Status Execute(const api::Tuple& input, api::BasicOutputCollector& collector) override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

 private:
  const std::string field_;
  const bool lowercase_;
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_SPLIT_SENTENCE_BOLT_H_
