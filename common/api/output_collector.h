#ifndef TEMPEST_COMMON_API_OUTPUT_COLLECTOR_H_
#define TEMPEST_COMMON_API_OUTPUT_COLLECTOR_H_

#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/api/ids.h"
#include "common/api/tuple.h"
#include "common/api/value.h"

namespace tempest::api {

// How a bolt emits, acks and fails. The worker implements it (one per bolt
// executor); a bolt receives it in Prepare and may keep the reference until
// Cleanup. Call it only from the thread that runs the bolt's Execute.
//
//   collector.Emit(input, {Value(word), Value(1)});        // anchored, "default"
//   collector.Emit(StreamId("errors"), input, {Value(msg)});
//   collector.Ack(input);
//
// Anchored emits make the new tuple part of each anchor's tuple tree, so its
// failure or timeout replays the spout tuple; unanchored emits are untracked.
// Emit can report the receiving task ids through `task_ids` when non-null
// (Storm always returns them; here it is opt-in so the common path does not
// build a vector).
class OutputCollector {
 public:
  virtual ~OutputCollector() = default;

  // Unanchored, default stream.
  void Emit(Values values) { DoEmit(DefaultStreamId(), {}, std::move(values), nullptr); }
  // Anchored to one input, default stream.
  void Emit(const Tuple& anchor, Values values) {
    DoEmit(DefaultStreamId(), std::span<const Tuple>(&anchor, 1), std::move(values), nullptr);
  }
  // Any stream and anchor set; `task_ids` (optional) receives the targets.
  void Emit(const StreamId& stream, std::span<const Tuple> anchors, Values values,
            std::vector<TaskId>* task_ids = nullptr) {
    DoEmit(stream, anchors, std::move(values), task_ids);
  }
  void Emit(const StreamId& stream, const Tuple& anchor, Values values) {
    DoEmit(stream, std::span<const Tuple>(&anchor, 1), std::move(values), nullptr);
  }
  void Emit(const StreamId& stream, Values values) {
    DoEmit(stream, {}, std::move(values), nullptr);
  }

  // To one task of a consumer that subscribed with direct grouping; the
  // stream must be declared direct.
  void EmitDirect(TaskId task, const StreamId& stream, std::span<const Tuple> anchors,
                  Values values) {
    DoEmitDirect(task, stream, anchors, std::move(values));
  }
  void EmitDirect(TaskId task, const Tuple& anchor, Values values) {
    DoEmitDirect(task, DefaultStreamId(), std::span<const Tuple>(&anchor, 1), std::move(values));
  }
  void EmitDirect(TaskId task, Values values) {
    DoEmitDirect(task, DefaultStreamId(), {}, std::move(values));
  }

  virtual void Ack(const Tuple& input) = 0;
  virtual void Fail(const Tuple& input) = 0;
  // Restarts the message timeout of every tree `input` belongs to.
  virtual void ResetTimeout(const Tuple& input) = 0;
  // Records an error against this component (shown in the UI / REST API).
  virtual void ReportError(const absl::Status& error) = 0;

 protected:
  virtual void DoEmit(const StreamId& stream, std::span<const Tuple> anchors, Values values,
                      std::vector<TaskId>* task_ids) = 0;
  virtual void DoEmitDirect(TaskId task, const StreamId& stream, std::span<const Tuple> anchors,
                            Values values) = 0;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_OUTPUT_COLLECTOR_H_
