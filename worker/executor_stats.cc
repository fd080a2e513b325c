#include "worker/executor_stats.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/numbers.h"
#include "common/core/stream_stats.h"

namespace tempest::worker {
namespace {

std::string LabelOf(const core::MetricSample& m, const char* key) {
  auto it = m.labels.find(key);
  return it == m.labels.end() ? std::string() : it->second;
}

// Adds one series into the stream it counts for.
void AddSample(const core::MetricSample& m, v1::ExecutorStats& e) {
  const std::string input_stream = LabelOf(m, "input_stream");
  if (!input_stream.empty()) {
    v1::StreamStats& s =
        core::StreamStatsOf(*e.mutable_inputs(), LabelOf(m, "input_component"), input_stream);
    if (m.name == "tempest_executed_total") s.set_executed(s.executed() + m.value);
    if (m.name == "tempest_acked_total") s.set_acked(s.acked() + m.value);
    if (m.name == "tempest_failed_total") s.set_failed(s.failed() + m.value);
    if (m.name == "tempest_execute_latency_us") {
      s.set_execute_latency_us_sum(s.execute_latency_us_sum() + m.sum);
      s.set_execute_latency_samples(s.execute_latency_samples() + m.value);
    }
    if (m.name == "tempest_process_latency_us") {
      s.set_process_latency_us_sum(s.process_latency_us_sum() + m.sum);
      s.set_process_latency_samples(s.process_latency_samples() + m.value);
    }
    return;
  }
  const std::string stream = LabelOf(m, "stream");
  if (stream.empty()) return;
  v1::StreamStats& s = core::StreamStatsOf(*e.mutable_outputs(), std::string(), stream);
  if (m.name == "tempest_emitted_total") s.set_emitted(s.emitted() + m.value);
  if (m.name == "tempest_transferred_total") s.set_transferred(s.transferred() + m.value);
  if (m.name == "tempest_acked_total") s.set_acked(s.acked() + m.value);
  if (m.name == "tempest_failed_total") s.set_failed(s.failed() + m.value);
  if (m.name == "tempest_complete_latency_us") {
    s.set_complete_latency_us_sum(s.complete_latency_us_sum() + m.sum);
    s.set_complete_latency_samples(s.complete_latency_samples() + m.value);
  }
}

bool IsExecutorSeries(const std::string& name) {
  static const char* const kNames[] = {"tempest_emitted_total",      "tempest_transferred_total",
                                       "tempest_acked_total",        "tempest_failed_total",
                                       "tempest_executed_total",     "tempest_execute_latency_us",
                                       "tempest_process_latency_us", "tempest_complete_latency_us"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

}  // namespace

std::vector<v1::ExecutorStats> CollectExecutorStats(
    const std::vector<core::MetricSample>& samples,
    const std::vector<core::ExecutorInfo>& executors, const std::set<std::string>& spouts,
    int64_t uptime_secs) {
  std::vector<v1::ExecutorStats> out;
  out.reserve(executors.size());
  std::map<int32_t, size_t> by_start;  // start task -> index in out
  for (const core::ExecutorInfo& info : executors) {
    v1::ExecutorStats& e = out.emplace_back();
    e.set_start_task(info.start.value());
    e.set_end_task(info.end.value());
    e.set_component(info.component.value());
    e.set_spout(spouts.contains(info.component.value()));
    e.set_uptime_secs(uptime_secs);
    by_start[info.start.value()] = out.size() - 1;
  }
  for (const core::MetricSample& m : samples) {
    if (!IsExecutorSeries(m.name)) continue;
    int32_t task = 0;
    if (!absl::SimpleAtoi(LabelOf(m, "task"), &task)) continue;
    auto it = by_start.upper_bound(task);
    if (it == by_start.begin()) continue;
    v1::ExecutorStats& e = out[std::prev(it)->second];
    if (task > e.end_task() || LabelOf(m, "component") != e.component()) continue;
    AddSample(m, e);
  }
  return out;
}

void AddCarriedStats(const google::protobuf::RepeatedPtrField<v1::ExecutorStats>& previous,
                     std::vector<v1::ExecutorStats>& current) {
  for (const v1::ExecutorStats& before : previous) {
    auto it = std::find_if(current.begin(), current.end(), [&](const v1::ExecutorStats& e) {
      return e.start_task() == before.start_task() && e.end_task() == before.end_task() &&
             e.component() == before.component();
    });
    if (it == current.end()) continue;
    core::AddExecutorStreams(before, *it);
  }
}

void ToMetricPoints(const std::vector<core::MetricSample>& samples,
                    google::protobuf::RepeatedPtrField<v1::MetricPoint>& out) {
  out.Clear();
  out.Reserve(static_cast<int>(samples.size()));
  for (const core::MetricSample& m : samples) {
    v1::MetricPoint* p = out.Add();
    p->set_name(m.name);
    for (const auto& [k, v] : m.labels) (*p->mutable_labels())[k] = v;
    switch (m.kind) {
      case core::MetricSample::Kind::kCounter:
        p->set_kind(v1::MetricPoint::COUNTER);
        break;
      case core::MetricSample::Kind::kGauge:
        p->set_kind(v1::MetricPoint::GAUGE);
        break;
      case core::MetricSample::Kind::kHistogram:
        p->set_kind(v1::MetricPoint::HISTOGRAM);
        break;
    }
    p->set_value(m.value);
    p->set_sum(m.sum);
    p->set_p50(m.p50);
    p->set_p99(m.p99);
    p->set_max(m.max);
  }
}

}  // namespace tempest::worker
