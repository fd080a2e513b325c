#include "common/multilang/json_codec.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"

namespace tempest::multilang {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void AppendEscapedByte(unsigned char c, std::string& out) {
  out += "\\u00";
  out += kHex[c >> 4];
  out += kHex[c & 0xf];
}

void AppendNumber(double d, std::string& out) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buf[32];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  out.append(buf, static_cast<size_t>(n));
  // Keep a double a double on the other side ("1" would read back as an int).
  if (std::string_view(buf, n).find_first_of(".eEn") == std::string_view::npos) out += ".0";
}

}  // namespace

void AppendJsonString(std::string_view text, std::string& out) {
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  size_t run_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.data() + run_start, i - run_start);
    run_start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default: AppendEscapedByte(c, out);
    }
  }
  out.append(text.data() + run_start, text.size() - run_start);
  out += '"';
}

void AppendJsonValue(const api::Value& value, std::string& out) {
  switch (value.type()) {
    case api::Value::Type::kNil:
      out += "null";
      return;
    case api::Value::Type::kBool:
      out += value.AsBool() ? "true" : "false";
      return;
    case api::Value::Type::kInt: {
      char buf[24];
      const int n = std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(value.AsInt()));
      out.append(buf, static_cast<size_t>(n));
      return;
    }
    case api::Value::Type::kDouble:
      AppendNumber(value.AsDouble(), out);
      return;
    case api::Value::Type::kString:
      AppendJsonString(value.AsString(), out);
      return;
    case api::Value::Type::kBytes: {
      out += '"';
      for (char ch : value.AsBytes()) {
        const unsigned char c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
          out += ch;
        } else if (c == '"' || c == '\\') {
          out += '\\';
          out += ch;
        } else {
          AppendEscapedByte(c, out);
        }
      }
      out += '"';
      return;
    }
    case api::Value::Type::kList:
      AppendJsonArray(value.AsList(), out);
      return;
    case api::Value::Type::kMap: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.AsMap()) {
        if (!first) out += ',';
        first = false;
        AppendJsonString(key, out);
        out += ':';
        AppendJsonValue(item, out);
      }
      out += '}';
      return;
    }
  }
}

void AppendJsonArray(const api::Values& values, std::string& out) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonValue(values[i], out);
  }
  out += ']';
}

absl::StatusOr<api::Value> JsonToValue(const nlohmann::json& json, int max_depth) {
  using Type = nlohmann::json::value_t;
  switch (json.type()) {
    case Type::null:
    case Type::discarded:
      return api::Value();
    case Type::boolean:
      return api::Value(json.get<bool>());
    case Type::number_integer:
      return api::Value(json.get<int64_t>());
    case Type::number_unsigned: {
      const uint64_t u = json.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return api::Value(static_cast<int64_t>(u));
      return api::Value(static_cast<double>(u));
    }
    case Type::number_float:
      return api::Value(json.get<double>());
    case Type::string:
      return api::Value(json.get_ref<const std::string&>());
    case Type::binary:
      return api::Value::OfBytes(std::string(json.get_binary().begin(), json.get_binary().end()));
    case Type::array:
    case Type::object:
      break;
  }
  if (max_depth <= 0) return absl::InvalidArgumentError("JSON value nested too deeply");
  if (json.is_array()) {
    api::ValueList list;
    list.reserve(json.size());
    for (const nlohmann::json& item : json) {
      TEMPEST_ASSIGN_OR_RETURN(api::Value v, JsonToValue(item, max_depth - 1));
      list.push_back(std::move(v));
    }
    return api::Value(std::move(list));
  }
  api::ValueMap map;
  for (auto it = json.begin(); it != json.end(); ++it) {
    TEMPEST_ASSIGN_OR_RETURN(api::Value v, JsonToValue(it.value(), max_depth - 1));
    map.emplace(it.key(), std::move(v));
  }
  return api::Value(std::move(map));
}

absl::StatusOr<nlohmann::json> ParseChildJson(std::string_view text, int max_depth) {
  bool too_deep = false;
  // `depth` counts the containers around the event: an object or array
  // opened at depth max_depth would hold values nested deeper than allowed.
  nlohmann::json::parser_callback_t keep = [&](int depth, nlohmann::json::parse_event_t event,
                                               nlohmann::json&) {
    if (too_deep) return false;
    if ((event == nlohmann::json::parse_event_t::object_start ||
         event == nlohmann::json::parse_event_t::array_start) &&
        depth >= max_depth) {
      too_deep = true;
      return false;
    }
    return true;
  };
  nlohmann::json parsed = nlohmann::json::parse(text, keep, /*allow_exceptions=*/false);
  if (too_deep) {
    return absl::InvalidArgumentError(
        absl::StrCat("JSON nested deeper than ", max_depth, " levels"));
  }
  if (parsed.is_discarded()) return absl::InvalidArgumentError("not valid JSON");
  return parsed;
}

nlohmann::json ValueToJson(const api::Value& value) {
  std::string text;
  AppendJsonValue(value, text);
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? nlohmann::json() : parsed;
}

}  // namespace tempest::multilang
