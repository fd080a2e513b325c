#ifndef TEMPEST_COMMON_COORD_CLUSTER_ZK_CONFIG_H_
#define TEMPEST_COMMON_COORD_CLUSTER_ZK_CONFIG_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/coord/retry_policy.h"

namespace tempest::coord {

// Where a daemon (nimbus, supervisor, worker) finds the cluster state, read
// from Storm's keys: storm.zookeeper.servers (a host or a list; "host" gets
// storm.zookeeper.port, "host:port" keeps its port), storm.zookeeper.root
// (default /tempest), the storm.zookeeper.* timeouts and retries, and the
// credentials (storm.zookeeper.auth.scheme / .payload, in client.auth).
struct ClusterZkConfig {
  std::string connect;  // "host:port,host:port"
  std::string root;     // "" for "/", otherwise absolute without a trailing '/'
  ZkClientConfig client;

  // InvalidArgument naming the key for unusable values.
  static absl::StatusOr<ClusterZkConfig> FromConfig(const api::Config& config);

  // root + "/" + child, e.g. Path("assignments").
  std::string Path(std::string_view child) const;
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_CLUSTER_ZK_CONFIG_H_
