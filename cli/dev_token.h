#ifndef TEMPEST_CLI_DEV_TOKEN_H_
#define TEMPEST_CLI_DEV_TOKEN_H_

// How client verbs find the API token of a `tempest dev` cluster without
// anything exported: `tempest dev` records the path of its token file in a
// per-user discovery file named after its nimbus address,
// $HOME/.tempest/dev/HOST:PORT.token-file, and removes it when it stops;
// NimbusClient::FromGlobals looks that file up when nothing else gives it a
// token. The same records, with another suffix, lead Tempest's ZooKeeper
// clients (offsets, migrate, local) to the run's ZooKeeper auth file:
// $HOME/.tempest/dev/127.0.0.1:ZKPORT.zk-auth-file. Only addresses of this
// machine are recorded and looked up. Functions only; safe from any thread.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace tempest::cli {

// The record of nimbus HOST:PORT's API token file, and of ZooKeeper
// HOST:PORT's auth file.
inline constexpr std::string_view kDevTokenSuffix = ".token-file";
inline constexpr std::string_view kDevZkAuthSuffix = ".zk-auth-file";

// The directory of the discovery files under `home` ($HOME):
// HOME/.tempest/dev. Empty when `home` is empty.
std::string DevTokenDir(std::string_view home);

// The key a local nimbus address is recorded under: "127.0.0.1:PORT" for
// localhost, 0.0.0.0, :: and ::1 (they all reach this machine's
// 127.0.0.1), "127.X.Y.Z:PORT" for another loopback address. nullopt for any
// other host (a remote nimbus is never looked up) or a port outside 1..65535.
std::optional<std::string> DevTokenKey(std::string_view host, int port);

// The discovery file of nimbus HOST:PORT in `dir`
// (DIR/KEY.token-file, or DIR/KEY`suffix`), or nullopt when the host is not
// local.
std::optional<std::string> DevTokenDiscoveryPath(const std::string& dir, std::string_view host,
                                                 int port,
                                                 std::string_view suffix = kDevTokenSuffix);

// Records `token_file` (made absolute) for nimbus HOST:PORT: creates `dir`
// with mode 0700 (its parent too, 0700, if missing), then writes the path
// and a newline to the discovery file (mode 0600, replaced atomically).
// Returns the discovery file's path in `written`. InvalidArgument for a
// host that is not local; FailedPrecondition when the file cannot be
// written.
absl::Status WriteDevTokenDiscovery(const std::string& dir, std::string_view host, int port,
                                    const std::string& token_file, std::string* written,
                                    std::string_view suffix = kDevTokenSuffix);

// Removes the discovery file `path` if it still names `token_file` (a newer
// `tempest dev` on the same address keeps its own).
void RemoveDevTokenDiscovery(const std::string& path, const std::string& token_file);

// The token file recorded for nimbus HOST:PORT in `dir`: the absolute path
// the discovery file names, if that file is readable. nullopt when the host
// is not local, `dir` is empty, or there is no such discovery file or
// readable token file.
std::optional<std::string> FindDevTokenFile(const std::string& dir, std::string_view host,
                                            int port, std::string_view suffix = kDevTokenSuffix);

// The ZooKeeper auth file a running `tempest dev` recorded (under $HOME) for
// the first server of `connect` ("H:P[,H:P...][/chroot]"); nullopt when
// $HOME is unset, the first server is not on this machine's loopback, or
// nothing readable is recorded.
std::optional<std::string> FindDevZkAuthFile(std::string_view connect);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_DEV_TOKEN_H_
