#include "common/coord/cluster_zk_config.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"

namespace tempest::coord {
namespace {

absl::StatusOr<std::vector<std::string>> HostList(const api::Value& v) {
  std::vector<std::string> out;
  if (const std::string* s = v.TryString()) {
    out.push_back(*s);
    return out;
  }
  const api::ValueList* list = v.TryList();
  if (list == nullptr) return absl::InvalidArgumentError("expected a list of host names");
  for (const api::Value& item : *list) {
    const std::string* s = item.TryString();
    if (s == nullptr) return absl::InvalidArgumentError("expected a list of host names");
    out.push_back(*s);
  }
  return out;
}

}  // namespace

absl::StatusOr<ClusterZkConfig> ClusterZkConfig::FromConfig(const api::Config& config) {
  ClusterZkConfig c;
  std::vector<std::string> servers = {"localhost"};
  if (const api::Value* v = config.Find(api::kStormZookeeperServers)) {
    absl::StatusOr<std::vector<std::string>> l = HostList(*v);
    if (!l.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(api::Sv(api::kStormZookeeperServers), ": ", l.status().message()));
    }
    servers = *l;
  }
  if (servers.empty()) return absl::InvalidArgumentError("storm.zookeeper.servers is empty");
  const int64_t zk_port = config.GetInt(api::kStormZookeeperPort, 2181);
  std::vector<std::string> hosts;
  for (const std::string& s : servers) {
    hosts.push_back(s.find(':') == std::string::npos ? absl::StrCat(s, ":", zk_port) : s);
  }
  c.connect = absl::StrJoin(hosts, ",");
  c.root = config.GetString(api::kStormZookeeperRoot, "/tempest");
  if (c.root.empty() || c.root[0] != '/' || (c.root.size() > 1 && c.root.back() == '/')) {
    return absl::InvalidArgumentError(
        absl::StrCat("storm.zookeeper.root must be an absolute path, not '", c.root, "'"));
  }
  if (c.root == "/") c.root = "";
  c.client = ZkClientConfig::FromLookup(
      [&config](std::string_view key) { return config.GetOptionalInt(key); });
  ASSIGN_OR_RETURN(c.client.auth, ZkAuthConfig::FromConfig(config));
  return c;
}

std::string ClusterZkConfig::Path(std::string_view child) const {
  return absl::StrCat(root, "/", api::Sv(child));
}

}  // namespace tempest::coord
