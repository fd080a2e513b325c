#include "common/coord/zk_session_metrics.h"

#include "common/coord/zk_status.h"

namespace tempest::coord {

namespace {

std::string FailureLabel(const absl::Status& status) {
  if (auto rc = ZkCodeOf(status)) return ZkCodeName(*rc);
  return absl::StatusCodeToString(status.code());
}

}  // namespace

ZkSessionMetrics::ZkSessionMetrics(core::MetricsRegistry& registry) : registry_(registry) {
  for (const char* name : {"create", "get", "set", "delete", "exists", "children", "multi",
                           "set_async", "get_acl", "set_acl"}) {
    ops_[name] = Op{&registry.GetCounter("tempest_zk_ops_total", {{"op", name}}),
                    &registry.GetHistogram("tempest_zk_op_latency_us", {{"op", name}})};
  }
  set_async_ = &ops_.at("set_async");
  state_ = &registry.GetGauge("tempest_zk_session_state");
  sessions_ = &registry.GetCounter("tempest_zk_sessions_created_total");
}

void ZkSessionMetrics::Record(std::string_view op, std::chrono::nanoseconds elapsed,
                              const absl::Status& status) {
  Record(ops_.find(op)->second, op, elapsed, status);
}

void ZkSessionMetrics::RecordSetAsync(std::chrono::nanoseconds elapsed,
                                      const absl::Status& status) {
  Record(*set_async_, "set_async", elapsed, status);
}

void ZkSessionMetrics::Record(Op& op, std::string_view name, std::chrono::nanoseconds elapsed,
                              const absl::Status& status) {
  op.count->Add();
  op.latency_us->Record(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
  if (!status.ok()) {
    registry_
        .GetCounter("tempest_zk_op_failures_total",
                    {{"op", std::string(name)}, {"code", FailureLabel(status)}})
        .Add();
  }
}

void ZkSessionMetrics::Ambiguous(std::string_view op, std::string_view outcome) {
  registry_
      .GetCounter("tempest_zk_ambiguous_writes_total",
                  {{"op", std::string(op)}, {"outcome", std::string(outcome)}})
      .Add();
}

void ZkSessionMetrics::Transition(ZkSessionState from, ZkSessionState to) {
  registry_
      .GetCounter("tempest_zk_session_transitions_total",
                  {{"from", std::string(ZkSessionStateName(from))},
                   {"to", std::string(ZkSessionStateName(to))}})
      .Add();
  state_->Set(static_cast<int64_t>(to));
}

void ZkSessionMetrics::SessionCreated() { sessions_->Add(); }

}  // namespace tempest::coord
