#ifndef TEMPEST_COMMON_COORD_ZK_AUTH_H_
#define TEMPEST_COMMON_COORD_ZK_AUTH_H_

// ZooKeeper credentials and the one rule that decides the ACL of every znode
// Tempest creates (ZkAclPolicy::For).

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tempest::api {
class Config;
}  // namespace tempest::api

namespace tempest::coord {

inline constexpr int kZkPermRead = 1, kZkPermWrite = 2, kZkPermCreate = 4, kZkPermDelete = 8,
                     kZkPermAdmin = 16, kZkPermAll = 31;
struct ZkAclEntry {
  int perms = kZkPermAll;
  std::string scheme;  // "world", "auth", "digest", "ip", ...
  std::string id;
};
using ZkAcl = std::vector<ZkAclEntry>;
ZkAcl OpenAcl();        // world:anyone, all permissions
ZkAcl CreatorAllAcl();  // auth: all permissions to the identities (e.g. digest) we authenticated
                        // with
ZkAcl CreatorAllWorldReadAcl();  // as CreatorAllAcl, plus read for everyone

// Who may read a node besides its creator, when the session is authenticated.
//   kPrivate:        nobody (cluster state, owner nodes, the transport secret).
//   kLegacyReadable: everyone may read it if the operator asked for that
//                    (storm-kafka offset nodes and their parents, for legacy
//                    monitoring tools); otherwise as kPrivate.
enum class ZkNodeAccess { kPrivate, kLegacyReadable };

// The ACL of the nodes a session creates. Without credentials every node is
// open (world:anyone, all permissions: ZooKeeper has no identity to restrict
// it to); with credentials every node is creator-only (ZOO_CREATOR_ALL_ACL),
// plus world read for kLegacyReadable nodes when legacy_world_readable.
struct ZkAclPolicy {
  bool authenticated = false;
  bool legacy_world_readable = false;
  ZkAcl For(ZkNodeAccess access) const;
};

inline constexpr std::string_view kZkAuthSchemeKey = "storm.zookeeper.auth.scheme";
inline constexpr std::string_view kZkAuthPayloadKey = "storm.zookeeper.auth.payload";
// A file (mode 0600) whose first line is the digest "user:password": the
// password stays out of tempest.yaml and off command lines. Implies
// storm.zookeeper.auth.scheme digest.
inline constexpr std::string_view kZkAuthFileKey = "tempest.zookeeper.auth.file";
inline constexpr std::string_view kZkOffsetsWorldReadableKey =
    "tempest.zookeeper.offsets.world.readable";

// Storm's storm.zookeeper.auth.scheme / storm.zookeeper.auth.payload (or the
// payload read from tempest.zookeeper.auth.file), added (zoo_add_auth) to
// every ZooKeeper session Tempest opens, and
// tempest.zookeeper.offsets.world.readable.
struct ZkAuthConfig {
  std::string scheme;   // "" (no credentials) or "digest"
  std::string payload;  // "user:password"
  bool offsets_world_readable = false;

  bool enabled() const { return !scheme.empty(); }
  // "digest:USER" (never the password), for messages.
  std::string Identity() const;

  // InvalidArgument naming the key for: a scheme other than digest, a scheme
  // without a payload or a payload without a scheme, a payload that is not
  // "user:password" with both parts non-empty, values of the wrong type,
  // both a payload and an auth file, an auth file that is missing, empty,
  // over 4 KiB or holds a space or control character. Logs a warning when
  // the auth file is readable by its group or by everyone.
  static absl::StatusOr<ZkAuthConfig> FromConfig(const api::Config& config);

  // The credentials of the auth file `path` alone (as if
  // tempest.zookeeper.auth.file named it); `source` names it in errors.
  static absl::StatusOr<ZkAuthConfig> FromFile(const std::string& path, std::string_view source);
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_AUTH_H_
