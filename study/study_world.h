#ifndef TEMPEST_STUDY_STUDY_WORLD_H_
#define TEMPEST_STUDY_STUDY_WORLD_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coord/retry_policy.h"
#include "common/coord/zk_ensemble.h"
#include "common/kafka/dev_kafka_cluster.h"
#include "common/net/tcp_proxy.h"
#include "common/os/child_process.h"
#include "devcluster/dev_cluster.h"
#include "devcluster/netns_cluster.h"

namespace tempest::study {

// `text` as a double-quoted YAML scalar, for the configuration and the
// topologies the study writes (paths come from the user's --out).
using devcluster::YamlQuoted;

// Everything a study runs against. On one host (the default), on 127.0.0.1: a devcluster::DevCluster
// with a 3-node ZooKeeper ensemble, a dev Kafka cluster (in this process, so
// faults can reach it), a nimbus and N supervisors as child processes of this
// binary; and one TCP proxy per ZooKeeper server through which the spouts
// (only they) reach ZooKeeper, so their sessions can be cut alone.
//
// With Options::hosts, on several hosts instead (docs/multi-host.md): a
// devcluster::NetnsCluster with a 3-member ensemble, a leader and a standby
// nimbus and three supervisors, each on a network-namespace host of its own;
// the calling thread moves onto its "client" host, where the dev Kafka runs
// in this process and is shared with every host (so a partition between a
// host and "client" cuts that host from Kafka). The spouts reach ZooKeeper
// directly there; the partition faults act through multi_host()'s hosts.
//
// Owns every process and server; the destructor stops them (supervisors
// first, so their workers stop too). Not thread-safe: drive it from one
// thread (child processes die with the thread that started them).
class StudyWorld {
 public:
  struct Options {
    std::string dir;          // state, configuration and logs (must exist)
    std::string binary;       // the tempest binary that runs the daemons
    int zookeepers = 3;
    int supervisors = 2;
    int slots_per_supervisor = 6;
    int zk_session_timeout_ms = 4000;
    std::string zk_root = "/tempest-study";
    // The multi-host world (needs root, iproute2 and nftables); `supervisors`
    // hosts of `slots_per_supervisor` slots.
    bool hosts = false;
    // Polled while a tempest command runs (Finish): true ends the wait.
    std::function<bool()> stop_requested = [] { return false; };
  };

  // One worker process, as its supervisor's local files show it.
  struct Worker {
    int supervisor = 0;
    int port = 0;
    pid_t pid = 0;
    std::string topology_id;
    int kafka_partitions = 0;  // partitions its spouts read (0: no KafkaSpout)
    // The assignment version it runs, from its heartbeat (0: not beating yet).
    int64_t assignment_version = 0;
    // Its offset-commit metrics from its heartbeat file: tempest_kafka_spout_*
    // and tempest_zk_* counters and gauges summed over labels, and each
    // histogram's largest value as NAME_max.
    std::map<std::string, int64_t> commit_metrics;
  };

  static absl::StatusOr<std::unique_ptr<StudyWorld>> Start(const Options& options);
  ~StudyWorld();
  StudyWorld(const StudyWorld&) = delete;
  StudyWorld& operator=(const StudyWorld&) = delete;

  const Options& options() const { return options_; }
  std::string zk_connect() const {
    return hosts_cluster_ ? hosts_cluster_->ZkConnect() : cluster_->zk_connect();
  }
  // The proxies' addresses, for a KafkaSpout's zkServers.
  std::vector<std::string> spout_zk_servers() const;
  const std::string& bootstrap_servers() const {
    return hosts_cluster_ ? hosts_kafka_->bootstrap_servers() : cluster_->bootstrap_servers();
  }
  // Digest credentials ("user:password", random per world): the identity
  // scenarios may give their spouts (`storm.zookeeper.auth.payload` in the
  // topology), and an operator's, which the study's own ZooKeeper readers
  // and the zk-acl-revoked fault use. Nothing else in the world has them.
  const std::string& spout_credentials() const { return spout_credentials_; }
  const std::string& operator_credentials() const { return operator_credentials_; }
  // A ZooKeeper client configuration with the spouts' credentials, for the
  // study's readers: it reads open nodes and the spouts' creator-only ones.
  coord::ZkClientConfig reader_zk_config() const;
  // An address on 127.0.0.1 where nothing listens (a port just freed).
  absl::StatusOr<std::string> DeadZkServer() const;
  kafka::DevKafkaCluster& kafka() { return hosts_cluster_ ? *hosts_kafka_ : cluster_->kafka(); }
  coord::ZkEnsemble& zookeeper() {
    return hosts_cluster_ ? hosts_cluster_->ensemble() : *cluster_->ensemble();
  }
  // The multi-host world's cluster and hosts; null on one host.
  devcluster::NetnsCluster* multi_host() { return hosts_cluster_.get(); }
  // Multi-host: the host supervisor i runs on ("sup1", ...).
  static std::string SupervisorHost(int i) { return devcluster::NetnsCluster::SupervisorHost(i); }
  // Multi-host: the host of the nimbus that leads now, as the nimbuses'
  // REST summary says; NotFound when none answers as leader.
  absl::StatusOr<std::string> LeaderNimbusHost() const;

  // Starts `tempest ARGS --config .. --nimbus ..` without waiting; Finish
  // waits for it and returns its stdout, or an error quoting its stderr.
  struct Command {
    std::string name;
    std::unique_ptr<os::ChildProcess> process;
    std::string out, err;
  };
  absl::StatusOr<Command> StartTempest(std::vector<std::string> args);
  absl::StatusOr<std::string> Finish(Command& command, std::chrono::seconds timeout);

  // Faults.
  void KillNimbus();
  absl::Status StartNimbus();
  int supervisor_count() const {
    return hosts_cluster_ ? options_.supervisors : cluster_->supervisor_count();
  }
  // SIGKILLs supervisor i and every worker it runs.
  void KillSupervisor(int i);
  absl::Status StartSupervisor(int i);
  void CutSpoutZooKeeper(bool cut);

  std::vector<Worker> Workers() const;
  // How many of `names` (topology names, which the study also uses as spout
  // ids) appear on a worker.log line, on any slot, that contains `needle`.
  int TopologiesLogging(const std::vector<std::string>& names, std::string_view needle) const;
  // How many worker.log lines, over every slot, contain both `tag` and
  // `needle` (the spouts log as "kafka spout NAME: ...", a worker names its
  // topology as "topology ID").
  int64_t CountWorkerLogLines(const std::string& tag, std::string_view needle) const;
  // Copies the worker.log of every slot last used by a topology whose id
  // starts with one of `name_prefixes` into `dest_dir` (as
  // supervisor-N-PORT.log), before a later topology reuses the slot.
  void CollectWorkerLogs(const std::vector<std::string>& name_prefixes,
                         const std::string& dest_dir) const;

 private:
  explicit StudyWorld(Options options);
  absl::Status StartOnHosts();
  std::string LocalDir(int supervisor) const;
  std::vector<int> SlotPorts(int supervisor) const;
  // "; a worker logged: LINE" with the last error line of the workers' logs,
  // or "" when none logged one: why a submit waiting for its topology to run
  // waited in vain.
  std::string WorkerComplaint() const;
  // Calls `fn` with every worker.log line of every slot that contains `needle`.
  void ForEachWorkerLogLine(std::string_view needle,
                            const std::function<void(std::string_view)>& fn) const;
  absl::Status StartSpoutZkProxies();

  Options options_;
  std::unique_ptr<devcluster::DevCluster> cluster_;  // one host
  // Several hosts: the cluster, the dev Kafka on the client host, and the
  // client's configuration (nimbus.seeds, so commands follow a new leader).
  std::unique_ptr<devcluster::NetnsCluster> hosts_cluster_;
  std::unique_ptr<kafka::DevKafkaCluster> hosts_kafka_;
  std::string client_config_;
  std::vector<std::unique_ptr<net::TcpProxy>> zk_proxies_;
  int commands_ = 0;
  std::string spout_credentials_;
  std::string operator_credentials_;
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_STUDY_WORLD_H_
