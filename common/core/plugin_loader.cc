#include "common/core/plugin_loader.h"

#include <dlfcn.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "common/api/api.h"

namespace tempest::core {

absl::StatusOr<std::vector<std::string>> PluginLoader::Load(const std::string& path) {
  // Names present before loading, to report what a plugin that shares our
  // registry (symbols resolved against the host) registered directly.
  std::set<std::string> before;
  for (auto kind : {api::ComponentRegistry::Kind::kSpout, api::ComponentRegistry::Kind::kBolt,
                    api::ComponentRegistry::Kind::kGrouping}) {
    for (std::string& n : target_.ClassNames(kind)) before.insert(std::move(n));
  }

  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return absl::NotFoundError(
        absl::StrCat("cannot load plugin ", path, ": ", err != nullptr ? err : "unknown error"));
  }
  using VersionFn = int (*)();
  using RegistryFn = void* (*)();
  auto version = reinterpret_cast<VersionFn>(dlsym(handle, "tempest_plugin_api_version"));
  auto registry = reinterpret_cast<RegistryFn>(dlsym(handle, "tempest_plugin_registry"));
  if (version == nullptr || registry == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a Tempest plugin (no TEMPEST_PLUGIN() entry points)"));
  }
  if (version() != api::kApiVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " was built for component API ", version(), ", this runtime has ", api::kApiVersion));
  }
  auto* plugin_registry = static_cast<api::ComponentRegistry*>(registry());
  std::vector<std::string> added;
  absl::Status merged = absl::OkStatus();
  if (plugin_registry != &target_) {
    merged = target_.MergeFrom(*plugin_registry, &added);
    for (const std::string& e : plugin_registry->registration_errors()) {
      target_.RecordRegistrationError(absl::InternalError(absl::StrCat(path, ": ", e)));
    }
  } else {
    for (auto kind : {api::ComponentRegistry::Kind::kSpout, api::ComponentRegistry::Kind::kBolt,
                      api::ComponentRegistry::Kind::kGrouping}) {
      for (std::string& n : target_.ClassNames(kind)) {
        if (!before.contains(n)) added.push_back(std::move(n));
      }
    }
  }
  if (!merged.ok()) {
    return absl::AlreadyExistsError(absl::StrCat(path, ": ", merged.message()));
  }
  return added;
}

}  // namespace tempest::core
