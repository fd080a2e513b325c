#include "worker/acker_executor.h"

#include <algorithm>
#include <chrono>

namespace tempest::worker {
namespace {
constexpr std::chrono::nanoseconds kOverflowRetry = std::chrono::milliseconds(1);
}  // namespace

AckerExecutor::AckerExecutor(WorkerContext& ctx, core::ExecutorInfo info)
    : Executor(ctx, std::move(info), Kind::kAcker) {}

absl::Status AckerExecutor::Build() {
  const core::MetricLabels labels{{"component", std::string(api::kAckerComponentName)},
                                  {"task", std::to_string(info_.start.value())}};
  completed_.counter = &ctx_.metrics->GetCounter("tempest_acker_completed_total", labels);
  failed_.counter = &ctx_.metrics->GetCounter("tempest_acker_failed_total", labels);
  expired_.counter = &ctx_.metrics->GetCounter("tempest_acker_expired_total", labels);
  tracked_ = &ctx_.metrics->GetGauge("tempest_acker_pending_trees", labels);
  return absl::OkStatus();
}

absl::Status AckerExecutor::Setup() {
  if (ctx_.timeouts_enabled) ticks_.Start(ctx_.message_timeout_secs, last_now_);
  return absl::OkStatus();
}

void AckerExecutor::Teardown() {
  completed_.Flush();
  failed_.Flush();
  expired_.Flush();
}

void AckerExecutor::Reply(MessageKind kind, uint64_t root, int32_t spout_task) {
  Envelope out;
  out.kind = kind;
  out.root = root;
  out.task = spout_task;
  transfer_.PostToSpout(std::move(out));
}

void AckerExecutor::Stage(const Envelope& e) {
  if (staged_count_ == kLookahead) {
    Process(staged_[staged_head_]);
    staged_head_ = (staged_head_ + 1) & (kLookahead - 1);
    --staged_count_;
  }
  ledger_.Prefetch(e.root);
  staged_[(staged_head_ + staged_count_) & (kLookahead - 1)] =
      Message{e.root, e.value, e.spout_task, e.kind};
  ++staged_count_;
}

void AckerExecutor::ProcessStaged() {
  for (; staged_count_ > 0; --staged_count_) {
    Process(staged_[staged_head_]);
    staged_head_ = (staged_head_ + 1) & (kLookahead - 1);
  }
}

void AckerExecutor::Process(const Message& m) {
  ++consumed_local_;
  core::AckResult result;
  switch (m.kind) {
    case MessageKind::kAckInit:
      result = ledger_.Init(m.root, m.value, m.spout_task);
      break;
    case MessageKind::kAckAck:
      result = ledger_.Ack(m.root, m.value);
      break;
    case MessageKind::kAckFail:
      result = ledger_.Fail(m.root);
      break;
    case MessageKind::kAckReset: {
      std::optional<int32_t> spout = ledger_.ResetTimeout(m.root);
      if (spout) Reply(MessageKind::kSpoutReset, m.root, *spout);
      return;
    }
    default:
      return;
  }
  if (result.outcome == core::AckOutcome::kCompleted) {
    completed_.Inc();
    Reply(MessageKind::kSpoutAck, m.root, result.spout_task);
  } else if (result.outcome == core::AckOutcome::kFailed) {
    failed_.Inc();
    Reply(MessageKind::kSpoutFail, m.root, result.spout_task);
  }
}

void AckerExecutor::Loop() {
  const size_t max = ctx_.options.drain_batch;
  const auto max_park =
      std::chrono::duration_cast<std::chrono::nanoseconds>(ctx_.options.max_park);
  auto process = [this](Envelope& e) { Stage(e); };
  for (;;) {
    const core::Clock::TimePoint now = Now();
    const int ticks = ticks_.Due(now);
    for (int n = 0; n < ticks; ++n) {
      for (const core::ExpiredRoot& r : ledger_.Rotate()) {
        expired_.Inc();
        if (r.spout_task != core::AckLedger::kUnknownTask) {
          Reply(MessageKind::kSpoutFail, r.root, r.spout_task);
        }
      }
    }
    size_t got = queue_->TryDrain(max, process);
    ProcessStaged();
    if (got == 0 && ticks == 0) {
      if (queue_->closed()) break;
      transfer_.Flush(/*idle=*/true);
      Publish(/*quiet=*/true);
      // Replies for remote spouts waiting for room on a full connection are
      // retried every millisecond rather than after a full park (ADR 0010).
      const auto park = transfer_.remote_overflow() > 0
                            ? std::min<std::chrono::nanoseconds>(max_park, kOverflowRetry)
                            : max_park;
      got = queue_->Drain(max, process, ParkDeadline(ticks_, park));
      ProcessStaged();
    }
    transfer_.Flush();
    completed_.Flush();
    failed_.Flush();
    expired_.Flush();
    tracked_->Set(static_cast<int64_t>(ledger_.size()));
    Publish(/*quiet=*/false);
  }
}

}  // namespace tempest::worker
