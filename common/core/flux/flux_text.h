#ifndef TEMPEST_COMMON_CORE_FLUX_TEXT_H_
#define TEMPEST_COMMON_CORE_FLUX_TEXT_H_

// The Flux loader's text steps, before any YAML: reading files, Java
// .properties parsing and `${...}` substitution. Internal to FluxLoader;
// pure apart from ReadFile and the process environment; any thread.

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/core/flux/flux_raw_model.h"

namespace tempest::core::flux_internal {

// The whole file; NotFound "path: cannot read file" if it cannot be opened.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Java .properties text as key -> value (see FluxLoader::ParseProperties).
std::map<std::string, std::string> ParsePropertiesText(std::string_view text);

// Replaces ${key} (from `props`, when not null) and ${ENV-NAME} (from `env`,
// or the process environment when `env` is null, only with `env_filter`);
// reports unresolved placeholders as errors of `file` when a filter is
// active. Lines that are YAML comments are left alone.
std::string Substitute(std::string_view text, const std::string& file,
                       const std::map<std::string, std::string>* props, bool env_filter,
                       const std::map<std::string, std::string>* env, Diagnostics& diag);

}  // namespace tempest::core::flux_internal

#endif  // TEMPEST_COMMON_CORE_FLUX_TEXT_H_
