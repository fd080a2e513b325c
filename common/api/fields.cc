#include "common/api/fields.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tempest::api {

Fields::Fields(std::initializer_list<std::string_view> names) {
  names_.reserve(names.size());
  for (std::string_view n : names) names_.emplace_back(n);
}

Fields::Fields(std::vector<std::string> names) : names_(std::move(names)) {}

std::optional<int> Fields::IndexOf(std::string_view name) const {
  // Streams have a handful of fields: a linear scan beats hashing.
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<int>> Fields::Select(const std::vector<std::string>& selected) const {
  std::vector<int> out;
  out.reserve(selected.size());
  for (const std::string& name : selected) {
    std::optional<int> i = IndexOf(name);
    if (!i) {
      return absl::NotFoundError(absl::StrCat("field '", name, "' is not in ", DebugString()));
    }
    out.push_back(*i);
  }
  return out;
}

bool Fields::HasDuplicates() const {
  std::set<std::string_view> seen;
  for (const std::string& n : names_) {
    if (!seen.insert(n).second) return true;
  }
  return false;
}

std::string Fields::DebugString() const {
  return absl::StrCat("[", absl::StrJoin(names_, ", "), "]");
}

}  // namespace tempest::api
