#ifndef TEMPEST_BOLTS_WORD_COUNT_BOLT_H_
#define TEMPEST_BOLTS_WORD_COUNT_BOLT_H_

#include <string_view>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/api/bolt.h"
#include "common/api/component_registry.h"
#include "common/core/clock.h"

namespace tempest::bolts {

// `tempest.WordCountBolt`: counts occurrences of field `field` (default
// `word`; subscribe with fields grouping on it so each word has one owner)
// and acks each input once counted. On every tick tuple it emits
// (word, count) for each word whose count changed since the last tick,
// unanchored, in word order. With `emitEvery: tuple` it instead emits the
// new count with every input, anchored to it (Storm's classic WordCount).
// Without a tick frequency (the component's `topology.tick.tuple.freq.secs`,
// optional) it emits them from Poll every `emitIntervalMs` (default 1000)
// instead, so counts flow with no tick configuration.
//
// Owns the counts (in memory; lost on restart, like Storm's example);
// borrows `clock`, which must outlive it. Lives on its bolt executor thread.
class WordCountBolt final : public api::Bolt {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"field", "emitEvery", "emitIntervalMs"};
  static absl::StatusOr<std::unique_ptr<WordCountBolt>> Create(const api::ComponentArgs& args);
  static absl::StatusOr<std::unique_ptr<WordCountBolt>> Create(const api::ComponentArgs& args,
                                                               const core::Clock& clock);
  WordCountBolt(std::string field, bool emit_every_tuple, std::chrono::milliseconds emit_interval,
                const core::Clock& clock)
      : field_(std::move(field)),
        emit_every_tuple_(emit_every_tuple),
        emit_interval_(emit_interval),
        clock_(clock) {}

  absl::Status Prepare(const api::Config& config, const api::TopologyContext& context,
                       api::OutputCollector& collector) override;
  void Execute(const api::Tuple& input) override;
  void Cleanup() override;
  // Set only when counts are emitted by time rather than by ticks.
  std::optional<std::chrono::milliseconds> PollInterval() const override;
  bool Poll() override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  // 0 for unseen words.
  int64_t CountOf(const std::string& word) const;

 private:
  // Emits (word, count) for every word changed since the last emission.
  void EmitChanged();

  const std::string field_;
  const bool emit_every_tuple_;
  const std::chrono::milliseconds emit_interval_;
  const core::Clock& clock_;
  bool emit_on_poll_ = false;  // no ticks configured: Poll emits by time
  core::Clock::TimePoint last_emit_{};
  api::OutputCollector* collector_ = nullptr;
  std::string component_;
  absl::flat_hash_map<std::string, int64_t> counts_;
  std::set<std::string> changed_;  // since the last tick; ordered for stable output
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_WORD_COUNT_BOLT_H_
