#include "spout/test_word_spout.h"

#include <array>
#include <chrono>
#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"

namespace tempest::spout {
namespace {

// The names Storm's TestWordSpout picks from.
constexpr std::array<std::string_view, 5> kWords = {"nathan", "mike", "jackson", "golda",
                                                    "bertels"};

// Storm's constructor takes one optional boolean; anything else is a typo.
absl::Status CheckConstructorArgs(const api::ComponentArgs& args) {
  if (args.constructor_args.empty()) return absl::OkStatus();
  if (args.constructor_args.size() == 1 && args.constructor_args[0].is_bool()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      args.class_name, " takes at most one constructor argument (isDistributed: a boolean)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<TestWordSpout>> TestWordSpout::Create(
    const api::ComponentArgs& args) {
  return Create(args, core::RealClock());
}

absl::StatusOr<std::unique_ptr<TestWordSpout>> TestWordSpout::Create(
    const api::ComponentArgs& args, const core::Clock& clock) {
  RETURN_IF_ERROR(CheckConstructorArgs(args));
  ASSIGN_OR_RETURN(const double rate, args.DoubleProperty("rate", 10.0));
  ASSIGN_OR_RETURN(const int64_t count, args.IntProperty("count", -1));
  if (!std::isfinite(rate) || rate < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        args.class_name, " property 'rate' must be >= 0 words/s (0 = unlimited); got ", rate));
  }
  if (count < -1) {
    return absl::InvalidArgumentError(absl::StrCat(
        args.class_name, " property 'count' must be >= 0, or -1 for forever; got ", count));
  }
  return std::make_unique<TestWordSpout>(rate, count, clock);
}

absl::Status TestWordSpout::Open(const api::Config& config, const api::TopologyContext& context,
                                 api::SpoutOutputCollector& collector) {
  (void)config;
  collector_ = &collector;
  start_ = clock_.Now();
  random_.seed(static_cast<uint64_t>(context.ThisTaskId().value()) * 0x9E3779B97F4A7C15ULL ^
               static_cast<uint64_t>(start_.time_since_epoch().count()));
  return absl::OkStatus();
}

void TestWordSpout::NextTuple() {
  if (IsExhausted()) return;
  if (rate_ > 0) {
    const double elapsed_s =
        std::chrono::duration<double>(clock_.Now() - start_).count();
    // Words due by now; the first one is due at once.
    if (static_cast<double>(emitted_) > elapsed_s * rate_) return;
  }
  const std::string_view word = kWords[random_() % kWords.size()];
  collector_->Emit(api::Values{api::Value(std::string(word))});
  ++emitted_;
}

void TestWordSpout::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  declarer.Declare(api::Fields({"word"}));
}

}  // namespace tempest::spout
