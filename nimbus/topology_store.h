#ifndef TEMPEST_NIMBUS_TOPOLOGY_STORE_H_
#define TEMPEST_NIMBUS_TOPOLOGY_STORE_H_

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/coord/cluster_paths.h"
#include "common/coord/zk_session.h"
#include "common/core/clock.h"
#include "common/core/flux/flux_loader.h"
#include "nimbus/even_scheduler.h"
#include "nimbus/rebalance.h"
#include "nimbus/topology_state.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::nimbus {

// A topology as submitted over the REST API.
struct SubmitRequest {
  std::string flux_text;         // Flux YAML
  std::string file_name;         // names the text in error messages
  std::string name;              // replaces the Flux `name` when non-empty
  // Config overrides, key -> value as YAML/JSON text (like `-c key=value`),
  // applied over the Flux file's own config.
  std::map<std::string, std::string> config_overrides;
  bool inactive = false;         // submit as INACTIVE instead of ACTIVE
  std::string owner;
  // Files the workers get in their resources directory (multilang scripts).
  v1::TopologyResources resources;
};

// A stored topology: its id, its StormBase and the znode version it was
// read at (for compare-and-set).
struct StoredTopology {
  std::string id;
  v1::StormBase base;
  int version = 0;
};

// One worker's heartbeat node, {root}/workerbeats/{topology}/{node}-{port}.
struct StoredBeat {
  std::string name;      // the node name, "{supervisor-id}-{port}"
  WorkerSlot slot;       // parsed from the name (port 0 if it does not parse)
  std::string data;      // raw bytes (liveness only compares them)
  bool parsed = false;   // `beat` holds the parsed data
  v1::WorkerHeartbeat beat;
};

// One error a worker published, {root}/errors/{topology}/{component}/e{seq}.
struct StoredError {
  std::string component;
  int64_t time_secs = 0;
  std::string node;  // the supervisor id of the worker
  int port = 0;
  int task = 0;
  std::string message;
};

// A supervisor's record of the failed workers of one of its slots,
// {root}/workerfailures/{topology}/{node}-{port} (JSON written by the
// supervisor, supervisor/worker_exit_record.h; read as untrusted input).
struct StoredWorkerFailure {
  std::string node;  // the supervisor id
  std::string host;
  int port = 0;
  int pid = 0;
  bool failing = true;  // false: a later worker came up and stayed
  std::string status;   // "exited 1", "killed by signal 9", …
  std::vector<std::string> output;  // the last lines the worker wrote
  int64_t restarts = 0;
  int64_t consecutive_failures = 0;
  int64_t exit_time_ms = 0;     // the supervisor's clock
  int64_t next_attempt_ms = 0;  // the supervisor's clock
};

// Parses "{supervisor-id}-{port}" (the id may contain '-'): nullopt when
// there is no '-' followed by a port 1..65535.
std::optional<WorkerSlot> ParseBeatName(std::string_view name);

// The topology records of one cluster in ZooKeeper:
//   {root}/storms/{id}       StormBase (definition + state), persistent
//   {root}/assignments/{id}  Assignment, persistent
//   {root}/supervisors/{id}  SupervisorInfo, ephemeral (read only here)
//   {root}/workerbeats/{id}/{node}-{port}  WorkerHeartbeat, written by
//                            workers; read, and deleted when stale, here
// Every write is a create or a versioned set, so concurrent writers never
// overwrite each other silently; nimbus still sends all writes from its one
// control thread (and only while it leads).
//
// Owns nothing but a submission counter; the session and registry are
// borrowed and must outlive it. Thread-safe (ZkSession is); each call blocks
// for at most the session's operation timeout per ZooKeeper request.
class TopologyStore {
 public:
  TopologyStore(coord::ZkSession& session, std::string root,
                const api::ComponentRegistry& registry, core::Clock& clock);

  // Loads and validates the topology without touching ZooKeeper, and
  // returns the StormBase to store (status ACTIVE or INACTIVE).
  // InvalidArgument with every problem ("file:line: message" per line).
  // `flux` (nullptr: core::FluxOptions{}, which refuses `includes` and reads
  // no file) is for the submitting client checking its own files first.
  // `topology_identity`, if given, gets the topology's own
  // storm.zookeeper.topology.auth.* (empty when it names none).
  static absl::StatusOr<v1::StormBase> Prepare(const SubmitRequest& request,
                                               const api::ComponentRegistry& registry,
                                               int64_t now_secs,
                                               const core::FluxOptions* flux = nullptr,
                                               coord::ZkAuthConfig* topology_identity = nullptr);
  // Topology names: non-empty, core::CheckTopologyName's characters and
  // length (the name becomes part of znode names, URLs and worker arguments).
  static absl::Status ValidateName(std::string_view name);
  // The largest topology record Submit writes (one znode; ZooKeeper's
  // default jute.maxbuffer is 1 MiB for the whole request).
  static constexpr size_t kMaxRecordBytes = 1000 * 1000;

  // Prepare, then reject a name already in use (AlreadyExists, whatever the
  // other topology's status) and store it as {name}-{counter}-{secs}.
  // Returns the id. Nothing is stored on error. With ZooKeeper auth on, the
  // topology's identity (its own, else the name's earlier one, else a new
  // one) is stored in {root}/credentials/{name} in the same multi as the
  // record, and its nodes grant that identity what its workers need
  // (docs/znode-layout.md).
  absl::StatusOr<std::string> Submit(const SubmitRequest& request);

  // Every stored topology, sorted by id. A record that does not parse is
  // skipped (and logged): one bad node must not hide the others.
  absl::StatusOr<std::vector<StoredTopology>> List();
  // NotFound if there is no such id.
  absl::StatusOr<StoredTopology> Get(const std::string& id);
  // NotFound if no topology has that name.
  absl::StatusOr<StoredTopology> FindByName(const std::string& name);

  // Applies a state-machine event (TopologyEvent) with compare-and-set.
  // kill: `wait_secs` (nullopt = the topology's message timeout) sets when
  // the leader removes it. Returns the new StormBase. NotFound, or
  // FailedPrecondition for a transition Storm does not allow.
  absl::StatusOr<v1::StormBase> Transition(const std::string& id, TopologyEvent event,
                                           std::optional<int> wait_secs = std::nullopt);

  // Starts a rebalance (BeginRebalance) with compare-and-set. NotFound,
  // InvalidArgument for a bad request, FailedPrecondition for a status that
  // cannot be rebalanced.
  absl::StatusOr<v1::StormBase> Rebalance(const std::string& id, const RebalanceRequest& request);
  // Compare-and-set of a whole record read at `version`: Aborted if it
  // changed meanwhile, NotFound if it is gone.
  absl::Status Update(const std::string& id, const v1::StormBase& base, int version);

  // Deletes {root}/assignments/{id}, {root}/workerbeats/{id} (with its
  // beats) and {root}/storms/{id}; absent is fine. The name's identity in
  // {root}/credentials stays for its next submit.
  absl::Status Remove(const std::string& id);

  // The beats under {root}/workerbeats/{id} (empty if none), sorted by name.
  absl::StatusOr<std::vector<StoredBeat>> ListWorkerBeats(const std::string& id);
  // The topology ids that have a {root}/workerbeats/{id} node.
  absl::StatusOr<std::vector<std::string>> WorkerBeatTopologies();
  // Deletes one beat node (absent is fine).
  absl::Status DeleteWorkerBeat(const std::string& id, const std::string& name);
  // Deletes {root}/workerbeats/{id} and its beats (absent is fine).
  absl::Status RemoveWorkerBeats(const std::string& id);

  // Every component's published errors (workers keep the newest 10 each),
  // oldest first; records that do not parse are skipped.
  absl::StatusOr<std::vector<StoredError>> ListErrors(const std::string& id);
  // The topology ids that have a {root}/errors/{id} node.
  absl::StatusOr<std::vector<std::string>> ErrorTopologies();
  // Deletes {root}/errors/{id} and everything under it (absent is fine).
  absl::Status RemoveErrors(const std::string& id);

  // The supervisors' records of the topology's failed workers (empty if
  // none), sorted by node name; records that do not parse are skipped.
  // Defined in worker_failures.cc.
  absl::StatusOr<std::vector<StoredWorkerFailure>> ListWorkerFailures(const std::string& id);
  // The topology ids that have a {root}/workerfailures/{id} node.
  absl::StatusOr<std::vector<std::string>> WorkerFailureTopologies();
  // Deletes {root}/workerfailures/{id} and its records (absent is fine).
  absl::Status RemoveWorkerFailures(const std::string& id);

  // nullopt when the topology has no assignment yet.
  absl::StatusOr<std::optional<v1::Assignment>> GetAssignment(const std::string& id);
  absl::Status PutAssignment(const std::string& id, const v1::Assignment& assignment);
  // The digest id of `id`'s own ZooKeeper identity; "" when it has none.
  absl::StatusOr<std::string> TopologyDigestId(const std::string& id);

  // The live supervisors; unparsable nodes are skipped.
  absl::StatusOr<std::vector<v1::SupervisorInfo>> ListSupervisors();

  const std::string& root() const { return paths_.root(); }
  // Every znode path under the root.
  const coord::ClusterPaths& paths() const { return paths_; }

 private:
  // The record of `id` and, with an identity, its credentials node and the
  // directories its workers write into. AlreadyExists when `id` is taken.
  absl::Status CreateTopologyNodes(const std::string& id, const std::string& data,
                                   const std::optional<coord::ZkOp>& identity_op,
                                   const std::string& digest, const coord::ZkAcl& readable);
  // The multi op that makes {root}/credentials/{name} hold `identity`: a
  // check of the stored one when the topology names none (then `identity`
  // becomes it) or the same, a versioned set when it names another, a create
  // (of a new identity when it names none) when the name has none yet.
  absl::StatusOr<std::optional<coord::ZkOp>> IdentityOp(const std::string& name,
                                                        coord::ZkAuthConfig& identity);

  coord::ZkSession& session_;
  const coord::ClusterPaths paths_;
  const api::ComponentRegistry& registry_;
  core::Clock& clock_;
  std::atomic<int> counter_{0};
};

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_TOPOLOGY_STORE_H_
