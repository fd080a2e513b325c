#ifndef TEMPEST_WORKER_ACKER_EXECUTOR_H_
#define TEMPEST_WORKER_ACKER_EXECUTOR_H_

#include <vector>

#include "common/core/ack_ledger.h"
#include "common/core/metrics_registry.h"
#include "worker/executor.h"
#include "worker/task_router.h"

namespace tempest::worker {

// Runs one acker task (system component "__acker"), Storm's Acker: an
// AckLedger (XOR per root id, 3 rotating buckets) fed by `__ack_init` from
// spouts and `__ack_ack` / `__ack_fail` / `__ack_reset_timeout` from bolts,
// all arriving through its bounded receive queue (processed a few messages
// behind their arrival, so that each tree's ledger slot can be prefetched).
// Completed and failed trees
// are answered directly to the spout task through that spout executor's
// unbounded AckLane, batched per loop iteration; resets are forwarded the
// same way. The ledger rotates on a tick every topology.message.timeout.secs
// (when timeouts are enabled); trees that expire there are failed at their
// spout (harmless: the spout's own 2-bucket timeout fires first, and spouts
// ignore unknown roots).
//
// Because its only output is the never-blocking lane, an acker never waits on
// anything but its own input, so it always drains and the ack cycle cannot
// deadlock (ADR 0003). Owns the ledger; lives on its executor thread.
class AckerExecutor final : public Executor {
 public:
  AckerExecutor(WorkerContext& ctx, core::ExecutorInfo info);

  absl::Status Build() override;
  std::vector<api::TaskId> Downstream() const override { return {}; }

 private:
  absl::Status Setup() override;
  void Loop() override;
  void Teardown() override;
  // One acking message, as kept between arrival and processing.
  struct Message {
    uint64_t root = 0;
    uint64_t value = 0;
    int32_t spout_task = 0;
    MessageKind kind = MessageKind::kAckInit;
  };
  // Messages are processed kLookahead behind their arrival: Stage()
  // prefetches the ledger slot of each one as it arrives and processes the
  // oldest staged one; ProcessStaged() finishes the rest (after every drain,
  // so a batch's replies leave in the same iteration). Order is kept.
  static constexpr size_t kLookahead = 8;
  static_assert((kLookahead & (kLookahead - 1)) == 0);
  void Stage(const Envelope& e);
  void ProcessStaged();
  void Process(const Message& m);
  void Reply(MessageKind kind, uint64_t root, int32_t spout_task);

  core::AckLedger ledger_;
  Message staged_[kLookahead];
  size_t staged_head_ = 0;
  size_t staged_count_ = 0;
  TickTimer ticks_;
  LocalCounter completed_;
  LocalCounter failed_;
  LocalCounter expired_;
  core::Gauge* tracked_ = nullptr;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_ACKER_EXECUTOR_H_
