#ifndef TEMPEST_COMMON_CORE_FLUX_FILE_PARSER_H_
#define TEMPEST_COMMON_CORE_FLUX_FILE_PARSER_H_

// YAML -> the Flux raw model for one file. Internal to FluxLoader; pure;
// any thread.

#include <optional>
#include <string>

#include "common/core/flux/flux_raw_model.h"

namespace tempest::core::flux_internal {

// Parses one file's (already substituted) text: YAML syntax, then every
// Flux key, each problem recorded in `diag` as "path:line: message".
// nullopt when the text is not YAML at all (the error is recorded); never
// throws.
std::optional<RawFile> ParseFluxFile(const std::string& text, const std::string& path,
                                     Diagnostics& diag);

}  // namespace tempest::core::flux_internal

#endif  // TEMPEST_COMMON_CORE_FLUX_FILE_PARSER_H_
