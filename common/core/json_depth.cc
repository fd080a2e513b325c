#include "common/core/json_depth.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace tempest::core {

namespace {

// Scans `text`; stops at the first byte where the depth exceeds `limit`.
// Returns the deepest level seen and sets `*stop` to that byte's offset
// (text.size() if the limit was never passed).
int Scan(std::string_view text, int limit, size_t* stop) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (depth > limit) {
        *stop = i;
        return deepest;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  *stop = text.size();
  return deepest;
}

}  // namespace

int JsonNestingDepth(std::string_view text) {
  size_t stop = 0;
  return Scan(text, std::numeric_limits<int>::max(), &stop);
}

absl::Status CheckJsonDepth(std::string_view text, int max_depth) {
  size_t stop = 0;
  if (Scan(text, max_depth, &stop) > max_depth) {
    return absl::InvalidArgumentError(absl::StrCat("JSON nested deeper than ", max_depth,
                                                   " levels at byte ", stop));
  }
  return absl::OkStatus();
}

}  // namespace tempest::core
