#ifndef TEMPEST_COMMON_API_SPOUT_H_
#define TEMPEST_COMMON_API_SPOUT_H_

#include "absl/status/status.h"
#include "common/api/config.h"
#include "common/api/output_fields_declarer.h"
#include "common/api/spout_output_collector.h"
#include "common/api/topology_context.h"

namespace tempest::api {

// A source of tuples (Storm's ISpout). One instance per task; the worker
// calls every method from that task's executor thread, never concurrently:
// Open, then Activate/NextTuple/Ack/Fail/Deactivate in any order, then Close.
// NextTuple must not block for long (return without emitting when idle).
//
// Construction must have no side effects (no connections, no threads): the
// validator constructs components to ask DeclareOutputFields. Acquire
// resources in Open, release them in Close.
class Spout {
 public:
  virtual ~Spout() = default;

  // `collector` stays valid until Close. A non-OK status fails the task.
  virtual absl::Status Open(const Config& config, const TopologyContext& context,
                            SpoutOutputCollector& collector) = 0;
  virtual void NextTuple() = 0;
  // The tuple tree emitted with `message_id` was fully processed.
  virtual void Ack(const MessageId& message_id) { (void)message_id; }
  // ... failed or timed out: replay it if this spout is reliable.
  virtual void Fail(const MessageId& message_id) { (void)message_id; }
  virtual void Activate() {}
  virtual void Deactivate() {}
  virtual void Close() {}
  // A finite spout (Storm's CompletableSpout) returns true once it has emitted
  // everything and nothing it emitted is still pending.
  virtual bool IsExhausted() const { return false; }
  virtual void DeclareOutputFields(OutputFieldsDeclarer& declarer) const = 0;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_SPOUT_H_
