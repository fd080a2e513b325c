#ifndef TEMPEST_BOLTS_TEST_WORD_COUNTER_BOLT_H_
#define TEMPEST_BOLTS_TEST_WORD_COUNTER_BOLT_H_

#include <array>
#include <string_view>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/api/basic_bolt.h"
#include "common/api/component_registry.h"

namespace tempest::bolts {

// `org.apache.storm.testing.TestWordCounter`, implemented natively so Storm's
// example Flux files run unchanged: counts the first value of each input (by
// position, whatever the field is called, as Storm's does) and emits
// (word, count) anchored to the input, then acks it (a BasicBolt). A first
// value that is not a string is counted by its text form. Counts live in
// memory and are lost on restart, as in Storm. Ticks are ignored. Lives on
// its bolt executor thread.
class TestWordCounterBolt final : public api::BasicBolt {
 public:
  // It takes no Flux properties; any is rejected (CheckKnownProperties).
  static constexpr std::array<std::string_view, 0> kPropertyNames{};
  static absl::StatusOr<std::unique_ptr<TestWordCounterBolt>> Create(
      const api::ComponentArgs& args);

  absl::Status Execute(const api::Tuple& input, api::BasicOutputCollector& collector) override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  // 0 for unseen words.
  int64_t CountOf(const std::string& word) const;

 private:
  absl::flat_hash_map<std::string, int64_t> counts_;
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_TEST_WORD_COUNTER_BOLT_H_
