#include "bolts/bolt_args.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/api/string_view_compat.h"

namespace tempest::bolts {

absl::StatusOr<api::ComponentArgs> WithPositionalArgs(
    const api::ComponentArgs& args, std::initializer_list<std::string_view> names) {
  return args.WithPositionalArgs(names);
}

absl::StatusOr<std::vector<std::string>> StringListProperty(
    const api::ComponentArgs& args, std::string_view name,
    const std::vector<std::string>& default_value) {
  const api::Value* v = args.Property(name);
  if (v == nullptr || v->is_nil()) return default_value;
  std::vector<std::string> out;
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(args.class_name, " property '", api::Sv(name),
                                                   "': ", api::Sv(why), "; got ",
                                                   v->DebugString()));
  };
  if (const api::ValueList* list = v->TryList()) {
    for (const api::Value& item : *list) {
      absl::StatusOr<std::string> s = item.CoerceString();
      if (!s.ok() || s->empty()) return bad("expected a list of non-empty names");
      out.push_back(*std::move(s));
    }
  } else if (const std::string* s = v->TryString()) {
    for (absl::string_view part : absl::StrSplit(*s, ',')) {
      absl::string_view trimmed = absl::StripAsciiWhitespace(part);
      if (trimmed.empty()) return bad("expected comma-separated non-empty names");
      out.emplace_back(trimmed);
    }
  } else {
    return bad("expected a list of names");
  }
  if (out.empty()) return bad("expected at least one name");
  return out;
}

std::string ExpandTaskPlaceholder(std::string_view path, api::TaskId task) {
  return absl::StrReplaceAll(api::Sv(path), {{"{task}", absl::StrCat(task.value())}});
}

std::string ValueAsLine(const api::Value& value) {
  absl::StatusOr<std::string> s = value.CoerceString();
  std::string line = s.ok() ? *std::move(s) : value.DebugString();
  std::replace(line.begin(), line.end(), '\n', ' ');
  std::replace(line.begin(), line.end(), '\r', ' ');
  return line;
}

}  // namespace tempest::bolts
