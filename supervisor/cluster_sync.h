#ifndef TEMPEST_SUPERVISOR_CLUSTER_SYNC_H_
#define TEMPEST_SUPERVISOR_CLUSTER_SYNC_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/coord/cluster_paths.h"
#include "common/coord/serial_executor.h"
#include "common/coord/zk_session.h"
#include "supervisor/slot_plan.h"
#include "supervisor/supervisor_options.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::supervisor {

// The supervisor's ZooKeeper side: follows {root}/assignments and keeps
// {root}/supervisors/{id} (SupervisorInfo) written (ADR 0011).
//
// Owns the ZkSession, the ephemeral supervisor node and the ZooKeeper thread
// (a SerialExecutor); everything but Connect, RequestSync, Stop and Close
// runs on that thread (post to executor()). Assignment sync keeps a children
// watch on assignments/ and a data watch per assignment (re-armed only once
// they fired), plus a poll every monitor_interval; each result goes to
// `publish` (nullopt when the read failed). The SupervisorInfo is rewritten
// every heartbeat_interval with `used_ports()`, and at once when an exists
// watch sees the node go or a new session starts. Session events and watch
// callbacks only post to the ZooKeeper thread.
class ClusterSync {
 public:
  using PublishFn = std::function<void(std::optional<DesiredSlots>)>;
  ClusterSync(const SupervisorOptions& options, std::string supervisor_id, int64_t started_at_ms,
              PublishFn publish, std::function<std::vector<int>()> used_ports);
  ClusterSync(const ClusterSync&) = delete;
  ClusterSync& operator=(const ClusterSync&) = delete;

  // Caller's thread, once: opens the session (Unavailable when ZooKeeper
  // cannot be reached within the connection timeout), subscribes to its
  // events and makes sure supervisors/ and assignments/ exist.
  absl::Status Connect();

  coord::SerialExecutor& executor() { return *zk_; }

  // ZooKeeper thread. Reads the assignments (arming the watches) and
  // computes this supervisor's desired slots.
  absl::StatusOr<DesiredSlots> SyncAssignments();
  // ZooKeeper thread. SyncAssignments and hands the result to `publish`.
  absl::Status SyncAndPublish();
  // ZooKeeper thread. SyncAndPublish, logging a failure.
  void SyncOrLog();
  // ZooKeeper thread. Writes (or creates) the supervisor node.
  absl::Status Register();
  // ZooKeeper thread. Writes the exit record of our slot `port` of
  // `topology_id` ({root}/workerfailures/{topology}/{id}-{port}), or removes
  // it when `record` is nullopt; a failure is logged (the next exit writes
  // again).
  void WriteExitRecord(const std::string& topology_id, int port,
                       const std::optional<std::string>& record);
  // Starts the heartbeat and the assignment poll (after the first Register).
  void StartLoops();
  // Any thread: a SyncAndPublish on the ZooKeeper thread soon.
  void RequestSync();

  // Any thread: no more syncs or registrations; stops the ZooKeeper thread.
  void Stop();
  // After Stop: unsubscribes, deletes the supervisor node when
  // `delete_node` (and connected) and closes the session.
  void Close(bool delete_node);

  const coord::ZkSession& session() const { return *session_; }
  std::string NodePath() const { return paths_.Supervisor(id_); }

 private:
  int64_t NowMs() const;
  absl::Status ArmNodeWatch();
  void OnSessionEvent(const coord::ZkSessionEvent& event);
  // A watch callback that runs `on_zk` on the ZooKeeper thread.
  coord::ZkWatchFn PostingWatch(std::function<void(const coord::ZkWatchEvent&)> on_zk);
  // The assignment ids under assignments/ (re-arming the children watch).
  absl::StatusOr<std::vector<std::string>> AssignmentIds();
  // One assignment (re-arming its data watch); the last one that parsed
  // when it does not parse; nullopt when it is gone or never parsed.
  absl::StatusOr<std::optional<v1::Assignment>> ReadAssignment(const std::string& topology_id);
  void LogChanges(const DesiredSlots& desired);
  // At start: removes the exit records our previous run left.
  void RemoveOwnExitRecords();
  // Gives each slot its topology's identity handoff (with ZooKeeper auth on);
  // drops the slots of a topology that has no identity, saying so once.
  absl::Status AddIdentities(DesiredSlots& desired);
  void HeartbeatLoop();
  void MonitorLoop();
  void LogFailure(std::string_view what, const absl::Status& status) const;

  const SupervisorOptions options_;
  const std::string id_;
  const int64_t started_at_ms_;
  const coord::ClusterPaths paths_;
  const PublishFn publish_;
  const std::function<std::vector<int>()> used_ports_;
  std::unique_ptr<coord::ZkSession> session_;
  int listener_ = 0;
  // Shared (weakly) with ZooKeeper callbacks, which may fire after we are
  // gone; a stopped executor ignores their posts.
  std::shared_ptr<coord::SerialExecutor> zk_ = std::make_shared<coord::SerialExecutor>();
  std::atomic<bool> stopping_{false};

  // ZooKeeper-thread state.
  std::map<std::string, v1::Assignment> last_good_;  // topology id -> last assignment that parsed
  std::set<std::string> reported_problems_;
  std::map<std::string, std::string> handoffs_;  // topology id -> its worker handoff (secret)
  bool children_watch_armed_ = false;
  std::set<std::string> data_watches_armed_;  // topology ids
  bool node_watch_armed_ = false;
  int64_t registered_session_ = 0;  // the session of our last successful registration
  DesiredSlots last_logged_;
};

}  // namespace tempest::supervisor

#endif  // TEMPEST_SUPERVISOR_CLUSTER_SYNC_H_
