#ifndef TEMPEST_BOLTS_WORD_COUNT_BOLT_H_
#define TEMPEST_BOLTS_WORD_COUNT_BOLT_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/api/bolt.h"
#include "common/api/component_registry.h"

namespace tempest::bolts {

// `tempest.WordCountBolt`: counts occurrences of field `field` (default
// `word`; subscribe with fields grouping on it so each word has one owner)
// and acks each input once counted. On every tick tuple it emits
// (word, count) for each word whose count changed since the last tick,
// unanchored, in word order. With `emitEvery: tuple` it instead emits the
// new count with every input, anchored to it (Storm's classic WordCount).
// Ticks come from the component's `topology.tick.tuple.freq.secs`.
//
// Owns the counts (in memory; lost on restart, like Storm's example).
// Lives on its bolt executor thread.
class WordCountBolt final : public api::Bolt {
 public:
  static absl::StatusOr<std::unique_ptr<WordCountBolt>> Create(const api::ComponentArgs& args);
  WordCountBolt(std::string field, bool emit_every_tuple)
      : field_(std::move(field)), emit_every_tuple_(emit_every_tuple) {}

  absl::Status Prepare(const api::Config& config, const api::TopologyContext& context,
                       api::OutputCollector& collector) override;
  void Execute(const api::Tuple& input) override;
  void Cleanup() override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  // 0 for unseen words.
  int64_t CountOf(const std::string& word) const;

 private:
  const std::string field_;
  const bool emit_every_tuple_;
  api::OutputCollector* collector_ = nullptr;
  std::string component_;
  absl::flat_hash_map<std::string, int64_t> counts_;
  std::set<std::string> changed_;  // since the last tick; ordered for stable output
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_WORD_COUNT_BOLT_H_
