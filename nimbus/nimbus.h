#ifndef TEMPEST_NIMBUS_NIMBUS_H_
#define TEMPEST_NIMBUS_NIMBUS_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/config.h"
#include "common/coord/leader_election.h"
#include "common/coord/retry_policy.h"
#include "common/coord/serial_executor.h"
#include "common/coord/zk_session.h"
#include "common/core/clock.h"
#include "common/core/config/config_loader.h"
#include "common/net/http_auth.h"
#include "nimbus/heartbeat_cache.h"
#include "nimbus/kafka_lag_cache.h"
#include "nimbus/nimbus_peer.h"
#include "nimbus/rebalance.h"
#include "nimbus/stats_history.h"
#include "nimbus/topology_store.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::net {
class EventLoop;
class HttpServer;
}  // namespace tempest::net

namespace tempest::nimbus {

struct NimbusOptions {
  std::string zk_connect;            // "host:port,host:port"
  std::string root = "/tempest";     // storm.zookeeper.root
  coord::ZkClientConfig zk;          // storm.zookeeper.* timeouts and retries
  std::string bind_host = "127.0.0.1";  // ui.host; unset: storm.local.hostname, else 127.0.0.1
  // The host others reach this nimbus at: its id, registration and leader
  // node. Empty: bind_host. With a wildcard ui.host, storm.local.hostname
  // when set, so peers on other machines are not sent to 0.0.0.0.
  std::string advertise_host{};
  int port = 8080;                   // ui.port; 0 = ephemeral
  // How often the leader reconciles (removes killed topologies whose wait is
  // over, schedules) even when nothing woke it: nimbus.monitor.freq.secs.
  std::chrono::milliseconds monitor_interval{10000};
  // nimbus.task.timeout.secs, nimbus.task.launch.secs,
  // nimbus.supervisor.timeout.secs.
  LivenessTimeouts liveness;
  // Bound of every API call, ZooKeeper round trips included.
  std::chrono::milliseconds op_timeout{10000};
  // Validates submissions; must outlive the nimbus.
  const api::ComponentRegistry* registry = nullptr;
  core::Clock* clock = &core::RealClock();
  // Who may call the REST API: tempest.api.token.file, tempest.api.auth.reads,
  // nimbus.authorizer (net::HttpAuthPolicyFromConfig).
  net::HttpAuthPolicy api_auth;
  // REST limits (tempest.api.max.body.bytes, tempest.api.max.header.bytes,
  // tempest.api.request.timeout.secs). A submission carries its resources
  // base64-encoded in the body (core::kMaxResourceBytes = 16 MiB, 4/3 of
  // that encoded), hence the body default.
  size_t api_max_body_bytes = 24 << 20;
  size_t api_max_header_bytes = 16 << 10;
  std::chrono::milliseconds api_request_timeout{30000};
  // The contents of tempest.cluster.secret.file: each topology's transport
  // secret derives from it. Empty: random secrets (nimbus/transport_secrets.h).
  std::string cluster_secret;
  // The daemon's whole config, served (secrets redacted) as
  // /api/v1/cluster/configuration.
  api::Config config;
  // Where each key of `config` came from (core::ConfigLoader::LoadEffective),
  // served by /api/v1/cluster/configuration?origin=1; a key without one
  // reads as set by the program that started nimbus.
  core::ConfigOrigins config_origins;

  // storm.zookeeper.servers/port/root/session.timeout/retry.*, ui.host,
  // ui.port, nimbus.monitor.freq.secs, nimbus.task.timeout.secs,
  // nimbus.task.launch.secs, nimbus.supervisor.timeout.secs,
  // tempest.cluster.secret.file. InvalidArgument for unusable values (a
  // missing, empty, oversized or short cluster secret file among them).
  static absl::StatusOr<NimbusOptions> FromConfig(const api::Config& config);
};

// The nimbus daemon: stores and schedules topologies in ZooKeeper and
// serves the REST API.
//
// Owns a ZkSession, its registration node {root}/nimbuses/{host:port}, a
// LeaderElection under {root}/leader, the control thread (a SerialExecutor)
// and the HTTP server with its own EventLoop thread.
//
// Threads: every ZooKeeper write is made on the control thread, which runs
// the reconcile loop (re-register, remove killed topologies whose wait is
// over, schedule) every monitor interval and after each accepted write.
// Write API calls (Submit, Activate, ...) may come from any thread: they
// run on the control thread and the caller waits for at most op_timeout.
// Read calls run on the caller's thread. HTTP handlers call both from the
// EventLoop thread, which is the nimbus's own and may block for that long.
//
// Only the leader writes: on a standby, write calls return Unavailable
// naming the leader ("not the leader; the leader is host:port").
//
// The class is defined in one file per job: nimbus.cc (start, stop, the
// API calls), nimbus_options.cc (NimbusOptions::FromConfig),
// nimbus_leadership.cc (registration, election, the leader check),
// nimbus_reconcile.cc (the reconcile loop), nimbus_schedule.cc (liveness
// and assignments) and nimbus_http.cc (the REST server).
class Nimbus {
 public:
  static absl::StatusOr<std::unique_ptr<Nimbus>> Create(NimbusOptions options);
  // Stops serving, leaves the election and closes the session (so the
  // standby takes over without waiting for a session timeout).
  ~Nimbus();
  Nimbus(const Nimbus&) = delete;
  Nimbus& operator=(const Nimbus&) = delete;

  const std::string& host() const { return options_.bind_host; }
  // What peers and clients are given: NimbusOptions::advertise_host, else the bind host.
  const std::string& AdvertisedHost() const {
    return options_.advertise_host.empty() ? options_.bind_host : options_.advertise_host;
  }
  int port() const { return port_; }
  // host:port: the participant id and the name of the registration node.
  const std::string& id() const { return id_; }
  bool IsLeader() const;
  // The current leader's id, read from ZooKeeper.
  absl::StatusOr<std::string> Leader() const;

  // --- writes (leader only) ---
  absl::StatusOr<std::string> Submit(const SubmitRequest& request);
  absl::StatusOr<v1::StormBase> Activate(const std::string& id);
  absl::StatusOr<v1::StormBase> Deactivate(const std::string& id);
  // wait_secs: nullopt = the topology's topology.message.timeout.secs.
  absl::StatusOr<v1::StormBase> Kill(const std::string& id, std::optional<int> wait_secs);
  // Storm's rebalance: REBALANCING now; after the wait (default: the
  // message timeout) the new worker/executor counts are applied, the
  // executors are placed as a change of the current assignment
  // (PlanRebalance) and the previous status is restored.
  absl::StatusOr<v1::StormBase> Rebalance(const std::string& id, const RebalanceRequest& request);

  // --- reads (any nimbus) ---
  absl::StatusOr<std::vector<StoredTopology>> Topologies();
  absl::StatusOr<StoredTopology> Topology(const std::string& id);
  absl::StatusOr<std::optional<v1::Assignment>> AssignmentOf(const std::string& id);
  absl::StatusOr<std::vector<v1::SupervisorInfo>> Supervisors();
  // The worker heartbeats stored for a topology (empty if none).
  absl::StatusOr<std::vector<StoredBeat>> WorkerBeats(const std::string& id);
  // The errors its workers published, oldest first.
  absl::StatusOr<std::vector<StoredError>> Errors(const std::string& id);
  // The supervisors' records of its failed workers.
  absl::StatusOr<std::vector<StoredWorkerFailure>> WorkerFailures(const std::string& id);
  absl::StatusOr<std::vector<NimbusPeer>> Nimbuses();
  // Each KafkaSpout's lag, measured from the log end (kafka_lag_cache.h).
  absl::StatusOr<std::vector<spout::SpoutLag>> KafkaLag(const StoredTopology& topology);
  // Each KafkaSpout as its stored definition configures it (measures nothing).
  absl::StatusOr<std::vector<spout::SpoutLagTarget>> KafkaSpouts(const StoredTopology& topology);
  int64_t launch_time_secs() const { return launch_time_secs_; }
  core::Clock& clock() const { return *options_.clock; }
  const net::HttpAuthPolicy& api_auth() const { return options_.api_auth; }
  // Whether ZooKeeper can answer reads now (the session is connected, or
  // read-only); false while it is suspended, lost or reconnecting.
  bool ZooKeeperReachable() const;
  const api::Config& config() const { return options_.config; }
  const core::ConfigOrigins& config_origins() const {
    return options_.config_origins;
  }
  // The executors' statistics as this nimbus has watched them (windows).
  StatsHistory& stats_history() { return stats_history_; }

  // Runs one reconcile round on the control thread and waits for it (tests
  // and tools; the loop runs by itself anyway).
  absl::Status ReconcileNow();

  // Closes the ZooKeeper session at once, as a crash would (tests).
  void CloseSessionForTest();

 private:
  struct SchedulingRound;

  explicit Nimbus(NimbusOptions options);
  // Holds the control thread until StartServing is over.
  absl::Status Start();
  // Connects, opens the REST port, registers and joins the election.
  absl::Status StartServing();
  absl::Status ConnectZooKeeper();
  absl::Status StartHttp();
  absl::Status JoinElection();
  // Runs `fn` on the control thread; waits up to op_timeout.
  template <typename T>
  absl::StatusOr<T> OnControl(std::function<absl::StatusOr<T>()> fn);
  // When a write that arrives now stops waiting for the election to settle.
  core::Clock::TimePoint LeadershipDeadline() const;
  // OK on the leader. Waits for the election (until `deadline`) while it
  // has not settled; then Unavailable naming the leader, if one is known.
  absl::Status CheckLeader(core::Clock::TimePoint deadline) const;
  // Control thread only.
  absl::Status Reconcile();
  // A round `event` calls for (unless stopping); a failure is logged.
  void ReconcileAfter(std::string_view event);
  // Removes a killed topology whose wait is over, or applies a due
  // rebalance (adding it to `rebalanced`). False when `t` is gone.
  absl::StatusOr<bool> ApplyDueTransition(StoredTopology& t, int64_t now_secs,
                                          std::set<std::string>* rebalanced);
  absl::StatusOr<bool> FinishDueRebalance(StoredTopology& t, std::set<std::string>* rebalanced);
  // Feeds the round's beats to the statistics windows.
  void RecordStatistics(const std::vector<StoredTopology>& topologies,
                        const std::map<std::string, v1::Assignment>& assignments,
                        const std::map<std::string, std::vector<StoredBeat>>& beats);
  // Posts a round for each kill or rebalance due before the next periodic one.
  void PostDueRounds(const std::vector<StoredTopology>& topologies, int64_t now_secs);
  absl::Status Register();
  // Deletes the nimbuses/ and leader/ nodes an earlier process of this id
  // left (another session); see the .cc.
  void RemoveStaleNodesOfThisId();
  // Monitors liveness and schedules; fills the assignment of every
  // topology after the round and the beats it read.
  absl::Status Schedule(const std::vector<StoredTopology>& topologies,
                        const std::set<std::string>& rebalanced,
                        std::map<std::string, v1::Assignment>* final_assignments,
                        std::map<std::string, std::vector<StoredBeat>>* beats);
  // One topology's scheduler input; records its assignment, dead slots and
  // beats in `round` and `beats`.
  absl::StatusOr<TopologySchedulingInput> ReadSchedulingInput(
      const StoredTopology& t, bool rebalanced, SchedulingRound& round,
      std::map<std::string, std::vector<StoredBeat>>* beats);
  // Liveness of one topology's executors (Storm's HeartbeatCache): adds the
  // slots that hold a dead executor to `dead_slots`.
  void FindDeadSlots(const std::string& topology_id, const v1::Assignment& assignment,
                     const std::vector<StoredBeat>& beats, core::Clock::TimePoint now,
                     int64_t now_secs, std::set<WorkerSlot>* dead_slots);
  // Stores the assignment of every topology the scheduler `changed` (and a
  // secret in a kept one that has none); fills `final_assignments`.
  // `rebalanced`: the topologies whose rebalance this round applied (the
  // reason their change records).
  absl::Status WriteAssignments(const std::vector<StoredTopology>& topologies,
                                const std::map<std::string, v1::Assignment>& current,
                                const std::map<std::string, ExecutorSlots>& changed,
                                const std::set<std::string>& rebalanced,
                                const std::map<std::string, std::string>& hosts, int64_t now_secs,
                                std::map<std::string, v1::Assignment>* final_assignments);
  // A topology's stored assignment the scheduler left alone, given the
  // transport secret it should carry (and stored again if that changed it).
  // Its version and last_change stay: no executor moved, so workers have
  // nothing new to apply.
  absl::StatusOr<v1::Assignment> KeepAssignment(const StoredTopology& t,
                                                const v1::Assignment& stored);
  // Deletes the workerbeats and published errors of topologies that no
  // longer exist, and the beats of slots a topology no longer has.
  absl::Status CleanWorkerBeats(const std::vector<StoredTopology>& topologies,
                                const std::map<std::string, v1::Assignment>& assignments,
                                const std::map<std::string, std::vector<StoredBeat>>& beats);
  // The workerbeats, errors and failure records of topologies not `known`.
  absl::Status RemoveNodesOfGoneTopologies(const std::set<std::string>& known);
  void WatchSupervisors();
  void ScheduleNextRound();

  NimbusOptions options_;
  int64_t launch_time_secs_ = 0;
  int port_ = 0;
  std::string id_;
  std::unique_ptr<coord::ZkSession> session_;
  std::unique_ptr<TopologyStore> store_;
  std::unique_ptr<KafkaLagCache> lag_cache_;
  std::unique_ptr<coord::LeaderElection> election_;
  std::shared_ptr<coord::SerialExecutor> control_ = std::make_shared<coord::SerialExecutor>();
  std::atomic<bool> stopping_{false};
  // Control thread only.
  HeartbeatCache cache_{LivenessTimeouts{}};
  StatsHistory stats_history_;
  // A child watch on {root}/supervisors is pending (one at a time).
  std::atomic<bool> supervisors_watched_{false};
  std::unique_ptr<net::EventLoop> loop_;
  std::unique_ptr<net::HttpServer> http_;
};

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_NIMBUS_H_
