#ifndef TEMPEST_TESTS_SYSTEM_MULTIHOST_MULTIHOST_WORLD_H_
#define TEMPEST_TESTS_SYSTEM_MULTIHOST_MULTIHOST_WORLD_H_

// A Tempest cluster spread over network-namespace hosts
// (devcluster::NetnsCluster on devcluster::NetnsHosts), plus the REST and
// CLI helpers the tests use: a 3-member ZooKeeper ensemble on zk1..zk3, a
// nimbus on each of nimbus1 and nimbus2 (one leads, one stands by), a
// supervisor with two slots on each of sup1..sup3, the dev Kafka (`tempest
// dev-kafka`, topics kKafkaTopics with 3 partitions each, its broker registry in
// the ensemble) on host "kafka", and a host "client" that
// the calling thread moves onto, so the test talks to the cluster from
// outside it, as a user's machine would. Every daemon binds to and
// advertises its own host's address; nothing listens on loopback for others.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "devcluster/netns_cluster.h"
#include "devcluster/netns_hosts.h"
#include "nlohmann/json.hpp"

namespace tempest::testing {

// Owns the hosts, the ensemble and every daemon; the destructor stops the
// daemons and deletes the hosts (killing anything left on them). Use from
// one long-lived thread: it enters the client host and starts children.
class MultiHostWorld {
 public:
  static constexpr int kSupervisors = 3;
  static constexpr int kUiPort = devcluster::NetnsCluster::kUiPort;
  // One topic per KafkaSpout case.
  static constexpr const char* kKafkaTopics[] = {"mh-at-least-once", "mh-at-most-once"};

  // Starts everything under `dir` (configs, logs, local dirs) with the
  // tempest binary `binary`, and waits until both nimbuses serve and all
  // three supervisors are registered.
  static absl::StatusOr<std::unique_ptr<MultiHostWorld>> Start(const std::string& dir,
                                                               const std::string& binary);
  ~MultiHostWorld();

  devcluster::NetnsHosts& hosts() { return cluster_->hosts(); }
  devcluster::NetnsCluster& cluster() { return *cluster_; }
  int HostIndex(const std::string& name) const { return cluster_->HostIndex(name); }
  const std::string& Address(const std::string& name) const { return cluster_->Address(name); }
  // "sup1".."sup3" by index 0..2.
  static std::string SupervisorHost(int i) { return devcluster::NetnsCluster::SupervisorHost(i); }

  // The ensemble's connect string (every member's host:2181).
  std::string ZkConnect() const { return cluster_->ZkConnect(); }
  // The dev Kafka's bootstrap servers: 127.0.0.1:PORT, which every host
  // reaches across the bridge (NetnsHosts::ShareLoopbackPort), because the
  // mock brokers listen and advertise on loopback only.
  const std::string& KafkaBootstrap() const { return cluster_->KafkaBootstrap(); }

  // HOST:PORT of each nimbus.
  std::vector<std::string> NimbusAddresses() const { return cluster_->NimbusAddresses(); }
  // GET `path` from the nimbus at `address`, or (empty) from the first
  // nimbus that answers; null when none does.
  nlohmann::json RestGet(const std::string& path, const std::string& address = "") const;
  // HOST:PORT of the nimbus that `address`'s nimbus reports as leader ("" if none).
  std::string Leader(const std::string& address = "") const;
  // The host (storm.local.hostname) of every worker nimbus shows for the
  // topology (workers[].host), one entry per worker.
  std::vector<std::string> WorkerHosts(const std::string& topology_id) const;

  // `tempest ARGS... --nimbus NIMBUS` (empty: the first nimbus) run on the
  // client host; its stdout, or an error with its output.
  absl::StatusOr<std::string> Tempest(const std::vector<std::string>& args,
                                      std::chrono::milliseconds timeout,
                                      const std::string& nimbus = "") const;

  // `tempest ARGS... --config FILE` run on the client host, where FILE holds
  // only `nimbus.seeds: SEEDS` and ui.port: how a user's machine finds nimbus.
  absl::StatusOr<std::string> TempestWithSeeds(const std::vector<std::string>& args,
                                               const std::vector<std::string>& seeds,
                                               std::chrono::milliseconds timeout) const;

  // Daemon logs, for failure messages.
  std::string LogTails() const { return cluster_->LogTails(); }

 private:
  MultiHostWorld(std::string dir, std::string binary)
      : dir_(std::move(dir)), binary_(std::move(binary)) {}

  std::string dir_;
  std::string binary_;
  std::unique_ptr<devcluster::NetnsCluster> cluster_;
};

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SYSTEM_MULTIHOST_MULTIHOST_WORLD_H_
