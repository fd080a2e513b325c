#ifndef TEMPEST_COMMON_CORE_TOPOLOGY_VALIDATOR_H_
#define TEMPEST_COMMON_CORE_TOPOLOGY_VALIDATOR_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/core/topology/topology_def.h"

namespace tempest::core {

// Everything validation found: the declared streams of each component it
// could instantiate, every error, and non-fatal warnings.
struct ValidationReport {
  ComponentStreams streams;
  std::vector<std::string> errors;  // each "file:line: message"
  std::vector<std::string> warnings;
  // Range-checked config values that are still a Flux `${...}` placeholder
  // (the file was loaded without --filter/--env-filter); also in `errors`.
  // `migrate check` reports them as warnings: their value exists only once
  // substituted.
  std::vector<std::string> unsubstituted;

  bool ok() const { return errors.empty(); }
  // OK, or InvalidArgument with one error per line.
  absl::Status ToStatus() const;
};

// Checks a TopologyDef against a component registry and reports every
// problem at once: missing name or spouts, empty/duplicate/reserved ids,
// bad parallelism or numTasks, unknown or wrong-kind classes, components
// whose construction fails, streams from/to unknown components or into a
// spout, undeclared streams, unknown grouping fields, direct grouping on a
// non-direct stream (and the reverse), unknown custom grouping classes, and
// bad values of the core topology.* config keys. It resolves pass-through
// streams (OutputFieldsDeclarer::DeclarePassThrough: fields follow the
// component's input) and checks what each bolt requires of its inputs
// (RequireInputFields / RequireInputWidth) against the streams it consumes.
//
// To learn declared streams it constructs one instance of each spout/bolt
// through the registry and calls DeclareOutputFields (so constructors must
// have no side effects). Holds only a reference to the registry; stateless
// otherwise; any thread.
//
//   TopologyValidator validator(api::ComponentRegistry::Global());
//   absl::StatusOr<ComponentStreams> streams = validator.Validate(def);
class TopologyValidator {
 public:
  explicit TopologyValidator(const api::ComponentRegistry& registry) : registry_(registry) {}

  ValidationReport Check(const TopologyDef& def) const;
  // Check(def) as a status; on success the declared streams.
  absl::StatusOr<ComponentStreams> Validate(const TopologyDef& def) const;

 private:
  const api::ComponentRegistry& registry_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_TOPOLOGY_VALIDATOR_H_
