#ifndef TEMPEST_BOLTS_IDENTITY_BOLT_H_
#define TEMPEST_BOLTS_IDENTITY_BOLT_H_

#include <string_view>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/bolt.h"
#include "common/api/component_registry.h"
#include "common/core/clock.h"
#include "common/core/rate_limited_log.h"

namespace tempest::bolts {

// Settings of an IdentityBolt (Flux properties; constructorArgs: failFraction).
struct IdentityBoltOptions {
  // Declared output fields. Empty (the default): pass the input's fields
  // through, whatever stream it consumes.
  std::vector<std::string> fields;
  double fail_fraction = 0;                                     // in [0, 1]
  uint64_t seed = 1;
  int64_t delay_micros = 0;
  // Inputs whose `fail_field` value, as text, is one of these always fail.
  std::vector<std::string> fail_values;
  std::string fail_field;  // a field of the input (of `fields` when set); empty: the first value
  // Non-empty: the faults above (fail_fraction, fail_values, delay_micros)
  // apply only while this file exists.
  std::string fault_switch_file;

  static absl::StatusOr<IdentityBoltOptions> FromArgs(const api::ComponentArgs& args);
};

// `tempest.IdentityBolt`: re-emits each input's values unchanged on the
// default stream, anchored to the input, then acks it. By default its output
// carries its input's fields (a pass-through declaration the validator
// resolves from the stream it consumes). With `fields` set it renames them:
// then every input stream must carry exactly that many fields, which the
// validator checks before the topology runs. For fault
// injection it fails a `failFraction` share of inputs (without emitting):
// every delivery draws anew from a PRNG seeded by `seed` (and the task
// index, so parallel tasks draw differently), hence a replayed tuple can
// pass. `failValues` (a list, or a comma-separated string) fails every
// delivery of an input whose `failField` value (default: its first value),
// as text, is listed: a tuple that never succeeds, for retry limits and
// dead-letter topics. `delayMicros` sleeps that long per input (a slow
// bolt). With `fields` set, an input whose value count differs is failed
// and reported, rate-limited (the validator rejects such wiring up front;
// this guards components with undeclared schemas).
//
// `faultSwitchFile` turns those faults on and off from outside a running
// cluster (a fault-injection study creates and removes the file; workers are
// separate processes on one machine): while the file is absent every input
// passes at full speed. So that the check costs no syscall per tuple, the
// answer of stat() is cached for kFaultSwitchRecheck of `clock` time; a
// switch therefore takes effect within that interval.
//
// Owns its PRNG; borrows `clock`, which must outlive it. Lives on its bolt
// executor thread. Tick tuples are acked and otherwise ignored.
class IdentityBolt final : public api::Bolt {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"fields", "failFraction", "seed", "failValues", "failField", "delayMicros", "faultSwitchFile"};
  // How long a stat() of `fault_switch_file` is trusted.
  static constexpr std::chrono::milliseconds kFaultSwitchRecheck{100};
  // At most one report of inputs that do not match `fields` per interval.
  static constexpr std::chrono::seconds kMismatchReportEvery{10};

  static absl::StatusOr<std::unique_ptr<IdentityBolt>> Create(const api::ComponentArgs& args);
  static absl::StatusOr<std::unique_ptr<IdentityBolt>> Create(const api::ComponentArgs& args,
                                                              const core::Clock& clock);
  explicit IdentityBolt(IdentityBoltOptions options)
      : IdentityBolt(std::move(options), core::RealClock()) {}
  IdentityBolt(IdentityBoltOptions options, const core::Clock& clock)
      : options_(std::move(options)),
        clock_(clock),
        mismatch_log_(1, kMismatchReportEvery, clock) {}

  absl::Status Prepare(const api::Config& config, const api::TopologyContext& context,
                       api::OutputCollector& collector) override;
  void Execute(const api::Tuple& input) override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  const IdentityBoltOptions& options() const { return options_; }
  int64_t injected_failures() const { return injected_failures_; }
  // stat() calls made on `fault_switch_file` so far.
  int64_t fault_switch_checks() const { return fault_switch_checks_; }

 private:
  // Whether the faults apply to the current input: always without a switch
  // file, else whether it existed at the last (cached) check.
  bool FaultsOn();
  // Applies delay_micros, fail_values and fail_fraction to `input`; true if
  // it failed the input.
  bool InjectFault(const api::Tuple& input);

  const IdentityBoltOptions options_;
  const core::Clock& clock_;
  api::OutputCollector* collector_ = nullptr;
  std::mt19937_64 rng_;
  // Index of options_.fail_field in options_.fields; -1: look it up by
  // name in each input (pass-through mode).
  int fail_field_index_ = 0;
  std::set<std::string> fail_values_;
  // Any of delay_micros, fail_values, fail_fraction set; without, the
  // per-input fault checks (and the switch file's) are skipped.
  bool faults_configured_ = false;
  int64_t injected_failures_ = 0;
  int64_t mismatches_ = 0;
  // Rate-limited but never silenced: a steady count says it goes on.
  core::RateLimitedLog mismatch_log_;

  std::optional<core::Clock::TimePoint> switch_checked_at_;  // unset: never checked
  bool switch_on_ = false;
  int64_t fault_switch_checks_ = 0;
  bool switch_error_reported_ = false;
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_IDENTITY_BOLT_H_
