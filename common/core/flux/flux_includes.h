#ifndef TEMPEST_COMMON_CORE_FLUX_INCLUDES_H_
#define TEMPEST_COMMON_CORE_FLUX_INCLUDES_H_

// Flux `includes`: finding an included file and merging what the includes
// contribute with the including file's own definitions. Internal to
// FluxLoader; one level only. Value types; any thread.

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/api/config.h"
#include "common/core/flux/flux_raw_model.h"

namespace tempest::core::flux_internal {

// The path of an include: an absolute file as is; a relative one in the
// including file's folder `base`, then (with `resource: true`) in each of
// `resource_dirs`. nullopt when no candidate is a regular file.
std::optional<std::string> FindIncludeFile(const RawInclude& include,
                                           const std::filesystem::path& base,
                                           const std::vector<std::string>& resource_dirs);

// Definitions gathered from includes, each marked with whether its include
// said `override: true`.
template <typename T>
using Included = std::vector<std::pair<T, bool>>;

// Accumulates the includes of one file, in include order.
class IncludedDefinitions {
 public:
  // Adds one included file. An id already brought by an earlier include is
  // replaced only when this include overrides; the included file's own
  // includes are ignored with a warning.
  void Add(RawFile& included, bool override_values, Diagnostics& diag);

  // `own` with the includes merged in: included definitions first (so the
  // including file may reference them), then its own. On an id clash an
  // overriding include wins, else the file's own; each clash is a warning.
  // Config keys and the name follow the same rule; streams are all kept,
  // included ones first. The result's `includes` are left as they were.
  RawFile MergeWith(RawFile own, Diagnostics& diag) &&;

 private:
  Included<RawBean> components_;
  Included<RawVertex> spouts_;
  Included<RawVertex> bolts_;
  std::vector<RawStream> streams_;
  api::Config config_;
  std::set<std::string> overriding_keys_;
  std::optional<std::string> name_;
};

}  // namespace tempest::core::flux_internal

#endif  // TEMPEST_COMMON_CORE_FLUX_INCLUDES_H_
