#include "worker/task_router.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "worker/schema_interner.h"

namespace tempest::worker {

absl::StatusOr<std::unique_ptr<TaskRouter>> TaskRouter::Create(
    const WorkerContext& ctx, api::TaskId task, const api::TopologyContext& context) {
  std::unique_ptr<TaskRouter> router(new TaskRouter());
  router->task_ = task;
  const api::ComponentId* component = ctx.layout->ComponentOf(task);
  if (component == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("task ", task.value(), " has no component"));
  }
  router->component_ = *component;
  auto declared = ctx.streams->find(*component);
  if (declared == ctx.streams->end()) return router;
  for (const auto& [stream_id, decl] : declared->second) {
    auto route = std::make_unique<StreamRoute>();
    route->stream = stream_id;
    route->schema = InternSchema(*component, stream_id, decl.fields);
    route->direct = decl.direct;
    const core::MetricLabels labels{{"component", component->value()},
                                    {"stream", stream_id.value()},
                                    {"task", std::to_string(task.value())}};
    route->emitted.counter = &ctx.metrics->GetCounter("tempest_emitted_total", labels);
    route->transferred.counter = &ctx.metrics->GetCounter("tempest_transferred_total", labels);
    for (const core::StreamDef& s : ctx.def->streams) {
      if (s.from != *component || s.stream != stream_id) continue;
      core::GrouperOptions options;
      options.source_task = task;
      options.stream = stream_id;
      options.output_fields = decl.fields;
      options.target_tasks = ctx.layout->TasksOf(s.to);
      options.local_tasks = ctx.local_tasks;
      // Reproducible per (task, consumer) but different across senders, so
      // shuffles from several senders do not move in lockstep.
      options.seed = static_cast<uint64_t>(task.value()) * 0x9E3779B97F4A7C15ULL ^
                     std::hash<std::string>()(s.to.value());
      options.registry = ctx.registry;
      options.context = &context;
      absl::StatusOr<std::unique_ptr<core::StreamGrouper>> grouper =
          core::CreateStreamGrouper(s.grouping, std::move(options));
      if (!grouper.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(s.location.Prefix(), component->value(),
                                                       " -> ", s.to.value(), ": ",
                                                       grouper.status().message()));
      }
      route->subscriptions.push_back({s.to, std::move(*grouper), ctx.layout->TasksOf(s.to)});
    }
    StreamRoute* raw = route.get();
    router->routes_.emplace(stream_id.value(), std::move(route));
    if (stream_id.value() == api::kDefaultStreamName) router->default_route_ = raw;
  }
  return router;
}

absl::Status TaskRouter::Targets(StreamRoute& route, const api::Values& values,
                                 std::vector<api::TaskId>& out) {
  if (route.direct) {
    return absl::FailedPreconditionError(absl::StrCat(
        "stream '", route.stream.value(), "' is declared direct: emit to it with EmitDirect"));
  }
  for (StreamRoute::Subscription& sub : route.subscriptions) {
    std::span<const api::TaskId> chosen = sub.grouper->Choose(values);
    out.insert(out.end(), chosen.begin(), chosen.end());
  }
  return absl::OkStatus();
}

absl::Status TaskRouter::DirectTarget(StreamRoute& route, api::TaskId task,
                                      std::vector<api::TaskId>& out) {
  if (!route.direct) {
    return absl::FailedPreconditionError(absl::StrCat(
        "EmitDirect on stream '", route.stream.value(), "', which is not declared direct"));
  }
  for (StreamRoute::Subscription& sub : route.subscriptions) {
    std::span<const api::TaskId> chosen = sub.grouper->ChooseDirect(task);
    if (!chosen.empty()) {
      out.insert(out.end(), chosen.begin(), chosen.end());
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("EmitDirect to task ", task.value(),
                                                 " on stream '", route.stream.value(),
                                                 "': no direct-grouping consumer runs that task"));
}

std::vector<api::TaskId> TaskRouter::AllTargets() const {
  std::set<api::TaskId> all;
  for (const auto& [name, route] : routes_) {
    (void)name;
    for (const StreamRoute::Subscription& sub : route->subscriptions) {
      all.insert(sub.tasks.begin(), sub.tasks.end());
    }
  }
  return {all.begin(), all.end()};
}

void TaskRouter::FlushCounters() {
  for (auto& [name, route] : routes_) {
    (void)name;
    route->emitted.Flush();
    route->transferred.Flush();
    if (route->acked.counter != nullptr) {
      route->acked.Flush();
      route->failed.Flush();
    }
  }
}

void TaskRouter::RegisterSpoutOutcomes(core::MetricsRegistry& metrics) {
  for (auto& [name, route] : routes_) {
    const core::MetricLabels labels{{"component", component_.value()},
                                    {"stream", route->stream.value()},
                                    {"task", std::to_string(task_.value())}};
    route->acked.counter = &metrics.GetCounter("tempest_acked_total", labels);
    route->failed.counter = &metrics.GetCounter("tempest_failed_total", labels);
    route->complete_latency = &metrics.GetHistogram("tempest_complete_latency_us", labels);
  }
}

}  // namespace tempest::worker
