#ifndef TEMPEST_WORKER_TASK_ROUTER_H_
#define TEMPEST_WORKER_TASK_ROUTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/api/ids.h"
#include "common/api/topology_context.h"
#include "common/api/tuple.h"
#include "common/core/metrics_registry.h"
#include "common/core/grouping/stream_grouper.h"
#include "worker/worker_context.h"

namespace tempest::worker {

// A counter bumped per tuple on one executor thread and added to the shared
// (striped, atomic) core::Counter once per loop iteration, so the hot path
// is a plain increment.
struct LocalCounter {
  core::Counter* counter = nullptr;
  int64_t pending = 0;
  void Inc(int64_t n = 1) { pending += n; }
  void Flush() {
    if (pending != 0) {
      counter->Add(pending);
      pending = 0;
    }
  }
};

// One declared output stream of one task: its schema, whether it is direct,
// and each subscribed consumer with its grouper.
struct StreamRoute {
  struct Subscription {
    api::ComponentId consumer;
    std::unique_ptr<core::StreamGrouper> grouper;
    std::vector<api::TaskId> tasks;  // the consumer's tasks
  };
  api::StreamId stream;
  std::shared_ptr<const api::StreamSchema> schema;
  bool direct = false;
  std::vector<Subscription> subscriptions;
  LocalCounter emitted;      // emit calls
  LocalCounter transferred;  // tuples handed to target tasks
  // Spout tasks only (RegisterSpoutOutcomes): the trees rooted on this
  // stream that completed or failed, and their sampled complete latency.
  LocalCounter acked;
  LocalCounter failed;
  core::Histogram* complete_latency = nullptr;
};

// Routing table of one task (Storm's per-task grouper map): for each stream
// the task's component declares, the consumers and their groupers. Built on
// the control thread at set-up; afterwards owned and used only by the
// executor thread running the task (groupers keep per-sender state).
//
//   StreamRoute* route = router.Find(stream);        // nullptr: undeclared
//   absl::Status s = router.Targets(*route, values, targets);
class TaskRouter {
 public:
  // Builds routes for `task` from the topology and registers its metrics.
  // `context` must outlive the router (custom groupings keep it).
  static absl::StatusOr<std::unique_ptr<TaskRouter>> Create(const WorkerContext& ctx,
                                                            api::TaskId task,
                                                            const api::TopologyContext& context);

  // Gives each route its acked / failed counters and complete-latency
  // histogram (a spout task's per-stream outcomes), labelled like emitted.
  void RegisterSpoutOutcomes(core::MetricsRegistry& metrics);

  // The route of `stream`, or nullptr if the component did not declare it.
  StreamRoute* Find(const api::StreamId& stream) {
    if (default_route_ != nullptr && stream.value() == api::kDefaultStreamName) {
      return default_route_;
    }
    auto it = routes_.find(stream.value());
    return it == routes_.end() ? nullptr : it->second.get();
  }

  // Appends the targets of a regular emit to `out`. FailedPrecondition when
  // the stream is declared direct (use EmitDirect).
  absl::Status Targets(StreamRoute& route, const api::Values& values,
                       std::vector<api::TaskId>& out);
  // The target of EmitDirect(task): InvalidArgument unless the stream is
  // declared direct and `task` belongs to a direct-grouping subscriber.
  absl::Status DirectTarget(StreamRoute& route, api::TaskId task, std::vector<api::TaskId>& out);

  // Every task any route can send to (for producer registration).
  std::vector<api::TaskId> AllTargets() const;
  // Pushes the per-route counters to the registry.
  void FlushCounters();

 private:
  TaskRouter() = default;
  api::TaskId task_;
  api::ComponentId component_;
  absl::flat_hash_map<std::string, std::unique_ptr<StreamRoute>> routes_;
  StreamRoute* default_route_ = nullptr;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_TASK_ROUTER_H_
