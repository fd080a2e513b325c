#include "common/core/stream_stats.h"

namespace tempest::core {
namespace {

const v1::StreamStats* FindStream(const google::protobuf::RepeatedPtrField<v1::StreamStats>& list,
                                  const v1::StreamStats& like) {
  for (const v1::StreamStats& s : list) {
    if (s.component() == like.component() && s.stream() == like.stream()) return &s;
  }
  return nullptr;
}

}  // namespace

v1::StreamStats& StreamStatsOf(google::protobuf::RepeatedPtrField<v1::StreamStats>& streams,
                               const std::string& component, const std::string& stream) {
  for (v1::StreamStats& s : streams) {
    if (s.component() == component && s.stream() == stream) return s;
  }
  v1::StreamStats* s = streams.Add();
  s->set_component(component);
  s->set_stream(stream);
  return *s;
}

void AddStreamCounts(const v1::StreamStats& from, v1::StreamStats& to) {
  to.set_emitted(to.emitted() + from.emitted());
  to.set_transferred(to.transferred() + from.transferred());
  to.set_acked(to.acked() + from.acked());
  to.set_failed(to.failed() + from.failed());
  to.set_executed(to.executed() + from.executed());
  to.set_execute_latency_us_sum(to.execute_latency_us_sum() + from.execute_latency_us_sum());
  to.set_execute_latency_samples(to.execute_latency_samples() + from.execute_latency_samples());
  to.set_process_latency_us_sum(to.process_latency_us_sum() + from.process_latency_us_sum());
  to.set_process_latency_samples(to.process_latency_samples() + from.process_latency_samples());
  to.set_complete_latency_us_sum(to.complete_latency_us_sum() + from.complete_latency_us_sum());
  to.set_complete_latency_samples(to.complete_latency_samples() + from.complete_latency_samples());
}

void SubtractStreamCounts(const v1::StreamStats& base, v1::StreamStats& to) {
  auto sub = [](int64_t now, int64_t then) { return now >= then ? now - then : now; };
  to.set_emitted(sub(to.emitted(), base.emitted()));
  to.set_transferred(sub(to.transferred(), base.transferred()));
  to.set_acked(sub(to.acked(), base.acked()));
  to.set_failed(sub(to.failed(), base.failed()));
  to.set_executed(sub(to.executed(), base.executed()));
  to.set_execute_latency_us_sum(sub(to.execute_latency_us_sum(), base.execute_latency_us_sum()));
  to.set_execute_latency_samples(sub(to.execute_latency_samples(), base.execute_latency_samples()));
  to.set_process_latency_us_sum(sub(to.process_latency_us_sum(), base.process_latency_us_sum()));
  to.set_process_latency_samples(sub(to.process_latency_samples(), base.process_latency_samples()));
  to.set_complete_latency_us_sum(sub(to.complete_latency_us_sum(), base.complete_latency_us_sum()));
  to.set_complete_latency_samples(
      sub(to.complete_latency_samples(), base.complete_latency_samples()));
}

void AddExecutorStreams(const v1::ExecutorStats& from, v1::ExecutorStats& to) {
  for (const v1::StreamStats& s : from.outputs()) {
    AddStreamCounts(s, StreamStatsOf(*to.mutable_outputs(), s.component(), s.stream()));
  }
  for (const v1::StreamStats& s : from.inputs()) {
    AddStreamCounts(s, StreamStatsOf(*to.mutable_inputs(), s.component(), s.stream()));
  }
}

void SubtractExecutorStreams(const v1::ExecutorStats& base, v1::ExecutorStats& to) {
  for (v1::StreamStats& s : *to.mutable_outputs()) {
    if (const v1::StreamStats* b = FindStream(base.outputs(), s); b != nullptr) {
      SubtractStreamCounts(*b, s);
    }
  }
  for (v1::StreamStats& s : *to.mutable_inputs()) {
    if (const v1::StreamStats* b = FindStream(base.inputs(), s); b != nullptr) {
      SubtractStreamCounts(*b, s);
    }
  }
}

}  // namespace tempest::core
