#include "common/coord/topology_identity.h"

#include <sys/random.h>

#include <cerrno>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"

namespace tempest::coord {
namespace {

absl::StatusOr<std::string> RandomBytes(size_t size) {
  std::string bytes(size, '\0');
  size_t filled = 0;
  for (int attempt = 0; filled < size && attempt < 100; ++attempt) {
    const ssize_t n = ::getrandom(bytes.data() + filled, size - filled, 0);
    if (n > 0) {
      filled += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      break;
    }
  }
  if (filled < size) {
    return absl::InternalError("getrandom failed: cannot make a topology's ZooKeeper identity");
  }
  return bytes;
}

// A digest identity as ZkAuthConfig::FromConfig would accept it.
absl::StatusOr<ZkAuthConfig> Checked(std::string_view scheme, std::string_view payload,
                                     std::string_view what) {
  const size_t colon = payload.find(':');
  if (scheme != "digest" || colon == std::string_view::npos || colon == 0 ||
      colon + 1 == payload.size() || payload.find('\n') != std::string_view::npos) {
    return absl::DataLossError(
        absl::StrCat(api::Sv(what), " does not hold a digest identity 'user:password'"));
  }
  ZkAuthConfig c;
  c.scheme = std::string(scheme);
  c.payload = std::string(payload);
  return c;
}

}  // namespace

absl::StatusOr<ZkAuthConfig> NewTopologyIdentity(std::string_view name) {
  ASSIGN_OR_RETURN(const std::string tag, RandomBytes(4));
  ASSIGN_OR_RETURN(const std::string password, RandomBytes(32));
  ZkAuthConfig c;
  c.scheme = "digest";
  // A name never holds ':' (CheckTopologyName), so the user part is safe.
  c.payload = absl::StrCat("topology-", api::Sv(name), "-", absl::BytesToHexString(tag), ":",
                           absl::WebSafeBase64Escape(password));
  return c;
}

std::string EncodeTopologyIdentity(const ZkAuthConfig& identity) {
  return absl::StrCat(identity.scheme, " ", identity.payload);
}

absl::StatusOr<ZkAuthConfig> DecodeTopologyIdentity(std::string_view text) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) {
    return absl::DataLossError("a topology credentials node does not hold 'digest user:password'");
  }
  return Checked(text.substr(0, space), text.substr(space + 1), "a topology credentials node");
}

absl::StatusOr<std::optional<ZkAuthConfig>> ReadTopologyIdentity(ZkSession& session,
                                                                  const ClusterPaths& paths,
                                                                  std::string_view topology_name,
                                                                  const ZkCall& call) {
  absl::StatusOr<ZkNode> node = session.Get(paths.Credential(topology_name), call);
  if (absl::IsNotFound(node.status())) return std::optional<ZkAuthConfig>();
  RETURN_IF_ERROR(node.status());
  absl::StatusOr<ZkAuthConfig> identity = DecodeTopologyIdentity(node->data);
  if (!identity.ok()) {
    return absl::DataLossError(absl::StrCat(paths.Credential(topology_name), ": ",
                                            api::Sv(api::StdSv(identity.status().message()))));
  }
  return std::optional<ZkAuthConfig>(*std::move(identity));
}

std::string TopologyNameOfId(std::string_view topology_id) {
  auto numeric_tail = [](std::string_view s) -> size_t {
    const size_t dash = s.rfind('-');
    if (dash == std::string_view::npos || dash + 1 == s.size()) return std::string_view::npos;
    for (char c : s.substr(dash + 1)) {
      if (c < '0' || c > '9') return std::string_view::npos;
    }
    return dash;
  };
  const size_t secs = numeric_tail(topology_id);
  if (secs == std::string_view::npos) return std::string(topology_id);
  const size_t counter = numeric_tail(topology_id.substr(0, secs));
  if (counter == std::string_view::npos || counter == 0) return std::string(topology_id);
  return std::string(topology_id.substr(0, counter));
}

std::string EncodeWorkerHandoff(const WorkerHandoff& handoff) {
  return absl::StrCat("scheme ", handoff.topology.scheme, "\npayload ", handoff.topology.payload,
                      "\ntrusted ", handoff.cluster_digest_id, "\n");
}

absl::StatusOr<std::optional<WorkerHandoff>> DecodeWorkerHandoff(std::string_view text) {
  if (text.empty()) return std::optional<WorkerHandoff>();
  std::string scheme, payload, trusted;
  for (absl::string_view line : absl::StrSplit(api::Sv(text), '\n', absl::SkipEmpty())) {
    const size_t space = line.find(' ');
    const absl::string_view key = line.substr(0, space);
    const std::string value =
        space == absl::string_view::npos ? std::string() : std::string(line.substr(space + 1));
    if (key == "scheme") {
      scheme = value;
    } else if (key == "payload") {
      payload = value;
    } else if (key == "trusted") {
      trusted = value;
    } else {
      return absl::InvalidArgumentError("the supervisor's identity handoff has an unknown line");
    }
  }
  absl::StatusOr<ZkAuthConfig> topology =
      Checked(scheme, payload, "the supervisor's identity handoff");
  if (!topology.ok()) return absl::InvalidArgumentError(topology.status().message());
  WorkerHandoff h;
  h.topology = *std::move(topology);
  h.cluster_digest_id = std::move(trusted);
  return std::optional<WorkerHandoff>(std::move(h));
}

}  // namespace tempest::coord
