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
  bool operator==(const ZkAclEntry&) const = default;
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
//   kSharedParent:   a level several topologies hang their own nodes from (a
//                    KafkaSpout's zkRoot and the levels above it). With
//                    per-topology identities (trusted_digest_ids set) nobody
//                    but the cluster may write, delete or re-ACL it, and
//                    everyone may read it and create in it: a topology cannot
//                    know the identities of the topologies that come later.
//                    What anyone creates below it is checked as its own node
//                    (a squatted spout id is refused, never used). Without
//                    per-topology identities: as kLegacyReadable.
enum class ZkNodeAccess { kPrivate, kLegacyReadable, kSharedParent };

// The ACL of the nodes a session creates. Without credentials every node is
// open (world:anyone, all permissions: ZooKeeper has no identity to restrict
// it to); with credentials every node is creator-only (ZOO_CREATOR_ALL_ACL),
// plus world read for kLegacyReadable nodes when legacy_world_readable.
//
// A worker authenticates as its topology's own identity, not the cluster's
// (docs/security.md, "Per-topology ZooKeeper identities"). Nodes it creates
// (workerbeats, errors, the KafkaSpout's offsets and owners) also give ALL to
// `trusted_digest_ids`, the cluster identity's digest id, so nimbus, the
// supervisors and `tempest offsets` / `migrate` keep full control of them.
// Nodes the cluster creates for a topology grant that topology's identity
// only the permissions its workers need (ForTopology).
struct ZkAclPolicy {
  bool authenticated = false;
  bool legacy_world_readable = false;
  std::vector<std::string> trusted_digest_ids = {};  // "user:base64(sha1)", given ALL
  ZkAcl For(ZkNodeAccess access) const;
  // For(access) plus `perms` for the digest id `topology_digest_id`
  // (nothing is added without credentials, or for an empty id).
  ZkAcl ForTopology(ZkNodeAccess access, std::string_view topology_digest_id, int perms) const;
};

// ZooKeeper's digest id of a "user:password" payload: "user:" followed by
// base64(sha1("user:password")), what an ACL entry of scheme digest names.
// The id reveals nothing of the password, so it may be handed to workers.
std::string ZkDigestId(std::string_view payload);

inline constexpr std::string_view kZkAuthSchemeKey = "storm.zookeeper.auth.scheme";
inline constexpr std::string_view kZkAuthPayloadKey = "storm.zookeeper.auth.payload";
// A file (mode 0600) whose first line is the digest "user:password": the
// password stays out of tempest.yaml and off command lines. Implies
// storm.zookeeper.auth.scheme digest.
inline constexpr std::string_view kZkAuthFileKey = "tempest.zookeeper.auth.file";
// Storm's keys of a topology's own identity (digest, "user:password"). Nimbus
// makes one when ZooKeeper auth is on and the topology gives none.
inline constexpr std::string_view kZkTopologyAuthSchemeKey =
    "storm.zookeeper.topology.auth.scheme";
inline constexpr std::string_view kZkTopologyAuthPayloadKey =
    "storm.zookeeper.topology.auth.payload";
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
  // Digest ids given ALL on every node the session creates besides the
  // creator (ZkAclPolicy::trusted_digest_ids): a worker's sessions name the
  // cluster identity here. Never read from a config file.
  std::vector<std::string> trusted_digest_ids = {};

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
  // The same checks for a topology's own identity
  // (storm.zookeeper.topology.auth.*); offsets_world_readable is read as in
  // FromConfig.
  static absl::StatusOr<ZkAuthConfig> TopologyFromConfig(const api::Config& config);
};

// The ZooKeeper identity of the topology this process runs (a worker's), for
// components that open sessions of their own (the KafkaSpout's offset store)
// without the credentials ever being in a config a component sees. The
// worker sets it before any component opens; not enabled() elsewhere.
void SetProcessTopologyZkAuth(ZkAuthConfig auth);
ZkAuthConfig ProcessTopologyZkAuth();

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_ZK_AUTH_H_
