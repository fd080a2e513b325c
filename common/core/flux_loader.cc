#include "common/core/flux_loader.h"

#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/core/flux_file_parser.h"
#include "common/core/flux_includes.h"
#include "common/core/flux_raw_model.h"
#include "common/core/flux_resolver.h"
#include "common/core/flux_text.h"
#include "common/core/status_macros.h"

// Loading runs in steps, each in its own file: text substitution
// (flux_text), YAML -> raw model per file (flux_file_parser), includes
// (flux_includes), references -> TopologyDef (flux_resolver).

namespace tempest::core {
namespace {

using flux_internal::Diagnostics;
using flux_internal::RawFile;
using flux_internal::RawInclude;
using Properties = std::map<std::string, std::string>;

// Substitutes and parses one file's text; nullopt on a fatal error (already
// recorded in `diag`).
std::optional<RawFile> ParseOneFile(std::string_view body, const std::string& path,
                                    const std::optional<Properties>& props,
                                    const FluxOptions& options, Diagnostics& diag) {
  std::string substituted = flux_internal::Substitute(
      body, path, props ? &*props : nullptr, options.env_filter, options.env, diag);
  return flux_internal::ParseFluxFile(substituted, path, diag);
}

}  // namespace

std::map<std::string, std::string> FluxLoader::ParseProperties(std::string_view text) {
  return flux_internal::ParsePropertiesText(text);
}

absl::StatusOr<TopologyDef> FluxLoader::LoadFile(const std::string& path) const {
  TEMPEST_ASSIGN_OR_RETURN(std::string text, flux_internal::ReadFile(path));
  return LoadString(text, path);
}

absl::StatusOr<std::optional<std::map<std::string, std::string>>> FluxLoader::FilterProperties()
    const {
  if (options_.filter_file.empty()) return std::optional<Properties>();
  absl::StatusOr<std::string> ptext = flux_internal::ReadFile(options_.filter_file);
  if (!ptext.ok()) {
    return absl::NotFoundError(
        absl::StrCat(options_.filter_file, ": cannot read --filter properties file"));
  }
  return std::optional<Properties>(ParseProperties(*ptext));
}

absl::StatusOr<std::string> FluxLoader::ApplyFilters(std::string_view text,
                                                     const std::string& file_name) const {
  TEMPEST_ASSIGN_OR_RETURN(const std::optional<Properties> props, FilterProperties());
  Diagnostics diag;
  std::string out = flux_internal::Substitute(text, file_name, props ? &*props : nullptr,
                                              options_.env_filter, options_.env, diag);
  if (!diag.ok()) return diag.ToStatus();
  return out;
}

absl::StatusOr<TopologyDef> FluxLoader::LoadString(std::string_view text,
                                                   const std::string& file_name) const {
  TEMPEST_ASSIGN_OR_RETURN(const std::optional<Properties> props, FilterProperties());
  Diagnostics diag;
  std::optional<RawFile> main = ParseOneFile(text, file_name, props, options_, diag);
  if (!main) return diag.ToStatus();

  // Includes: one level, in order.
  const std::filesystem::path base = std::filesystem::path(file_name).parent_path();
  flux_internal::IncludedDefinitions included;
  for (const RawInclude& inc : main->includes) {
    std::optional<std::string> found =
        flux_internal::FindIncludeFile(inc, base, options_.resource_dirs);
    if (!found) {
      diag.Error(inc.loc, absl::StrCat("include file '", inc.file, "' not found"));
      continue;
    }
    absl::StatusOr<std::string> body = flux_internal::ReadFile(*found);
    if (!body.ok()) {
      diag.Error(inc.loc, absl::StrCat("include file '", inc.file, "' cannot be read"));
      continue;
    }
    std::optional<RawFile> file = ParseOneFile(*body, *found, props, options_, diag);
    if (file) included.Add(*file, inc.override_values, diag);
  }
  RawFile merged = std::move(included).MergeWith(std::move(*main), diag);

  TopologyDef def;
  def.location = SourceLocation{file_name, 0};
  def.name = merged.name.value_or("");
  def.config = std::move(merged.config);
  flux_internal::ResolveComponents(merged, diag, def);
  def.warnings = std::move(diag.warnings());
  if (!diag.ok()) return diag.ToStatus();
  return def;
}

}  // namespace tempest::core
