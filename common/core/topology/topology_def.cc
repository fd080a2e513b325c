#include "common/core/topology/topology_def.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tempest::core {
namespace {

constexpr std::array<std::pair<GroupingType, std::string_view>, 9> kGroupingNames = {{
    {GroupingType::kShuffle, "SHUFFLE"},
    {GroupingType::kFields, "FIELDS"},
    {GroupingType::kAll, "ALL"},
    {GroupingType::kGlobal, "GLOBAL"},
    {GroupingType::kNone, "NONE"},
    {GroupingType::kDirect, "DIRECT"},
    {GroupingType::kLocalOrShuffle, "LOCAL_OR_SHUFFLE"},
    {GroupingType::kPartialKey, "PARTIAL_KEY"},
    {GroupingType::kCustom, "CUSTOM"},
}};

}  // namespace

std::string SourceLocation::Prefix() const {
  if (file.empty()) return line > 0 ? absl::StrCat("line ", line, ": ") : "";
  if (line <= 0) return absl::StrCat(file, ": ");
  return absl::StrCat(file, ":", line, ": ");
}

std::string_view GroupingTypeName(GroupingType type) {
  for (const auto& [t, name] : kGroupingNames) {
    if (t == type) return name;
  }
  return "?";
}

std::optional<GroupingType> ParseGroupingType(std::string_view flux_name) {
  for (const auto& [t, name] : kGroupingNames) {
    if (name == flux_name) return t;
  }
  return std::nullopt;
}

const ComponentDef* TopologyDef::FindComponent(const api::ComponentId& id) const {
  for (const ComponentDef& c : spouts) {
    if (c.id == id) return &c;
  }
  for (const ComponentDef& c : bolts) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::vector<const ComponentDef*> TopologyDef::AllComponents() const {
  std::vector<const ComponentDef*> out;
  out.reserve(spouts.size() + bolts.size());
  for (const ComponentDef& c : spouts) out.push_back(&c);
  for (const ComponentDef& c : bolts) out.push_back(&c);
  return out;
}

}  // namespace tempest::core
