#ifndef TEMPEST_COMMON_CORE_STREAM_GROUPER_H_
#define TEMPEST_COMMON_CORE_STREAM_GROUPER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/fields.h"
#include "common/api/ids.h"
#include "common/api/topology_context.h"
#include "common/api/value.h"
#include "common/core/topology/topology_def.h"

namespace tempest::core {

// Routes the tuples one sending task emits on one stream to the tasks of one
// consuming component. One instance per (sending task, stream, consumer),
// owned by the sending executor and used only from its thread; instances
// keep per-sender state (shuffle position, partial-key loads).
//
// Choose() is the hot path: it must not allocate. The returned span points
// into the grouper (or its target list) and stays valid until the next call.
class StreamGrouper {
 public:
  virtual ~StreamGrouper() = default;

  // Targets for a regular emit. Empty means "drop" (no target).
  virtual std::span<const api::TaskId> Choose(const api::Values& values) = 0;
  // Targets for EmitDirect(task): `task` if this consumer subscribed with
  // direct grouping and `task` is one of its tasks; empty otherwise.
  virtual std::span<const api::TaskId> ChooseDirect(api::TaskId task) {
    (void)task;
    return {};
  }
  // Whether this subscription is a direct grouping.
  virtual bool is_direct() const { return false; }
};

// What CreateStreamGrouper needs to build a grouper.
struct GrouperOptions {
  api::TaskId source_task;
  api::StreamId stream = api::DefaultStreamId();
  // Declared fields of the stream (fields / partial-key groupings).
  api::Fields output_fields;
  // The consumer's tasks; sorted by CreateStreamGrouper.
  std::vector<api::TaskId> target_tasks;
  // Tasks running in the sending worker (local-or-shuffle).
  absl::flat_hash_set<api::TaskId> local_tasks;
  // PRNG seed for shuffle / none; the runtime derives it from the task id so
  // runs are reproducible.
  uint64_t seed = 0;
  // Custom groupings: where to find the class, and the sender's context.
  const api::ComponentRegistry* registry = nullptr;
  const api::TopologyContext* context = nullptr;
};

// Builds the grouper for `grouping`. InvalidArgument for an empty target
// list, grouping fields missing from the stream, or an unknown custom class.
absl::StatusOr<std::unique_ptr<StreamGrouper>> CreateStreamGrouper(const GroupingDef& grouping,
                                                                   GrouperOptions options);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_STREAM_GROUPER_H_
