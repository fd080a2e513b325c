#include "bolts/identity_bolt.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bolts/bolt_args.h"
#include "common/core/status_macros.h"

namespace tempest::bolts {

absl::StatusOr<IdentityBoltOptions> IdentityBoltOptions::FromArgs(const api::ComponentArgs& raw) {
  ASSIGN_OR_RETURN(api::ComponentArgs args, WithPositionalArgs(raw, {"failFraction"}));
  IdentityBoltOptions o;
  const std::string& cls = raw.class_name;
  ASSIGN_OR_RETURN(std::vector<std::string> fields, StringListProperty(args, "fields", o.fields));
  ASSIGN_OR_RETURN(double fraction, args.DoubleProperty("failFraction", o.fail_fraction));
  ASSIGN_OR_RETURN(int64_t seed, args.IntProperty("seed", static_cast<int64_t>(o.seed)));
  ASSIGN_OR_RETURN(int64_t delay, args.IntProperty("delayMicros", o.delay_micros));
  ASSIGN_OR_RETURN(std::vector<std::string> fail_values,
                   StringListProperty(args, "failValues", {}));
  ASSIGN_OR_RETURN(std::string fail_field,
                   args.StringProperty("failField", fields.empty() ? "" : fields[0]));
  // Not StringProperty: it would turn a number or a boolean into a file name,
  // and a study whose switch file can never exist would silently run without
  // faults.
  if (const api::Value* sw = args.Property("faultSwitchFile"); sw != nullptr && !sw->is_nil()) {
    if (!sw->is_string()) {
      return absl::InvalidArgumentError(absl::StrCat(
          cls, " property 'faultSwitchFile' must be a string (a file path); got ",
          sw->DebugString()));
    }
    o.fault_switch_file = sw->AsString();
  }
  if (!std::isfinite(fraction) || fraction < 0 || fraction > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'failFraction' must be in [0, 1]; got ", fraction));
  }
  // Above 10 s per tuple every tuple would time out: surely a unit mistake.
  if (delay < 0 || delay > 10'000'000) {
    return absl::InvalidArgumentError(
        absl::StrCat(cls, " property 'delayMicros' must be in [0, 10000000] (10 s); got ", delay));
  }
  if (api::Fields(fields).HasDuplicates()) {
    return absl::InvalidArgumentError(absl::StrCat(cls, " property 'fields' has duplicates"));
  }
  if (!fields.empty() && std::find(fields.begin(), fields.end(), fail_field) == fields.end()) {
    return absl::InvalidArgumentError(absl::StrCat(cls,
                                                   " property 'failField' must be one of "
                                                   "'fields'; got '",
                                                   fail_field, "'"));
  }
  o.fields = std::move(fields);
  o.fail_values = std::move(fail_values);
  o.fail_field = std::move(fail_field);
  o.fail_fraction = fraction;
  o.seed = static_cast<uint64_t>(seed);
  o.delay_micros = delay;
  return o;
}

absl::StatusOr<std::unique_ptr<IdentityBolt>> IdentityBolt::Create(const api::ComponentArgs& args) {
  return Create(args, core::RealClock());
}

absl::StatusOr<std::unique_ptr<IdentityBolt>> IdentityBolt::Create(const api::ComponentArgs& args,
                                                                   const core::Clock& clock) {
  TEMPEST_ASSIGN_OR_RETURN(IdentityBoltOptions options, IdentityBoltOptions::FromArgs(args));
  return std::make_unique<IdentityBolt>(std::move(options), clock);
}

absl::Status IdentityBolt::Prepare(const api::Config& config, const api::TopologyContext& context,
                                   api::OutputCollector& collector) {
  (void)config;
  collector_ = &collector;
  std::seed_seq seq{static_cast<uint32_t>(options_.seed),
                    static_cast<uint32_t>(options_.seed >> 32),
                    static_cast<uint32_t>(context.ThisTaskIndex())};
  rng_.seed(seq);
  if (options_.fail_field.empty()) {
    fail_field_index_ = 0;
  } else if (options_.fields.empty()) {
    fail_field_index_ = -1;  // pass-through: the input's schema decides
  } else {
    fail_field_index_ = static_cast<int>(
        std::find(options_.fields.begin(), options_.fields.end(), options_.fail_field) -
        options_.fields.begin());
  }
  fail_values_ = {options_.fail_values.begin(), options_.fail_values.end()};
  faults_configured_ = options_.delay_micros > 0 || !fail_values_.empty() ||
                       options_.fail_fraction > 0;
  return absl::OkStatus();
}

bool IdentityBolt::FaultsOn() {
  if (options_.fault_switch_file.empty()) return true;
  const core::Clock::TimePoint now = clock_.Now();
  if (switch_checked_at_.has_value() && now - *switch_checked_at_ < kFaultSwitchRecheck) {
    return switch_on_;
  }
  switch_checked_at_ = now;
  ++fault_switch_checks_;
  struct stat st;
  if (::stat(options_.fault_switch_file.c_str(), &st) == 0) {
    switch_on_ = true;
    return true;
  }
  // Absent is the normal "off". Any other failure (say EACCES) also means off,
  // the harmless side, but is reported once: the study would otherwise never
  // see its faults and not know why.
  const int err = errno;
  if (err != ENOENT && err != ENOTDIR && !switch_error_reported_) {
    switch_error_reported_ = true;
    collector_->ReportError(absl::FailedPreconditionError(
        absl::StrCat("IdentityBolt cannot stat faultSwitchFile '", options_.fault_switch_file,
                     "': ", std::strerror(err), "; faults stay off")));
  }
  switch_on_ = false;
  return false;
}

bool IdentityBolt::InjectFault(const api::Tuple& input) {
  if (options_.delay_micros > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(options_.delay_micros));
  }
  const api::Value* checked =
      fail_field_index_ < 0 ? input.Find(options_.fail_field)
      : fail_field_index_ < input.size() ? &input.values()[fail_field_index_]
                                          : nullptr;
  if (!fail_values_.empty() && checked != nullptr && fail_values_.contains(ValueAsLine(*checked))) {
    ++injected_failures_;
    collector_->Fail(input);
    return true;
  }
  if (options_.fail_fraction > 0) {
    // 53 random bits -> uniform in [0, 1); a draw per delivery.
    double draw = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
    if (draw < options_.fail_fraction) {
      ++injected_failures_;
      collector_->Fail(input);
      return true;
    }
  }
  return false;
}

void IdentityBolt::Execute(const api::Tuple& input) {
  if (input.IsTick()) {
    collector_->Ack(input);
    return;
  }
  if (faults_configured_ && FaultsOn() && InjectFault(input)) return;
  if (!options_.fields.empty() && input.size() != static_cast<int>(options_.fields.size())) {
    ++mismatches_;
    uint64_t held = 0;
    if (mismatch_log_.Allow(&held)) {
      collector_->ReportError(absl::InvalidArgumentError(absl::StrCat(
          "IdentityBolt declares ", options_.fields.size(), " fields but got ", input.size(),
          " values in ", input.DebugString(), " (", held + 1,
          " such inputs failed since the last report, ", mismatches_,
          " in all); set its 'fields' property to match, or remove it to pass the input's "
          "fields through")));
    }
    collector_->Fail(input);
    return;
  }
  collector_->Emit(input, input.values());
  collector_->Ack(input);
}

void IdentityBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  if (options_.fields.empty()) {
    declarer.DeclarePassThrough();
    return;
  }
  declarer.Declare(api::Fields(options_.fields));
  declarer.RequireInputWidth(static_cast<int>(options_.fields.size()),
                             "set its 'fields' property to match, or remove it to pass the "
                             "input's fields through");
}

}  // namespace tempest::bolts
