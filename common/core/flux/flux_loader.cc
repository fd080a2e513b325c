#include "common/core/flux/flux_loader.h"

#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/flux/flux_file_parser.h"
#include "common/core/flux/flux_includes.h"
#include "common/core/flux/flux_raw_model.h"
#include "common/core/flux/flux_resolver.h"
#include "common/core/flux/flux_text.h"
#include "common/core/flux/flux_writer.h"
#include "common/core/status_macros.h"
#include "common/core/yaml_checks.h"

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

// Whether `root` could be a Flux file: a map with at least one Flux key.
bool LooksLikeFlux(const YAML::Node& root) {
  if (!root.IsMap()) return false;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) continue;
    const std::string& key = kv.first.Scalar();
    for (const char* flux_key :
         {"name", "config", "components", "spouts", "bolts", "streams", "includes"}) {
      if (key == flux_key) return true;
    }
  }
  return false;
}

// One included file, parsed. A file that is not a Flux document is one
// error on the include itself, saying no more than where: whatever the path
// names (a key file, /etc/shadow) is never quoted back.
std::optional<RawFile> ParseIncludedFile(const RawInclude& inc, const std::string& path,
                                         const std::optional<Properties>& props,
                                         const FluxOptions& options, Diagnostics& diag) {
  absl::StatusOr<std::string> body = flux_internal::ReadFile(path);
  if (!body.ok()) {
    diag.Error(inc.loc, absl::StrCat("include file '", absl::CHexEscape(inc.file),
                                     "' cannot be read"));
    return std::nullopt;
  }
  absl::StatusOr<YAML::Node> root = LoadCheckedYaml(*body, "");
  if (!root.ok() || !LooksLikeFlux(*root)) {
    std::string where;
    if (!root.ok()) {
      // "line N: ..." -> "line N"; the rest may quote the file.
      const std::string message(root.status().message());
      where = absl::StrCat(", not valid YAML at ", message.substr(0, message.find(':')));
    }
    diag.Error(inc.loc, absl::StrCat("include file '", absl::CHexEscape(inc.file),
                                     "' is not a Flux file (a map with name, config, components,"
                                     " spouts, bolts or streams", where,
                                     "); its content is not shown"));
    return std::nullopt;
  }
  return ParseOneFile(*body, path, props, options, diag);
}

}  // namespace

std::optional<RawFile> FluxLoader::LoadMerged(std::string_view text, const std::string& file_name,
                                              const std::optional<Properties>& props,
                                              Diagnostics& diag) const {
  std::optional<RawFile> main = ParseOneFile(text, file_name, props, options_, diag);
  if (!main) return std::nullopt;
  if (main->includes.empty()) return main;
  if (!options_.read_includes) {
    // Nothing is looked up: the same answer whether the path exists or not.
    for (const RawInclude& inc : main->includes) {
      diag.Error(inc.loc, absl::StrCat("include '", absl::CHexEscape(inc.file),
                                       "' refused: this topology is loaded as it was sent and no "
                                       "file is read for it; tempest submit merges includes into "
                                       "the text it sends"));
    }
    return std::nullopt;
  }
  // Includes: one level, in order.
  const std::filesystem::path base = std::filesystem::path(file_name).parent_path();
  flux_internal::IncludedDefinitions included;
  for (const RawInclude& inc : main->includes) {
    std::optional<std::string> found =
        flux_internal::FindIncludeFile(inc, base, options_.resource_dirs);
    if (!found) {
      diag.Error(inc.loc,
                 absl::StrCat("include file '", absl::CHexEscape(inc.file), "' not found"));
      continue;
    }
    std::optional<RawFile> file = ParseIncludedFile(inc, *found, props, options_, diag);
    if (file) included.Add(*file, inc.override_values, diag);
  }
  return std::move(included).MergeWith(std::move(*main), diag);
}

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
  std::optional<RawFile> merged = LoadMerged(text, file_name, props, diag);
  if (!merged) return diag.ToStatus();

  TopologyDef def;
  def.location = SourceLocation{file_name, 0};
  def.name = merged->name.value_or("");
  def.config = std::move(merged->config);
  flux_internal::ResolveComponents(*merged, diag, def);
  def.warnings = std::move(diag.warnings());
  if (!diag.ok()) return diag.ToStatus();
  return def;
}

absl::StatusOr<std::string> FluxLoader::InlineIncludes(std::string_view text,
                                                       const std::string& file_name) const {
  TEMPEST_ASSIGN_OR_RETURN(const std::optional<Properties> props, FilterProperties());
  Diagnostics diag;
  std::optional<RawFile> merged = LoadMerged(text, file_name, props, diag);
  if (!merged || !diag.ok()) return diag.ToStatus();
  // MergeWith leaves the main file's includes in place.
  if (merged->includes.empty()) return std::string(text);
  std::vector<std::string> names;
  for (const RawInclude& inc : merged->includes) names.push_back(absl::CHexEscape(inc.file));
  const std::string header = absl::StrCat(
      absl::CHexEscape(std::filesystem::path(file_name).filename().string()),
      " with its includes (", absl::StrJoin(names, ", "),
      ") merged in by tempest submit;\nnimbus loads this text as it is and reads no file.");
  return flux_internal::WriteFluxFile(*merged, header);
}

}  // namespace tempest::core
