#ifndef TEMPEST_COMMON_COORD_TOPOLOGY_IDENTITY_H_
#define TEMPEST_COMMON_COORD_TOPOLOGY_IDENTITY_H_

// A topology's own ZooKeeper identity (Storm's storm.zookeeper.topology.auth.*):
// what its workers authenticate as instead of the cluster identity, which
// never leaves nimbus and the supervisors (docs/adr/0025-per-topology-zookeeper-identity.md).
//
//   nimbus      makes it at a name's first submit (or takes the topology's
//               own), stores it in {root}/credentials/{name} (cluster
//               identity only; kept across kill and resubmit) and grants its
//               digest id what the workers need on the topology's nodes;
//   supervisor  reads it and writes a WorkerHandoff to the worker's stdin;
//   worker      reads the handoff as root, before running any topology code,
//               and connects with the topology identity only.

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/coord/cluster_paths.h"
#include "common/coord/zk_auth.h"
#include "common/coord/zk_session.h"

namespace tempest::coord {

// Permissions of a topology identity on the nodes the cluster makes for it:
// read its definition, assignment and resources; add beats and errors.
inline constexpr int kTopologyReadPerms = kZkPermRead;
inline constexpr int kTopologyWriteDirPerms = kZkPermRead | kZkPermCreate;

// A fresh digest identity "{user}:{password}" for a topology named `name`:
// user "topology-{name}-{8 hex}", password 32 bytes from getrandom(2),
// base64url. Internal only if the kernel's generator fails.
absl::StatusOr<ZkAuthConfig> NewTopologyIdentity(std::string_view name);

// The credentials node's text: "digest user:password". Decode refuses
// anything else (DataLoss naming what is wrong, never the content).
std::string EncodeTopologyIdentity(const ZkAuthConfig& identity);
absl::StatusOr<ZkAuthConfig> DecodeTopologyIdentity(std::string_view text);

// The identity stored for the topology named `topology_name`; nullopt when
// it has none (submitted without ZooKeeper auth). Needs the cluster identity.
absl::StatusOr<std::optional<ZkAuthConfig>> ReadTopologyIdentity(ZkSession& session,
                                                                  const ClusterPaths& paths,
                                                                  std::string_view topology_name,
                                                                  const ZkCall& call = {});

// The name part of a topology id "{name}-{counter}-{secs}" (the id itself
// when it does not have that shape).
std::string TopologyNameOfId(std::string_view topology_id);

// What a supervisor hands its worker on stdin: the topology identity and
// the cluster identity's digest id (never its password), one "key value"
// line each. An empty text is "no identity" (ZooKeeper auth off).
struct WorkerHandoff {
  ZkAuthConfig topology;
  std::string cluster_digest_id;
};
std::string EncodeWorkerHandoff(const WorkerHandoff& handoff);
absl::StatusOr<std::optional<WorkerHandoff>> DecodeWorkerHandoff(std::string_view text);

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_TOPOLOGY_IDENTITY_H_
