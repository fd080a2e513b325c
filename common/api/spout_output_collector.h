#ifndef TEMPEST_COMMON_API_SPOUT_OUTPUT_COLLECTOR_H_
#define TEMPEST_COMMON_API_SPOUT_OUTPUT_COLLECTOR_H_

#include <vector>

#include "absl/status/status.h"
#include "common/api/ids.h"
#include "common/api/value.h"

namespace tempest::api {

// A spout's message id: any Value, nil meaning "unreliable, do not track".
// Integers (the common case) cost no allocation; strings serve multilang
// spouts. The same id comes back in Spout::Ack / Spout::Fail.
using MessageId = Value;

// How a spout emits. Implemented by the worker (one per spout executor);
// handed to Spout::Open and valid until Close. Call it only from the thread
// that runs NextTuple/Ack/Fail.
//
//   collector.Emit({Value(seq)}, MessageId(seq));  // tracked: Ack/Fail follow
//   collector.Emit({Value(seq)});                   // untracked
class SpoutOutputCollector {
 public:
  virtual ~SpoutOutputCollector() = default;

  void Emit(Values values, MessageId message_id = MessageId()) {
    DoEmit(DefaultStreamId(), std::move(values), std::move(message_id), nullptr);
  }
  // `task_ids` (optional) receives the tasks the tuple went to.
  void Emit(const StreamId& stream, Values values, MessageId message_id = MessageId(),
            std::vector<TaskId>* task_ids = nullptr) {
    DoEmit(stream, std::move(values), std::move(message_id), task_ids);
  }
  void EmitDirect(TaskId task, const StreamId& stream, Values values,
                  MessageId message_id = MessageId()) {
    DoEmitDirect(task, stream, std::move(values), std::move(message_id));
  }
  void EmitDirect(TaskId task, Values values, MessageId message_id = MessageId()) {
    DoEmitDirect(task, DefaultStreamId(), std::move(values), std::move(message_id));
  }

  virtual void ReportError(const absl::Status& error) = 0;
  // Tracked tuples this spout task has emitted and not yet seen acked/failed.
  virtual int64_t PendingCount() const = 0;

 protected:
  virtual void DoEmit(const StreamId& stream, Values values, MessageId message_id,
                      std::vector<TaskId>* task_ids) = 0;
  virtual void DoEmitDirect(TaskId task, const StreamId& stream, Values values,
                            MessageId message_id) = 0;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_SPOUT_OUTPUT_COLLECTOR_H_
