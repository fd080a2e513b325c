#ifndef TEMPEST_DEVCLUSTER_NETNS_CLUSTER_H_
#define TEMPEST_DEVCLUSTER_NETNS_CLUSTER_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coord/zk_ensemble.h"
#include "common/os/child_process.h"
#include "devcluster/netns_hosts.h"

namespace tempest::devcluster {

// A Tempest cluster spread over network-namespace hosts (NetnsHosts), each
// daemon on a host of its own, binding to and advertising that host's
// address:
//   zk1..zkN          a ZooKeeper ensemble member each (ports 2181/2888/3888)
//   nimbus1..nimbusN  `tempest nimbus` (ui.port kUiPort; one leads)
//   sup1..supN        `tempest supervisor` with slots 6700, 6701, ...
//   kafka             `tempest dev-kafka` with Options::kafka_topics (if any);
//                     its loopback-only brokers are shared with every host
//                     (NetnsHosts::ShareLoopbackPort), so 127.0.0.1:PORT
//                     reaches them from anywhere, across the bridge
//   client            nothing: the calling thread moves onto it, so the
//                     owner talks to the cluster from outside, as a user would
// Each host gets its own tempest.yaml (<dir>/<host>.yaml) and log
// (<dir>/<host>-<verb>.log).
//
// Owns the hosts, the ensemble and every daemon: the destructor stops the
// supervisors (which stop their workers), the nimbuses, the dev Kafka and
// ZooKeeper, then deletes the hosts (killing anything left on them). Drive it
// from one long-lived thread: it enters the client host and starts children
// whose death signal follows that thread.
class NetnsCluster {
 public:
  static constexpr int kUiPort = 8080;
  static constexpr int kFirstSlotPort = 6700;

  struct Options {
    std::string dir;     // configs, logs, local dirs, ZooKeeper data; must exist
    std::string binary;  // the tempest binary
    int zookeepers = 3;  // 1 or 3
    int nimbuses = 2;
    int supervisors = 3;
    int slots_per_supervisor = 2;
    int zk_tick_ms = 500;
    int zk_session_timeout_ms = 6000;
    // Each `NAME:PARTITIONS`; empty: no Kafka host.
    std::vector<std::string> kafka_topics{};
    // Further `key: value` lines for every daemon's tempest.yaml.
    std::vector<std::string> extra_config{};
    std::chrono::seconds start_timeout{60};  // per daemon, until its ready line
  };

  // Removes the hosts a dead earlier run left, makes the hosts, moves the
  // calling thread onto "client", starts everything and waits until each
  // daemon printed its ready line. Errors carry the daemons' log tails.
  static absl::StatusOr<std::unique_ptr<NetnsCluster>> Start(Options options);
  ~NetnsCluster();
  NetnsCluster(const NetnsCluster&) = delete;
  NetnsCluster& operator=(const NetnsCluster&) = delete;

  NetnsHosts& hosts() { return *hosts_; }
  const NetnsHosts& hosts() const { return *hosts_; }
  int HostIndex(const std::string& name) const { return hosts_->Find(name); }
  // The address of host `name` (which must exist).
  const std::string& Address(const std::string& name) const;
  // "sup1".., "nimbus1".. by 0-based index.
  static std::string SupervisorHost(int i) { return "sup" + std::to_string(i + 1); }
  static std::string NimbusHost(int i) { return "nimbus" + std::to_string(i + 1); }

  // Every ensemble member's host:2181.
  std::string ZkConnect() const;
  coord::ZkEnsemble& ensemble() { return *zk_; }
  // 127.0.0.1:PORT,...: valid on every host; empty without a Kafka host.
  const std::string& KafkaBootstrap() const { return kafka_bootstrap_; }
  // HOST:PORT of nimbus i as it printed it.
  const std::vector<std::string>& NimbusAddresses() const { return nimbus_addresses_; }
  // storm.local.dir of supervisor i.
  std::string SupervisorLocalDir(int i) const;

  // Writes host `name`'s tempest.yaml (<dir>/<name>.yaml: its address as
  // storm.local.hostname, the ensemble, nimbus.seeds) and returns its path;
  // "client"'s is what commands run from the client host use.
  absl::StatusOr<std::string> WriteConfig(const std::string& host) const;

  // `argv` as a command run on the client host.
  std::vector<std::string> ClientCommand(const std::vector<std::string>& argv) const {
    return hosts_->Command(HostIndex("client"), argv);
  }

  // SIGKILLs the daemon on host `name` (its workers too, for a supervisor:
  // they die with it), or starts it again with the same arguments and waits
  // for its ready line.
  absl::Status KillDaemon(const std::string& host);
  absl::Status RestartDaemon(const std::string& host);

  // The log of `tempest VERB` on `host` (<dir>/<host>-<verb>.log); a
  // restart starts it afresh.
  std::string DaemonLogPath(const std::string& host, const std::string& verb) const {
    return options_.dir + "/" + host + "-" + verb + ".log";
  }

  // The end of every daemon's and ZooKeeper member's log, for failure messages.
  std::string LogTails() const;

 private:
  struct Daemon {
    std::string host;
    std::string log;
    std::string ready_prefix;
    std::vector<std::string> argv;
    std::unique_ptr<os::ChildProcess> process;
  };

  explicit NetnsCluster(Options options) : options_(std::move(options)) {}
  absl::Status StartAll();
  absl::Status StartKafka();
  // Host `host`'s tempest.yaml, written by ClusterConfigYaml.
  std::string ConfigFor(const std::string& host) const;
  // Starts `tempest VERB --config <host's config> ARGS...` on `host`;
  // returns the rest of its ready line.
  absl::StatusOr<std::string> StartDaemon(const std::string& host, const std::string& verb,
                                          const std::string& ready_prefix,
                                          const std::vector<std::string>& args = {});
  absl::StatusOr<std::string> Launch(Daemon& daemon);
  Daemon* Find(const std::string& host);

  Options options_;
  std::unique_ptr<NetnsHosts> hosts_;
  std::unique_ptr<coord::ZkEnsemble> zk_;
  std::vector<Daemon> daemons_;  // start order: kafka, nimbuses, supervisors
  std::vector<std::string> nimbus_addresses_;
  std::string kafka_bootstrap_;
};

}  // namespace tempest::devcluster

#endif  // TEMPEST_DEVCLUSTER_NETNS_CLUSTER_H_
