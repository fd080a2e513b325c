#include "worker/testing/complete_topology.h"

#include <vector>

#include "common/core/topology/topology_validator.h"

namespace tempest::worker::testing {

absl::StatusOr<std::shared_ptr<CaptureStore>> CompleteTopology(
    const core::TopologyDef& def, const api::ComponentRegistry& registry,
    CompleteTopologyOptions options) {
  auto store = std::make_shared<CaptureStore>();
  api::ComponentRegistry with_capture;
  std::vector<std::string> added;
  (void)with_capture.MergeFrom(registry, &added);
  const std::string kCaptureClass = "tempest.testing.TupleCaptureBolt";
  if (absl::Status s = with_capture.RegisterBolt(
          kCaptureClass,
          [store](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::Bolt>> {
            return std::unique_ptr<api::Bolt>(std::make_unique<TupleCaptureBolt>(store));
          });
      !s.ok()) {
    return s;
  }
  // Learn every declared stream, then subscribe the capture bolt to them.
  core::TopologyValidator validator(with_capture);
  absl::StatusOr<core::ComponentStreams> streams = validator.Validate(def);
  if (!streams.ok()) return streams.status();
  core::TopologyDef with_sink = def;
  core::ComponentDef capture;
  capture.kind = core::ComponentDef::Kind::kBolt;
  capture.id = api::ComponentId("tempest-capture");
  capture.args.class_name = kCaptureClass;
  capture.args.id = capture.id;
  with_sink.bolts.push_back(capture);
  for (const auto& [component, declared] : *streams) {
    for (const auto& [stream, decl] : declared) {
      if (decl.direct) continue;
      core::StreamDef s;
      s.from = component;
      s.to = capture.id;
      s.stream = stream;
      s.grouping.type = core::GroupingType::kGlobal;
      with_sink.streams.push_back(std::move(s));
    }
  }
  options.cluster.registry = &with_capture;
  absl::StatusOr<std::unique_ptr<LocalCluster>> cluster =
      LocalCluster::Create(std::move(with_sink), options.cluster);
  if (!cluster.ok()) return cluster.status();
  if (absl::Status s = (*cluster)->Start(); !s.ok()) return s;
  const bool finished = (*cluster)->WaitFinished(options.timeout);
  (void)(*cluster)->Kill(std::chrono::milliseconds(0));
  if (!finished) {
    return absl::DeadlineExceededError("topology did not complete in time");
  }
  return store;
}

}  // namespace tempest::worker::testing
