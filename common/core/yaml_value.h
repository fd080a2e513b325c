#ifndef TEMPEST_COMMON_CORE_YAML_VALUE_H_
#define TEMPEST_COMMON_CORE_YAML_VALUE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/api/value.h"
#include "yaml-cpp/yaml.h"

namespace tempest::core {

// Converts parsed YAML to Values with the scalar typing Storm's SnakeYAML
// (YAML 1.1) applies to plain scalars: null/~/empty -> nil;
// true/false/yes/no/on/off (three casings) -> bool; decimal or 0x ints with
// optional sign and '_' -> int; decimals/exponents/.inf/.nan -> double;
// anything else, and every quoted scalar, -> string. Explicit !!str, !!int,
// !!float, !!bool, !!null tags are honoured. Pure functions; any thread;
// never throws (yaml-cpp errors become InvalidArgument naming the line).
absl::StatusOr<api::Value> YamlToValue(const YAML::Node& node);
// The Value of a plain (unquoted) scalar's text.
api::Value ResolvePlainScalar(std::string_view text);
// Parses one YAML document (e.g. the right side of `-c key=value`) into a
// Value; an empty document is nil.
absl::StatusOr<api::Value> ParseYamlValue(std::string_view text);
// "line N" of a node (1-based), 0 if unknown.
int YamlLine(const YAML::Node& node);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_YAML_VALUE_H_
