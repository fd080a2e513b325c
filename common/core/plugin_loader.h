#ifndef TEMPEST_COMMON_CORE_PLUGIN_LOADER_H_
#define TEMPEST_COMMON_CORE_PLUGIN_LOADER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"

namespace tempest::core {

// Loads C++ component plugins: shared libraries that register spouts, bolts
// and groupings with TEMPEST_REGISTER_* and mark themselves with
// TEMPEST_PLUGIN(). Lives in core rather than api because it does I/O
// (dlopen); api stays I/O-free.
//
// Load() dlopens the library (RTLD_NOW | RTLD_LOCAL), which runs its static
// registrations, checks tempest_plugin_api_version() against
// api::kApiVersion, and, when the plugin carries its own copy of the api
// library (so its registrations landed in that copy's registry), copies its
// classes into `target`. Libraries stay loaded for the life of the process
// (component vtables live in them). Thread-safe through the registry's lock,
// but meant for start-up.
//
//   PluginLoader loader(api::ComponentRegistry::Global());
//   absl::StatusOr<std::vector<std::string>> classes = loader.Load("libmy_components.so");
class PluginLoader {
 public:
  explicit PluginLoader(api::ComponentRegistry& target) : target_(target) {}

  // The class names the plugin added. NotFound / FailedPrecondition (not a
  // plugin, API version mismatch) / AlreadyExists (a class name clashes; the
  // other classes are still added).
  absl::StatusOr<std::vector<std::string>> Load(const std::string& path);

 private:
  api::ComponentRegistry& target_;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_PLUGIN_LOADER_H_
