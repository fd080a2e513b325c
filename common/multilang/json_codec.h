#ifndef TEMPEST_COMMON_MULTILANG_JSON_CODEC_H_
#define TEMPEST_COMMON_MULTILANG_JSON_CODEC_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/api/value.h"
#include "nlohmann/json.hpp"

namespace tempest::multilang {

// Appends `text` as a JSON string literal (quotes included). Control
// characters, quotes and backslashes are escaped; other bytes pass through,
// so valid UTF-8 stays readable to the child.
void AppendJsonString(std::string_view text, std::string& out);

// Appends `value` as JSON without building an intermediate document, so the
// per-tuple path reuses one output buffer. nil -> null; bytes -> a string in
// which every byte >= 0x80 becomes \u00XX (Latin-1), so the result is always
// valid UTF-8; non-finite doubles -> null; maps -> objects.
void AppendJsonValue(const api::Value& value, std::string& out);

// The same for a whole value list (a tuple) as a JSON array.
void AppendJsonArray(const api::Values& values, std::string& out);

// A JSON document as a tuple value: integers that fit int64 -> int,
// other numbers -> double, arrays -> lists, objects -> maps. InvalidArgument
// for documents nested deeper than `max_depth` (the child's input is never
// trusted).
absl::StatusOr<api::Value> JsonToValue(const nlohmann::json& json, int max_depth = 64);

// Parses one message of a child: InvalidArgument for text that is not JSON
// and for documents nested deeper than `max_depth`. Parsing is iterative and
// a value past the depth is dropped as it is read, so even a document nested
// 100k deep costs no recursion and no more memory than its text.
absl::StatusOr<nlohmann::json> ParseChildJson(std::string_view text, int max_depth = 64);

// A tuple value as a nlohmann document (for handshakes and spout ids, not
// the per-tuple path).
nlohmann::json ValueToJson(const api::Value& value);

}  // namespace tempest::multilang

#endif  // TEMPEST_COMMON_MULTILANG_JSON_CODEC_H_
