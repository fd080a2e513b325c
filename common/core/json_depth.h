#ifndef TEMPEST_COMMON_CORE_JSON_DEPTH_H_
#define TEMPEST_COMMON_CORE_JSON_DEPTH_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace tempest::core {

// Nesting accepted in JSON that comes from outside the process (REST bodies,
// multilang messages): deep enough for any real document, shallow enough
// that recursive parsers and serializers stay far from the stack limit.
inline constexpr int kMaxJsonDepth = 64;

// How deep the arrays and objects of `text` nest, found by one pass with
// constant memory and no recursion (brackets inside strings, and escaped
// quotes, are skipped). Call it before handing untrusted text to a recursive
// parser: `CheckJsonDepth` fails with InvalidArgument ("JSON nested deeper
// than 64 levels at byte 1234") as soon as the limit is passed, without
// reading further. It does not validate the JSON otherwise.
//
// Pure functions; any thread.
int JsonNestingDepth(std::string_view text);
absl::Status CheckJsonDepth(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_JSON_DEPTH_H_
