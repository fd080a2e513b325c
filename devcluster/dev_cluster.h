#ifndef TEMPEST_DEVCLUSTER_DEV_CLUSTER_H_
#define TEMPEST_DEVCLUSTER_DEV_CLUSTER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coord/zk_ensemble.h"
#include "common/coord/zk_server.h"
#include "common/kafka/dev_kafka_cluster.h"
#include "common/os/child_process.h"

namespace tempest::devcluster {

// `text` as a double-quoted YAML scalar (paths may hold any character).
std::string YamlQuoted(const std::string& text);

// What every daemon of a cluster reads from its tempest.yaml: short
// timeouts, so that faults are detected and repaired within seconds, and by
// default (DevCluster) 127.0.0.1 everywhere and an ephemeral UI port.
// NetnsCluster sets a host's own address and the multi-host keys.
struct ClusterConfig {
  std::string zk_root;
  int zk_session_timeout_ms = 4000;
  int zk_connection_timeout_ms = 4000;
  int zk_port = 0;                        // storm.zookeeper.port; 0: not written
  std::string hostname = "127.0.0.1";     // storm.local.hostname
  std::vector<std::string> nimbus_seeds;  // nimbus.seeds; empty: not written
  std::string log_dir;                    // tempest.log.dir; empty: the daemons' default
  // ui.host; empty: not written, so the UI follows storm.local.hostname.
  std::string ui_host = "127.0.0.1";
  int ui_port = 0;  // 0: an ephemeral port
  // Written when set: supervisor.slots.ports, tempest.supervisor.metrics.port,
  // storm.local.dir and tempest.supervisor.worker.slot.uid.base.
  std::vector<int> slot_ports;
  int supervisor_metrics_port = 0;
  std::string local_dir;
  std::optional<int64_t> slot_uid_base;
  std::vector<std::string> extra_lines;  // further `key: value` lines, appended as given
};

// The text of that tempest.yaml, the one writer of its keys, for a cluster
// whose ZooKeeper servers are `zk_servers` (storm.zookeeper.servers, each
// quoted; DevCluster gives its whole connect string as one).
std::string ClusterConfigYaml(const std::vector<std::string>& zk_servers,
                              const ClusterConfig& config);

// One `tempest` child process of the cluster: its log (stdout and stderr)
// and the arguments it is restarted with.
// Starts `argv` with stdout and stderr appended to `log` and waits up to
// `timeout` for its line starting with `ready_prefix` (returned without the
// prefix); `label` names the daemon in errors. The started process is put
// in `process` even when it never gets ready, so the caller can stop it.
absl::StatusOr<std::string> StartDaemonProcess(const std::vector<std::string>& argv,
                                               const std::string& log,
                                               const std::string& ready_prefix,
                                               std::chrono::milliseconds timeout,
                                               const std::string& label,
                                               std::unique_ptr<os::ChildProcess>& process);

struct Daemon {
  std::string name;
  std::string log;
  std::vector<std::string> argv;
  std::string ready_prefix;  // the log line that says it serves
  std::unique_ptr<os::ChildProcess> process;
  std::vector<int> slot_ports;  // supervisors only
  int metrics_port = 0;         // supervisors only: GET /metrics on 127.0.0.1 (0: off)
};

// A whole cluster on 127.0.0.1, assembled step by step: ZooKeeper (one
// standalone coord::ZkServer or a coord::ZkEnsemble), a dev Kafka (in this
// process, or as a `tempest dev-kafka` child), nimbuses and supervisors as
// child processes of the `tempest` binary. It backs `tempest dev`, `tempest
// study`'s world and the system tests' cluster fixture; each keeps its own
// naming of logs and local directories and its own stop order, and uses the
// per-daemon levers (kill, restart) it needs.
//
// Daemons get either a tempest.yaml this class writes (Options::config) or,
// without one, the ZooKeeper address as a `-c` override after
// Options::daemon_args (how `tempest dev` layers the user's config).
//
// Owns every process and server; the destructor kills what still runs.
// Not thread-safe: drive it from one long-lived thread (child processes die
// with the thread that started them).
class DevCluster {
 public:
  struct Options {
    std::string binary;  // the tempest binary the daemons run; empty: this process's binary
    std::string log_dir;  // daemon logs: <log_dir>/<name><log_suffix>
    std::string log_suffix = ".log";
    // A (re)started daemon's log is removed first, so only its new ready
    // line counts; otherwise the old log is kept as <log>.1 (one earlier
    // run), which also keeps a stale ready line from being read as new.
    bool fresh_logs = true;
    std::chrono::seconds start_timeout{90};  // per daemon, until its ready line

    // 0: one standalone coord::ZkServer (ZkServerConfig's tick) in zk_dir;
    // 1 or 3: a coord::ZkEnsemble in zk_dir (empty: a temp dir it owns).
    int zookeepers = 0;
    int zk_tick_ms = 250;  // ensemble only
    std::string zk_dir;

    // Written to config_path once ZooKeeper runs and given to every daemon
    // as --config; nullopt: no file (see the class comment).
    std::optional<ClusterConfig> config;
    std::string config_path;
    // After each daemon's own arguments.
    std::vector<std::string> daemon_args;
    // Each supervisor serves /metrics on a free loopback port of its own
    // (tempest.supervisor.metrics.port; Daemon::metrics_port).
    bool supervisor_metrics = false;
  };

  explicit DevCluster(Options options) : options_(std::move(options)) {}
  ~DevCluster() = default;
  DevCluster(const DevCluster&) = delete;
  DevCluster& operator=(const DevCluster&) = delete;

  const Options& options() const { return options_; }

  // Starts ZooKeeper, waits until it serves, then writes the config file.
  absl::Status StartZooKeeper();
  std::string zk_connect() const;
  // Null unless Options::zookeepers > 0.
  coord::ZkEnsemble* ensemble() { return ensemble_.get(); }
  const coord::ZkEnsemble* ensemble() const { return ensemble_.get(); }

  // The dev Kafka in this process (faults reach it through kafka()).
  absl::Status StartKafka(const std::vector<kafka::DevKafkaTopic>& topics);
  kafka::DevKafkaCluster& kafka() { return *kafka_; }
  // The dev Kafka as a `tempest dev-kafka --zk ...` child named "kafka";
  // returns its bootstrap servers.
  absl::StatusOr<std::string> StartKafkaProcess();
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }

  // Starts one more nimbus and returns its address (host:port). `args` go
  // after `nimbus` (and the cluster's --config), before Options::daemon_args;
  // a restart reuses them.
  absl::StatusOr<std::string> AddNimbus(const std::string& name,
                                        std::vector<std::string> args = {});
  // Starts nimbus i again (after a kill) and returns its new address.
  absl::StatusOr<std::string> RestartNimbus(int i);
  int nimbus_count() const { return static_cast<int>(nimbuses_.size()); }
  Daemon& nimbus(int i) { return nimbuses_.at(i); }
  const std::string& nimbus_address(int i) const { return nimbus_addresses_.at(i); }

  // Starts one more supervisor with `slots` free loopback ports as its slots
  // and `local_dir` as storm.local.dir; returns its `supervisor=` value.
  absl::StatusOr<std::string> AddSupervisor(const std::string& name, const std::string& local_dir,
                                            int slots);
  // Starts supervisor i again, on the same slots and local dir.
  absl::Status RestartSupervisor(int i);
  int supervisor_count() const { return static_cast<int>(supervisors_.size()); }
  Daemon& supervisor(int i) { return supervisors_.at(i); }
  const std::vector<int>& slot_ports(int i) const { return supervisors_.at(i).slot_ports; }
  // Supervisor i's /metrics port (0 without Options::supervisor_metrics).
  int metrics_port(int i) const { return supervisors_.at(i).metrics_port; }

  // Every daemon in start order: the Kafka child, the nimbuses, the supervisors.
  std::vector<Daemon*> Daemons();
  // Stops (SIGTERM, then SIGKILL after `grace`) in index order.
  void StopSupervisors(std::chrono::milliseconds grace);
  void StopNimbuses(std::chrono::milliseconds grace);
  // Stops every daemon in reverse start order (supervisors first, so they
  // stop their workers cleanly), then ZooKeeper.
  void StopAll(std::chrono::milliseconds grace);

 private:
  absl::Status StartStandaloneZooKeeper();
  absl::Status WriteConfig() const;
  // argv of `tempest VERB OWN_ARGS...` with the cluster's configuration.
  absl::StatusOr<std::vector<std::string>> DaemonArgv(std::vector<std::string> verb_and_args);
  absl::StatusOr<Daemon> MakeDaemon(const std::string& name,
                                    std::vector<std::string> verb_and_args,
                                    const std::string& ready_prefix);
  // (Re)starts `daemon` and returns the rest of its ready line.
  absl::StatusOr<std::string> Launch(Daemon& daemon);

  Options options_;
  std::unique_ptr<coord::ZkServer> server_;
  std::unique_ptr<coord::ZkEnsemble> ensemble_;
  std::unique_ptr<kafka::DevKafkaCluster> kafka_;
  std::string bootstrap_servers_;
  // Declared after ZooKeeper and Kafka, so they die first.
  std::optional<Daemon> kafka_process_;
  std::vector<Daemon> nimbuses_;
  std::vector<std::string> nimbus_addresses_;
  std::vector<Daemon> supervisors_;
};

}  // namespace tempest::devcluster

#endif  // TEMPEST_DEVCLUSTER_DEV_CLUSTER_H_
