#include "common/core/flux/flux_includes.h"

#include <algorithm>
#include <string_view>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"

namespace tempest::core::flux_internal {
namespace {

using api::Sv;
namespace fs = std::filesystem;

const std::string& IdOf(const RawBean& b) { return b.id; }
const std::string& IdOf(const RawVertex& v) { return v.bean.id; }
const SourceLocation& LocOf(const RawBean& b) { return b.loc; }
const SourceLocation& LocOf(const RawVertex& v) { return v.bean.loc; }

// Adds one include's items: an id already brought by an earlier include is
// replaced only when this include overrides.
template <typename T>
void AddIncluded(Included<T>& acc, std::vector<T>& items, bool override_values) {
  const size_t prior = acc.size();
  for (T& item : items) {
    auto end = acc.begin() + static_cast<std::ptrdiff_t>(prior);
    auto it = std::find_if(acc.begin(), end, [&](const std::pair<T, bool>& x) {
      return !IdOf(item).empty() && IdOf(x.first) == IdOf(item);
    });
    if (it == end) {
      acc.emplace_back(std::move(item), override_values);
    } else if (override_values) {
      *it = {std::move(item), true};
    }
  }
}

// Included items first (so the including file may reference them), then the
// file's own. On an id clash an overriding include wins, else the file's own.
template <typename T>
std::vector<T> MergeWithOwn(Included<T> included, std::vector<T> own, Diagnostics& diag,
                            std::string_view what) {
  std::set<std::string> drop_included, drop_own;
  for (const T& o : own) {
    for (const auto& [inc, overrides] : included) {
      if (IdOf(o).empty() || IdOf(inc) != IdOf(o)) continue;
      if (overrides) {
        drop_own.insert(IdOf(o));
        diag.Warning(LocOf(o), absl::StrCat(Sv(what), " '", IdOf(o),
                                            "' is replaced by an overriding include"));
      } else {
        drop_included.insert(IdOf(o));
        diag.Warning(LocOf(inc),
                     absl::StrCat(Sv(what), " '", IdOf(o),
                                  "' from this include is shadowed by the including file"));
      }
    }
  }
  std::vector<T> out;
  for (auto& [inc, overrides] : included) {
    if (!drop_included.contains(IdOf(inc))) out.push_back(std::move(inc));
  }
  for (T& o : own) {
    if (!drop_own.contains(IdOf(o))) out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

std::optional<std::string> FindIncludeFile(const RawInclude& include, const fs::path& base,
                                           const std::vector<std::string>& resource_dirs) {
  std::vector<fs::path> candidates;
  fs::path file(include.file);
  if (file.is_absolute()) {
    candidates.push_back(file);
  } else {
    candidates.push_back(base / file);
    if (include.resource) {
      for (const std::string& dir : resource_dirs) candidates.push_back(fs::path(dir) / file);
    }
  }
  for (const fs::path& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.string();
  }
  return std::nullopt;
}

void IncludedDefinitions::Add(RawFile& included, bool override_values, Diagnostics& diag) {
  if (!included.includes.empty()) {
    diag.Warning(included.includes.front().loc,
                 "includes inside an included file are ignored (includes are not recursive)");
  }
  AddIncluded(components_, included.components, override_values);
  AddIncluded(spouts_, included.spouts, override_values);
  AddIncluded(bolts_, included.bolts, override_values);
  for (RawStream& s : included.streams) streams_.push_back(std::move(s));
  for (const auto& [k, v] : included.config.entries()) {
    if (override_values) {
      config_.Set(k, v);
      overriding_keys_.insert(k);
    } else if (!config_.Has(k)) {
      config_.Set(k, v);
    }
  }
  if (included.name && (!name_ || override_values)) name_ = included.name;
}

RawFile IncludedDefinitions::MergeWith(RawFile own, Diagnostics& diag) && {
  own.components =
      MergeWithOwn(std::move(components_), std::move(own.components), diag, "component");
  own.spouts = MergeWithOwn(std::move(spouts_), std::move(own.spouts), diag, "spout");
  own.bolts = MergeWithOwn(std::move(bolts_), std::move(own.bolts), diag, "bolt");
  for (RawStream& s : own.streams) streams_.push_back(std::move(s));
  own.streams = std::move(streams_);
  if (!own.name) own.name = std::move(name_);
  api::Config config = std::move(config_);
  for (const auto& [k, v] : own.config.entries()) {
    if (!overriding_keys_.contains(k)) config.Set(k, v);
  }
  own.config = std::move(config);
  return own;
}

}  // namespace tempest::core::flux_internal
