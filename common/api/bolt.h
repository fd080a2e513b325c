#ifndef TEMPEST_COMMON_API_BOLT_H_
#define TEMPEST_COMMON_API_BOLT_H_

#include <chrono>
#include <functional>
#include <optional>

#include "absl/status/status.h"
#include "common/api/config.h"
#include "common/api/output_collector.h"
#include "common/api/output_fields_declarer.h"
#include "common/api/topology_context.h"
#include "common/api/tuple.h"

namespace tempest::api {

// A tuple processor (Storm's IRichBolt). One instance per task; the worker
// calls Prepare, then Execute for each input, then Cleanup, all from that
// task's executor thread. Execute may block (a slow bolt slows its executor
// only). Every input must eventually be acked or failed through the
// collector, or it times out and its spout tuple is replayed.
//
// Construction must have no side effects (see Spout).
class Bolt {
 public:
  virtual ~Bolt() = default;

  // `collector` stays valid until Cleanup. A non-OK status fails the task.
  virtual absl::Status Prepare(const Config& config, const TopologyContext& context,
                               OutputCollector& collector) = 0;
  virtual void Execute(const Tuple& input) = 0;
  virtual void Cleanup() {}
  // A bolt with work that arrives outside Execute (a multilang child's
  // output, a producer's delivery reports) returns how long its executor may
  // stay idle before calling Poll. The executor then calls Poll after every
  // batch of input and at least that often while no input arrives, from the
  // executor thread, so Poll may use the collector. Asked once, after Prepare.
  virtual std::optional<std::chrono::milliseconds> PollInterval() const { return std::nullopt; }
  // Returns true when it emitted, acked or failed anything.
  virtual bool Poll() { return false; }
  // Given once, before Prepare: for a bolt that asks for polling, calling
  // `wake` from any thread makes the executor call Poll soon instead of at
  // the end of its idle wait (e.g. when a multilang child wrote a message).
  // Valid until Cleanup returns; cheap when the executor is busy.
  virtual void SetPollWaker(std::function<void()> wake) { (void)wake; }
  virtual void DeclareOutputFields(OutputFieldsDeclarer& declarer) const = 0;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_BOLT_H_
