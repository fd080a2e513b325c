#ifndef TEMPEST_SPOUT_TEST_WORD_SPOUT_H_
#define TEMPEST_SPOUT_TEST_WORD_SPOUT_H_

#include <string_view>
#include <cstdint>
#include <memory>
#include <random>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/spout.h"
#include "common/core/clock.h"

namespace tempest::spout {

// `org.apache.storm.testing.TestWordSpout`, implemented natively so Storm's
// example Flux files run unchanged: emits one field `word`, picked at random
// from Storm's five test names, unanchored (no message id, as in Storm).
//
// Storm's version sleeps 100 ms inside nextTuple; blocking the executor is
// not allowed here, so the same pace (10 words/s) comes from the clock
// instead. Tempest extensions: `rate` (words/s, default 10, 0 = unlimited)
// and `count` (-1 = forever, the default; otherwise the spout is finite and
// exhausted after that many words). Storm's optional constructor argument
// (isDistributed) is accepted and has no effect: parallelism comes from the
// Flux file. Lives on its spout executor thread.
class TestWordSpout final : public api::Spout {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"rate", "count"};
  static absl::StatusOr<std::unique_ptr<TestWordSpout>> Create(const api::ComponentArgs& args);
  // With an explicit clock (tests).
  static absl::StatusOr<std::unique_ptr<TestWordSpout>> Create(const api::ComponentArgs& args,
                                                               const core::Clock& clock);
  TestWordSpout(double rate, int64_t count, const core::Clock& clock)
      : rate_(rate), count_(count), clock_(clock) {}

  absl::Status Open(const api::Config& config, const api::TopologyContext& context,
                    api::SpoutOutputCollector& collector) override;
  void NextTuple() override;
  bool IsExhausted() const override { return count_ >= 0 && emitted_ >= count_; }
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  int64_t emitted() const { return emitted_; }

 private:
  const double rate_;
  const int64_t count_;
  const core::Clock& clock_;
  api::SpoutOutputCollector* collector_ = nullptr;
  core::Clock::TimePoint start_{};
  int64_t emitted_ = 0;
  std::mt19937_64 random_;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_TEST_WORD_SPOUT_H_
