#include "common/api/value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"

namespace tempest::api {
namespace {

void AppendQuoted(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out->append(buf);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

std::string FormatDouble(double d) {
  if (std::isnan(d)) return ".nan";
  if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  std::string s = absl::StrCat(d);
  if (s.find_first_of(".eE") == std::string::npos) s.append(".0");
  return s;
}

void AppendDebug(std::string* out, const Value& v) {
  switch (v.type()) {
    case Value::Type::kNil:
      out->append("null");
      return;
    case Value::Type::kBool:
      out->append(v.AsBool() ? "true" : "false");
      return;
    case Value::Type::kInt:
      absl::StrAppend(out, v.AsInt());
      return;
    case Value::Type::kDouble:
      out->append(FormatDouble(v.AsDouble()));
      return;
    case Value::Type::kString:
      AppendQuoted(out, v.AsString());
      return;
    case Value::Type::kBytes:
      absl::StrAppend(out, "<", v.AsBytes().size(), " bytes>");
      return;
    case Value::Type::kList: {
      out->push_back('[');
      bool first = true;
      for (const Value& e : v.AsList()) {
        if (!first) out->append(", ");
        first = false;
        AppendDebug(out, e);
      }
      out->push_back(']');
      return;
    }
    case Value::Type::kMap: {
      out->push_back('{');
      bool first = true;
      for (const auto& [k, e] : v.AsMap()) {
        if (!first) out->append(", ");
        first = false;
        AppendQuoted(out, k);
        out->append(": ");
        AppendDebug(out, e);
      }
      out->push_back('}');
      return;
    }
  }
}

absl::Status CoerceError(const Value& v, std::string_view wanted) {
  return absl::InvalidArgumentError(absl::StrCat(
      "expected ", Sv(wanted), ", got ", Sv(Value::TypeName(v.type())), " ", v.DebugString()));
}

}  // namespace

std::string_view Value::TypeName(Type t) {
  switch (t) {
    case Type::kNil:
      return "nil";
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kDouble:
      return "double";
    case Type::kString:
      return "string";
    case Type::kBytes:
      return "bytes";
    case Type::kList:
      return "list";
    case Type::kMap:
      return "map";
  }
  return "?";
}

void Value::TypeMismatch(Type wanted) const {
  std::fprintf(stderr, "tempest::api::Value: expected %s, holds %s %s\n",
               std::string(TypeName(wanted)).c_str(), std::string(TypeName(type())).c_str(),
               DebugString().c_str());
  std::abort();
}

std::optional<bool> Value::TryBool() const {
  if (const bool* b = std::get_if<bool>(&v_)) return *b;
  return std::nullopt;
}
std::optional<int64_t> Value::TryInt() const {
  if (const int64_t* i = std::get_if<int64_t>(&v_)) return *i;
  return std::nullopt;
}
std::optional<double> Value::TryDouble() const {
  if (const double* d = std::get_if<double>(&v_)) return *d;
  return std::nullopt;
}
const std::string* Value::TryBytes() const {
  if (const Bytes* b = std::get_if<Bytes>(&v_)) return &b->data;
  return nullptr;
}
const ValueList* Value::TryList() const {
  if (const ListBox* l = std::get_if<ListBox>(&v_)) return &l->get();
  return nullptr;
}
const ValueMap* Value::TryMap() const {
  if (const MapBox* m = std::get_if<MapBox>(&v_)) return &m->get();
  return nullptr;
}
const Value* Value::Find(std::string_view key) const {
  const ValueMap* m = TryMap();
  if (m == nullptr) return nullptr;
  auto it = m->find(std::string(key));
  return it == m->end() ? nullptr : &it->second;
}

absl::StatusOr<int64_t> Value::CoerceInt() const {
  switch (type()) {
    case Type::kInt:
      return AsInt();
    case Type::kDouble: {
      double d = AsDouble();
      if (std::trunc(d) == d && std::abs(d) < 9.2e18) return static_cast<int64_t>(d);
      break;
    }
    case Type::kString: {
      int64_t i;
      if (absl::SimpleAtoi(AsString(), &i)) return i;
      break;
    }
    default:
      break;
  }
  return CoerceError(*this, "an integer");
}

absl::StatusOr<double> Value::CoerceDouble() const {
  switch (type()) {
    case Type::kInt:
      return static_cast<double>(AsInt());
    case Type::kDouble:
      return AsDouble();
    case Type::kString: {
      double d;
      if (absl::SimpleAtod(AsString(), &d)) return d;
      break;
    }
    default:
      break;
  }
  return CoerceError(*this, "a number");
}

absl::StatusOr<bool> Value::CoerceBool() const {
  if (is_bool()) return AsBool();
  if (is_string()) {
    std::string lower = absl::AsciiStrToLower(AsString());
    if (lower == "true") return true;
    if (lower == "false") return false;
  }
  return CoerceError(*this, "a boolean");
}

absl::StatusOr<std::string> Value::CoerceString() const {
  switch (type()) {
    case Type::kString:
      return AsString();
    case Type::kBytes:
      return AsBytes();
    case Type::kInt:
      return absl::StrCat(AsInt());
    case Type::kDouble:
      return FormatDouble(AsDouble());
    case Type::kBool:
      return std::string(AsBool() ? "true" : "false");
    default:
      break;
  }
  return CoerceError(*this, "a string");
}

std::string Value::DebugString() const {
  std::string out;
  AppendDebug(&out, *this);
  return out;
}

}  // namespace tempest::api
