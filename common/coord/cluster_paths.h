#ifndef TEMPEST_COMMON_COORD_CLUSTER_PATHS_H_
#define TEMPEST_COMMON_COORD_CLUSTER_PATHS_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tempest::coord {

// Every znode path of the cluster state under storm.zookeeper.root, in one
// place (the table of record is docs/znode-layout.md). Nimbus, supervisors
// and workers all name their nodes through this class, so the three sides
// cannot drift apart.
//
// Pure string functions: no I/O, no validation; a value type, safe to copy
// and to use from any thread. `root` is spelled as ClusterZkConfig::root
// keeps it: "" for "/", otherwise absolute without a trailing '/'.
class ClusterPaths {
 public:
  explicit ClusterPaths(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }

  // The root (unless it is "/") and every directory directly under it, top
  // down: the nodes whose ownership daemons check at start
  // (coord::EnsureOwnedNodes), since everything else hangs below them.
  std::vector<std::string> OwnedDirectories() const;

  // {root}/storms and {root}/storms/{topology-id}: StormBase records.
  std::string Storms() const;
  std::string Storm(std::string_view topology_id) const;
  // {root}/assignments and {root}/assignments/{topology-id}: Assignment.
  std::string Assignments() const;
  std::string Assignment(std::string_view topology_id) const;
  // {root}/supervisors and {root}/supervisors/{supervisor-id}: SupervisorInfo.
  std::string Supervisors() const;
  std::string Supervisor(std::string_view supervisor_id) const;
  // {root}/nimbuses and {root}/nimbuses/{host:port}: NimbusSummary.
  std::string Nimbuses() const;
  std::string Nimbus(std::string_view nimbus_id) const;
  // {root}/workerbeats, {root}/workerbeats/{topology-id} and its beats
  // {root}/workerbeats/{topology-id}/{node}-{port}: WorkerHeartbeat.
  std::string WorkerBeats() const;
  std::string WorkerBeatsOf(std::string_view topology_id) const;
  std::string WorkerBeat(std::string_view topology_id, std::string_view beat_name) const;
  std::string WorkerBeat(std::string_view topology_id, std::string_view node, int port) const;
  // "{node}-{port}": the name of a worker's beat node.
  static std::string WorkerBeatName(std::string_view node, int port);
  // {root}/leader: the LeaderElection path of the nimbuses, and one of its
  // participants' nodes, {root}/leader/n_{seq}.
  std::string Leader() const;
  std::string LeaderNode(std::string_view name) const;
  // {root}/blobs and {root}/blobs/{key}: chunked topology resources.
  std::string Blobs() const;
  std::string Blob(std::string_view key) const;
  // {root}/errors, {root}/errors/{topology-id} and
  // {root}/errors/{topology-id}/{component-id}, whose e{seq} children are
  // the component's newest errors (JSON, written by workers).
  std::string Errors() const;
  std::string ErrorsOfTopology(std::string_view topology_id) const;
  std::string ErrorsOf(std::string_view topology_id, std::string_view component_id) const;
  // {root}/credentials and {root}/credentials/{topology-name}: the
  // topology's own ZooKeeper identity (topology_identity.h), readable by the
  // cluster identity only. Keyed by name, not id: a resubmitted topology
  // keeps its identity, and with it its KafkaSpouts' offset nodes.
  std::string Credentials() const;
  std::string Credential(std::string_view topology_name) const;
  // {root}/workerfailures, {root}/workerfailures/{topology-id} and its
  // records {root}/workerfailures/{topology-id}/{node}-{port}: the
  // supervisor's JSON record of the slot's failed workers
  // (supervisor/worker_exit_record.h).
  std::string WorkerFailures() const;
  std::string WorkerFailuresOf(std::string_view topology_id) const;

 private:
  std::string Under(std::string_view dir) const;

  std::string root_;
};

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_CLUSTER_PATHS_H_
