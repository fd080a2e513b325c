#include "cli/zk_client_auth.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "cli/dev_token.h"

namespace tempest::cli {

absl::StatusOr<coord::ZkAuthConfig> ResolveClientZkAuth(const api::Config& config,
                                                        std::string_view connect) {
  absl::StatusOr<coord::ZkAuthConfig> configured = coord::ZkAuthConfig::FromConfig(config);
  if (!configured.ok() || configured->enabled()) return configured;
  absl::StatusOr<coord::ZkAuthConfig> found = *configured;
  if (const char* env = std::getenv(kZkAuthFileEnv); env != nullptr && *env != '\0') {
    found = coord::ZkAuthConfig::FromFile(env, kZkAuthFileEnv);
  } else if (std::optional<std::string> dev = FindDevZkAuthFile(connect); dev.has_value()) {
    found = coord::ZkAuthConfig::FromFile(*dev, "tempest dev's ZooKeeper auth file");
  }
  if (found.ok()) found->offsets_world_readable = configured->offsets_world_readable;
  return found;
}

}  // namespace tempest::cli
