#include "common/core/yaml_value.h"
#include "common/core/status_macros.h"
#include "common/core/yaml_checks.h"

#include <cmath>
#include <exception>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace tempest::core {
namespace {

bool IsNullText(std::string_view t) {
  return t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL";
}

std::optional<bool> BoolText(std::string_view t) {
  for (std::string_view s : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}) {
    if (t == s) return true;
  }
  for (std::string_view s : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}) {
    if (t == s) return false;
  }
  return std::nullopt;
}

std::optional<int64_t> IntText(std::string_view t) {
  std::string s = absl::StrReplaceAll(std::string(t), {{"_", ""}});
  if (s.empty()) return std::nullopt;
  bool neg = false;
  std::string_view body = s;
  if (body[0] == '+' || body[0] == '-') {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body.empty()) return std::nullopt;
  uint64_t magnitude = 0;
  if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    for (char c : body.substr(2)) {
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return std::nullopt;
      }
      if (magnitude > (std::numeric_limits<uint64_t>::max() >> 4)) return std::nullopt;
      magnitude = magnitude * 16 + d;
    }
  } else {
    for (char c : body) {
      if (c < '0' || c > '9') return std::nullopt;
      if (magnitude > (std::numeric_limits<uint64_t>::max() - 9) / 10) return std::nullopt;
      magnitude = magnitude * 10 + (c - '0');
    }
  }
  if (neg) {
    if (magnitude > uint64_t{1} << 63) return std::nullopt;
    return static_cast<int64_t>(0 - magnitude);
  }
  if (magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

std::optional<double> DoubleText(std::string_view t) {
  if (t == ".inf" || t == ".Inf" || t == ".INF" || t == "+.inf" || t == "+.Inf" || t == "+.INF") {
    return std::numeric_limits<double>::infinity();
  }
  if (t == "-.inf" || t == "-.Inf" || t == "-.INF") return -std::numeric_limits<double>::infinity();
  if (t == ".nan" || t == ".NaN" || t == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  std::string s = absl::StrReplaceAll(std::string(t), {{"_", ""}});
  // Must look like a YAML float: digits with a '.' or an exponent.
  bool has_digit = false, has_mark = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      has_digit = true;
    } else if (c == '.' || c == 'e' || c == 'E') {
      has_mark = true;
    } else if (c != '+' && c != '-') {
      return std::nullopt;
    }
  }
  if (!has_digit || !has_mark) return std::nullopt;
  double d;
  if (!absl::SimpleAtod(s, &d)) return std::nullopt;
  return d;
}

absl::StatusOr<api::Value> Convert(const YAML::Node& node, int depth) {
  if (depth > 64) return absl::InvalidArgumentError("YAML nested too deeply");
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return api::Value();
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      const std::string& tag = node.Tag();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return api::Value(text);
      if (tag == "tag:yaml.org,2002:int") {
        if (std::optional<int64_t> i = IntText(text)) return api::Value(*i);
        return absl::InvalidArgumentError(
            absl::StrCat("line ", YamlLine(node), ": '", text, "' is not an integer"));
      }
      if (tag == "tag:yaml.org,2002:float") {
        if (std::optional<double> d = DoubleText(text)) return api::Value(*d);
        if (std::optional<int64_t> i = IntText(text)) return api::Value(static_cast<double>(*i));
        return absl::InvalidArgumentError(
            absl::StrCat("line ", YamlLine(node), ": '", text, "' is not a number"));
      }
      if (tag == "tag:yaml.org,2002:bool") {
        if (std::optional<bool> b = BoolText(text)) return api::Value(*b);
        return absl::InvalidArgumentError(
            absl::StrCat("line ", YamlLine(node), ": '", text, "' is not a boolean"));
      }
      if (tag == "tag:yaml.org,2002:null") return api::Value();
      return ResolvePlainScalar(text);
    }
    case YAML::NodeType::Sequence: {
      api::ValueList list;
      list.reserve(node.size());
      for (const YAML::Node& e : node) {
        TEMPEST_ASSIGN_OR_RETURN(api::Value v, Convert(e, depth + 1));
        list.push_back(std::move(v));
      }
      return api::Value(std::move(list));
    }
    case YAML::NodeType::Map: {
      api::ValueMap map;
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) {
          return absl::InvalidArgumentError(
              absl::StrCat("line ", YamlLine(kv.first), ": map keys must be scalars"));
        }
        TEMPEST_ASSIGN_OR_RETURN(api::Value v, Convert(kv.second, depth + 1));
        map[kv.first.Scalar()] = std::move(v);
      }
      return api::Value(std::move(map));
    }
  }
  return api::Value();
}

}  // namespace

int YamlLine(const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  return m.is_null() ? 0 : m.line + 1;
}

api::Value ResolvePlainScalar(std::string_view text) {
  if (IsNullText(text)) return api::Value();
  if (std::optional<bool> b = BoolText(text)) return api::Value(*b);
  if (std::optional<int64_t> i = IntText(text)) return api::Value(*i);
  if (std::optional<double> d = DoubleText(text)) return api::Value(*d);
  return api::Value(text);
}

absl::StatusOr<api::Value> YamlToValue(const YAML::Node& node) {
  try {
    return Convert(node, 0);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("bad YAML value: ", e.what()));
  }
}

absl::StatusOr<api::Value> ParseYamlValue(std::string_view text) {
  try {
    TEMPEST_ASSIGN_OR_RETURN(YAML::Node node, LoadCheckedYaml(text, ""));
    return Convert(node, 0);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("YAML error: ", e.what()));
  }
}

}  // namespace tempest::core
