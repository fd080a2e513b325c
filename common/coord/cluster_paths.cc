#include "common/coord/cluster_paths.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace tempest::coord {
namespace {
// This Debian build of absl has its own string_view type.
absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

std::string Child(const std::string& parent, std::string_view child) {
  return absl::StrCat(parent, "/", Av(child));
}
}  // namespace

std::string ClusterPaths::Under(std::string_view dir) const { return Child(root_, dir); }

std::vector<std::string> ClusterPaths::OwnedDirectories() const {
  std::vector<std::string> out;
  if (!root_.empty()) out.push_back(root_);
  for (std::string dir : {Storms(), Assignments(), Supervisors(), Nimbuses(), WorkerBeats(),
                          Leader(), Blobs(), Errors(), Credentials(), WorkerFailures()}) {
    out.push_back(std::move(dir));
  }
  return out;
}

std::string ClusterPaths::Storms() const { return Under("storms"); }
std::string ClusterPaths::Storm(std::string_view topology_id) const {
  return Child(Storms(), topology_id);
}

std::string ClusterPaths::Assignments() const { return Under("assignments"); }
std::string ClusterPaths::Assignment(std::string_view topology_id) const {
  return Child(Assignments(), topology_id);
}

std::string ClusterPaths::Supervisors() const { return Under("supervisors"); }
std::string ClusterPaths::Supervisor(std::string_view supervisor_id) const {
  return Child(Supervisors(), supervisor_id);
}

std::string ClusterPaths::Nimbuses() const { return Under("nimbuses"); }
std::string ClusterPaths::Nimbus(std::string_view nimbus_id) const {
  return Child(Nimbuses(), nimbus_id);
}

std::string ClusterPaths::WorkerBeats() const { return Under("workerbeats"); }
std::string ClusterPaths::WorkerBeatsOf(std::string_view topology_id) const {
  return Child(WorkerBeats(), topology_id);
}
std::string ClusterPaths::WorkerBeat(std::string_view topology_id,
                                     std::string_view beat_name) const {
  return Child(WorkerBeatsOf(topology_id), beat_name);
}
std::string ClusterPaths::WorkerBeat(std::string_view topology_id, std::string_view node,
                                     int port) const {
  return WorkerBeat(topology_id, WorkerBeatName(node, port));
}
std::string ClusterPaths::WorkerBeatName(std::string_view node, int port) {
  return absl::StrCat(Av(node), "-", port);
}

std::string ClusterPaths::Leader() const { return Under("leader"); }
std::string ClusterPaths::LeaderNode(std::string_view name) const { return Child(Leader(), name); }

std::string ClusterPaths::Blobs() const { return Under("blobs"); }
std::string ClusterPaths::Blob(std::string_view key) const { return Child(Blobs(), key); }

std::string ClusterPaths::Errors() const { return Under("errors"); }
std::string ClusterPaths::Credentials() const { return Under("credentials"); }
std::string ClusterPaths::Credential(std::string_view topology_name) const {
  return Child(Credentials(), topology_name);
}
std::string ClusterPaths::WorkerFailures() const { return Under("workerfailures"); }
std::string ClusterPaths::WorkerFailuresOf(std::string_view topology_id) const {
  return Child(WorkerFailures(), topology_id);
}
std::string ClusterPaths::ErrorsOfTopology(std::string_view topology_id) const {
  return Child(Errors(), topology_id);
}
std::string ClusterPaths::ErrorsOf(std::string_view topology_id,
                                   std::string_view component_id) const {
  return Child(ErrorsOfTopology(topology_id), component_id);
}

}  // namespace tempest::coord
