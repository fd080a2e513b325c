#ifndef TEMPEST_CLI_ZK_CLIENT_AUTH_H_
#define TEMPEST_CLI_ZK_CLIENT_AUTH_H_

// The ZooKeeper credentials of Tempest's own ZooKeeper clients (`offsets`,
// `migrate offsets`, `local`), found the way client verbs find the API
// token, so a `tempest dev` cluster's digest ACLs need no extra flags.

#include <string_view>

#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/coord/zk_auth.h"

namespace tempest::cli {

// Names the auth file (first line "user:password") to use when the config
// has no ZooKeeper credentials; `tempest dev` prints an export of it.
inline constexpr char kZkAuthFileEnv[] = "TEMPEST_ZK_AUTH_FILE";

// storm.zookeeper.auth.* or tempest.zookeeper.auth.file from `config`
// (--config and -c); else the file $TEMPEST_ZK_AUTH_FILE names; else, when
// the first server of `connect` is on this machine's loopback, the auth file
// a running `tempest dev` recorded for it under $HOME; else no credentials.
// An error for a file that is named but unusable (one line naming it).
absl::StatusOr<coord::ZkAuthConfig> ResolveClientZkAuth(const api::Config& config,
                                                        std::string_view connect);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_ZK_CLIENT_AUTH_H_
