#include "common/api/config.h"

namespace tempest::api {

const Value* Config::Find(std::string_view key) const {
  auto it = entries_.find(std::string(key));
  return it == entries_.end() ? nullptr : &it->second;
}

const Value& Config::Get(std::string_view key) const {
  static const Value* const kNil = new Value();
  const Value* v = Find(key);
  return v == nullptr ? *kNil : *v;
}

int64_t Config::GetInt(std::string_view key, int64_t default_value) const {
  return GetOptionalInt(key).value_or(default_value);
}

std::optional<int64_t> Config::GetOptionalInt(std::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr || v->is_nil()) return std::nullopt;
  absl::StatusOr<int64_t> i = v->CoerceInt();
  if (!i.ok()) return std::nullopt;
  return *i;
}

double Config::GetDouble(std::string_view key, double default_value) const {
  const Value* v = Find(key);
  if (v == nullptr || v->is_nil()) return default_value;
  return v->CoerceDouble().value_or(default_value);
}

bool Config::GetBool(std::string_view key, bool default_value) const {
  const Value* v = Find(key);
  if (v == nullptr || v->is_nil()) return default_value;
  return v->CoerceBool().value_or(default_value);
}

std::string Config::GetString(std::string_view key, std::string_view default_value) const {
  const Value* v = Find(key);
  if (v == nullptr || v->is_nil()) return std::string(default_value);
  absl::StatusOr<std::string> s = v->CoerceString();
  return s.ok() ? *s : std::string(default_value);
}

void Config::Merge(const Config& other) {
  for (const auto& [k, v] : other.entries_) entries_[k] = v;
}

}  // namespace tempest::api
