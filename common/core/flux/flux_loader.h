#ifndef TEMPEST_COMMON_CORE_FLUX_LOADER_H_
#define TEMPEST_COMMON_CORE_FLUX_LOADER_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/core/flux/flux_raw_model.h"
#include "common/core/topology/topology_def.h"

namespace tempest::core {

// How to load a Flux file (the `tempest local/submit` flags).
struct FluxOptions {
  // --filter: a Java .properties file whose entries replace `${key}`.
  std::string filter_file;
  // --env-filter: replace `${ENV-NAME}` with environment variable NAME.
  bool env_filter = false;
  // The environment for ${ENV-...}; nullptr reads the process environment.
  const std::map<std::string, std::string>* env = nullptr;
  // Whether `includes` are read from disk: on for the processes that load
  // the user's own files with the user's rights (`tempest local`, `migrate
  // check`, and `tempest submit`, which merges them into the text it
  // sends). Off, the default, for everything that loads text someone else
  // sent (nimbus, workers, REST views): a text that still has `includes` is
  // refused, one error per include naming it, and no path is looked at, so
  // the answer is the same whether it exists or not.
  bool read_includes = false;
  // Where `includes` with `resource: true` are looked up (after the
  // including file's own folder).
  std::vector<std::string> resource_dirs;
};

// Loads a Flux YAML topology (Storm's flux-core format) into a TopologyDef.
//
// Supported: `name`, `config`, `components` (id, className, constructorArgs
// with `{ref: id}` / `{reflist: [ids]}`, properties `{name, value}` /
// `{name, ref}`, configMethods `{name, args}`, factory/factoryArgs kept as
// properties "factory"/"factoryArgs"), `spouts` and `bolts` (the same plus
// parallelism, numTasks, per-component `config`; resource-load keys accepted
// and ignored), `streams` (name, from, to, grouping {type, args, streamId,
// customClass}; types SHUFFLE, FIELDS, ALL, GLOBAL, NONE, DIRECT,
// LOCAL_OR_SHUFFLE, CUSTOM and Tempest's PARTIAL_KEY; CUSTOM with Storm's
// PartialKeyGrouping class maps to PARTIAL_KEY), `includes` ({resource,
// file, override}; one level: includes of included files are ignored with a
// warning). `${key}` (with filter_file) and `${ENV-NAME}` (with env_filter)
// are substituted in the text before parsing; when either filter is on, a
// placeholder left unresolved is an error. `workerHooks` is ignored with a
// warning; `topologySource` is rejected.
//
// A referenced component reaches factories as a map Value (see
// api::ComponentArgs). References must point to a component declared
// earlier; components of included files count as declared before the
// including file's own.
//
// Every problem found is reported at once, each as "file:line: message", in
// one InvalidArgument status; malformed YAML is an error, never a crash. An
// included file that is not a Flux document (not YAML, or not a map with
// Flux keys) is one error naming it, never quoting what it holds.
// Class names, streams and fields are checked later by TopologyValidator.
// Reads files (LoadFile's topology, includes when `read_includes`, the
// filter file); otherwise pure. Stateless apart from the options; any thread.
//
//   FluxLoader loader(FluxOptions{.filter_file = "dev.properties"});
//   absl::StatusOr<TopologyDef> def = loader.LoadFile("topo.yaml");
class FluxLoader {
 public:
  explicit FluxLoader(FluxOptions options = {}) : options_(std::move(options)) {}

  absl::StatusOr<TopologyDef> LoadFile(const std::string& path) const;
  // Loads from text; `file_name` names it in messages and its folder is the
  // base for relative includes.
  absl::StatusOr<TopologyDef> LoadString(std::string_view text, const std::string& file_name) const;
  // The text with `${key}` / `${ENV-NAME}` substituted as LoadString would
  // (InvalidArgument naming file:line for a placeholder left unresolved
  // while a filter is on). `tempest submit --filter/--env-filter` sends
  // this, since nimbus and the workers load the text without the filters.
  absl::StatusOr<std::string> ApplyFilters(std::string_view text,
                                           const std::string& file_name) const;
  // The text with its `includes` merged in, as one Flux document that loads
  // (without reading anything) to the same TopologyDef as LoadString;
  // `text` itself when it has no includes. What `tempest submit` sends, so
  // nimbus reads no file. Errors as LoadString's, naming the real files.
  absl::StatusOr<std::string> InlineIncludes(std::string_view text,
                                             const std::string& file_name) const;

  // Parses Java .properties text (key=value / key: value / key value,
  // '#'/'!' comments, trailing-backslash continuations).
  static std::map<std::string, std::string> ParseProperties(std::string_view text);

 private:
  // The --filter properties, if a filter file is set.
  absl::StatusOr<std::optional<std::map<std::string, std::string>>> FilterProperties() const;
  // The main file with its includes merged in (or refused, per
  // read_includes); nullopt when it is not YAML at all. Problems go to `diag`.
  std::optional<flux_internal::RawFile> LoadMerged(
      std::string_view text, const std::string& file_name,
      const std::optional<std::map<std::string, std::string>>& props,
      flux_internal::Diagnostics& diag) const;

  FluxOptions options_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_FLUX_LOADER_H_
