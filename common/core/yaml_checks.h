#ifndef TEMPEST_COMMON_CORE_YAML_CHECKS_H_
#define TEMPEST_COMMON_CORE_YAML_CHECKS_H_

#include <cstddef>
#include <string_view>

#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace tempest::core {

// Bounds every YAML document Tempest reads (Flux files, config files, -c
// values) is held to.
inline constexpr int kMaxYamlDepth = 64;
// Values the document may expand to, counting each use of an alias anew
// (so a "billion laughs" document stops here instead of filling memory).
inline constexpr size_t kMaxYamlValues = 200000;

// Parses `text` as one YAML document and checks it before anyone converts
// it: the text is UTF-8 (UTF-16 and invalid bytes are refused, with the
// line), the syntax is valid, no quoted scalar runs unclosed to the end of
// the file (yaml-cpp accepts that silently), no map has a key twice, the
// nesting is at most kMaxYamlDepth deep and the document expands to at most
// kMaxYamlValues values. Errors are InvalidArgument "FILE:LINE: message"
// ("line N: message" when `file` is empty). Never throws; the walk is
// iterative; any thread.
absl::StatusOr<YAML::Node> LoadCheckedYaml(std::string_view text, std::string_view file);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_YAML_CHECKS_H_
