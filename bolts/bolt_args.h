#ifndef TEMPEST_BOLTS_BOLT_ARGS_H_
#define TEMPEST_BOLTS_BOLT_ARGS_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/ids.h"

namespace tempest::bolts {

// Same as args.WithPositionalArgs(names) (see api::ComponentArgs).
absl::StatusOr<api::ComponentArgs> WithPositionalArgs(
    const api::ComponentArgs& args, std::initializer_list<std::string_view> names);

// A list-of-strings property: a YAML list (["a", "b"]) or a comma-separated
// string ("a,b"). `default_value` when absent; InvalidArgument when empty or
// not strings.
absl::StatusOr<std::vector<std::string>> StringListProperty(
    const api::ComponentArgs& args, std::string_view name,
    const std::vector<std::string>& default_value);

// Replaces every "{task}" in `path` by the task id, so bolts with
// parallelism > 1 can write one file per task.
std::string ExpandTaskPlaceholder(std::string_view path, api::TaskId task);

// A value as one line of text: strings and bytes raw, numbers and bools in
// their YAML spelling, anything else as its debug rendering. Newlines become
// spaces so the result is always exactly one line.
std::string ValueAsLine(const api::Value& value);

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_BOLT_ARGS_H_
