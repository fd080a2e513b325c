#ifndef TEMPEST_COMMON_API_FIELDS_H_
#define TEMPEST_COMMON_API_FIELDS_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tempest::api {

// The ordered field names of a stream, with name -> index lookup. Immutable
// after construction; share freely across threads as const. Construct once
// per stream (at declaration time), never per tuple.
//
//   Fields f({"word", "count"});  f.IndexOf("count") == 1
class Fields {
 public:
  Fields() = default;
  Fields(std::initializer_list<std::string_view> names);
  explicit Fields(std::vector<std::string> names);

  int size() const { return static_cast<int>(names_.size()); }
  bool empty() const { return names_.empty(); }
  const std::string& Get(int index) const { return names_[index]; }
  const std::vector<std::string>& names() const { return names_; }

  // Index of `name`, or nullopt.
  std::optional<int> IndexOf(std::string_view name) const;
  bool Contains(std::string_view name) const { return IndexOf(name).has_value(); }
  // Indices of `selected` in this Fields' order of `selected`; NotFound names
  // the first missing field.
  absl::StatusOr<std::vector<int>> Select(const std::vector<std::string>& selected) const;
  // Duplicate names are legal to construct but invalid in a declaration.
  bool HasDuplicates() const;

  // "[a, b, c]" for messages.
  std::string DebugString() const;

  friend bool operator==(const Fields& a, const Fields& b) { return a.names_ == b.names_; }

 private:
  std::vector<std::string> names_;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_FIELDS_H_
