#ifndef TEMPEST_BOLTS_LOG_BOLT_H_
#define TEMPEST_BOLTS_LOG_BOLT_H_

#include <string_view>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/api/basic_bolt.h"
#include "common/api/component_registry.h"

namespace tempest::bolts {

// `tempest.LogBolt`: logs each input at info level through spdlog (as
// "<prefix><component>:<stream> [values]") and acks it (a BasicBolt).
// `logEvery: N` logs only every N-th input, for busy streams; ticks are
// ignored. Declares no output. Counts what it saw; lives on its bolt
// executor thread.
class LogBolt final : public api::BasicBolt {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"prefix", "logEvery"};
  static absl::StatusOr<std::unique_ptr<LogBolt>> Create(const api::ComponentArgs& args);
  LogBolt(std::string prefix, int64_t log_every)
      : prefix_(std::move(prefix)), log_every_(log_every) {}

  absl::Status Execute(const api::Tuple& input, api::BasicOutputCollector& collector) override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  int64_t seen() const { return seen_; }
  int64_t logged() const { return logged_; }

 private:
  const std::string prefix_;
  const int64_t log_every_;
  int64_t seen_ = 0;
  int64_t logged_ = 0;
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_LOG_BOLT_H_
