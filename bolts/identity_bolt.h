#ifndef TEMPEST_BOLTS_IDENTITY_BOLT_H_
#define TEMPEST_BOLTS_IDENTITY_BOLT_H_

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

namespace tempest::bolts {

// Settings of an IdentityBolt (Flux properties; constructorArgs: failFraction).
struct IdentityBoltOptions {
  std::vector<std::string> fields = {"seq", "key", "payload"};  // declared output fields
  double fail_fraction = 0;                                     // in [0, 1]
  uint64_t seed = 1;
  int64_t delay_micros = 0;
  // Inputs whose `fail_field` value, as text, is one of these always fail.
  std::vector<std::string> fail_values;
  std::string fail_field;  // one of `fields`; empty: the first
  // Non-empty: the faults above (fail_fraction, fail_values, delay_micros)
  // apply only while this file exists.
  std::string fault_switch_file;

  static absl::StatusOr<IdentityBoltOptions> FromArgs(const api::ComponentArgs& args);
};

// `tempest.IdentityBolt`: re-emits each input's values unchanged on the
// default stream, anchored to the input, then acks it. It declares `fields`
// as its output, so they must match what its input carries. For fault
// injection it fails a `failFraction` share of inputs (without emitting):
// every delivery draws anew from a PRNG seeded by `seed` (and the task
// index, so parallel tasks draw differently), hence a replayed tuple can
// pass. `failValues` (a list, or a comma-separated string) fails every
// delivery of an input whose `failField` value (default: the first of
// `fields`), as text, is listed: a tuple that never succeeds, for retry
// limits and dead-letter topics. `delayMicros` sleeps that long per input
// (a slow bolt). An input whose value count differs from `fields` is failed
// and reported (with or without faults: that is a wiring mistake).
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
  // How long a stat() of `fault_switch_file` is trusted.
  static constexpr std::chrono::milliseconds kFaultSwitchRecheck{100};

  static absl::StatusOr<std::unique_ptr<IdentityBolt>> Create(const api::ComponentArgs& args);
  static absl::StatusOr<std::unique_ptr<IdentityBolt>> Create(const api::ComponentArgs& args,
                                                              const core::Clock& clock);
  explicit IdentityBolt(IdentityBoltOptions options)
      : IdentityBolt(std::move(options), core::RealClock()) {}
  IdentityBolt(IdentityBoltOptions options, const core::Clock& clock)
      : options_(std::move(options)), clock_(clock) {}

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
  int fail_field_index_ = 0;  // of options_.fail_field in options_.fields
  std::set<std::string> fail_values_;
  int64_t injected_failures_ = 0;
  int64_t mismatches_reported_ = 0;

  std::optional<core::Clock::TimePoint> switch_checked_at_;  // unset: never checked
  bool switch_on_ = false;
  int64_t fault_switch_checks_ = 0;
  bool switch_error_reported_ = false;
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_IDENTITY_BOLT_H_
