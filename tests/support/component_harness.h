#ifndef TEMPEST_TESTS_SUPPORT_COMPONENT_HARNESS_H_
#define TEMPEST_TESTS_SUPPORT_COMPONENT_HARNESS_H_

// Test doubles for unit-testing spouts and bolts without a worker: recording
// collectors, a one-task TopologyContext and tuple builders. Header-only;
// single-threaded like the executor they stand in for.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/api/component_registry.h"
#include "common/api/output_collector.h"
#include "common/api/spout_output_collector.h"
#include "common/api/topology_context.h"
#include "common/api/tuple.h"

namespace tempest::testing {

// A SpoutOutputCollector that records every emit. PendingCount() reports
// `pending`, which the test sets (the real one counts tracked tuples).
class FakeSpoutCollector final : public api::SpoutOutputCollector {
 public:
  struct Emitted {
    api::StreamId stream;
    api::Values values;
    api::MessageId message_id;
    std::optional<api::TaskId> direct_task;
  };
  std::vector<Emitted> emitted;
  std::vector<std::string> errors;
  int64_t pending = 0;

  void ReportError(const absl::Status& e) override { errors.emplace_back(e.ToString()); }
  int64_t PendingCount() const override { return pending; }

 protected:
  void DoEmit(const api::StreamId& stream, api::Values values, api::MessageId message_id,
              std::vector<api::TaskId>* task_ids) override {
    emitted.push_back({stream, std::move(values), std::move(message_id), {}});
    if (task_ids != nullptr) task_ids->push_back(api::TaskId(1));
  }
  void DoEmitDirect(api::TaskId task, const api::StreamId& stream, api::Values values,
                    api::MessageId message_id) override {
    emitted.push_back({stream, std::move(values), std::move(message_id), task});
  }
};

// An OutputCollector that records every call. `on_ack` / `on_fail` (when set)
// run inside Ack / Fail, so a test can check what was true at that moment.
class FakeOutputCollector final : public api::OutputCollector {
 public:
  struct Emitted {
    api::StreamId stream;
    std::vector<api::Tuple> anchors;
    api::Values values;
    std::optional<api::TaskId> direct_task;
  };
  std::vector<Emitted> emitted;
  std::vector<api::Tuple> acked, failed, reset;
  std::vector<std::string> errors;
  std::function<void(const api::Tuple&)> on_ack;
  std::function<void(const api::Tuple&)> on_fail;

  void Ack(const api::Tuple& t) override {
    if (on_ack) on_ack(t);
    acked.push_back(t);
  }
  void Fail(const api::Tuple& t) override {
    if (on_fail) on_fail(t);
    failed.push_back(t);
  }
  void ResetTimeout(const api::Tuple& t) override { reset.push_back(t); }
  void ReportError(const absl::Status& e) override { errors.emplace_back(e.ToString()); }

 protected:
  void DoEmit(const api::StreamId& stream, std::span<const api::Tuple> anchors, api::Values values,
              std::vector<api::TaskId>* task_ids) override {
    emitted.push_back({stream, {anchors.begin(), anchors.end()}, std::move(values), {}});
    if (task_ids != nullptr) task_ids->push_back(api::TaskId(2));
  }
  void DoEmitDirect(api::TaskId task, const api::StreamId& stream,
                    std::span<const api::Tuple> anchors, api::Values values) override {
    emitted.push_back({stream, {anchors.begin(), anchors.end()}, std::move(values), task});
  }
};

// A context for task `task` (the only task) of component `component`, with
// `config` as topology config and `component_config` as its overrides.
inline api::TopologyContext MakeContext(const std::string& component = "comp",
                                        api::Config config = {}, api::Config component_config = {},
                                        int32_t task = 1) {
  auto info = std::make_shared<api::TopologyInfo>();
  info->topology_id = "test-1-1";
  info->topology_name = "test";
  info->config = std::move(config);
  info->task_to_component[api::TaskId(task)] = api::ComponentId(component);
  info->component_tasks[api::ComponentId(component)] = {api::TaskId(task)};
  info->component_config[api::ComponentId(component)] = std::move(component_config);
  return api::TopologyContext(info, api::TaskId(task));
}

// A tuple as if emitted by `component` on `stream` with the given fields.
inline api::Tuple MakeTuple(std::vector<std::string> fields, api::Values values,
                            const std::string& component = "src",
                            const std::string& stream = "default") {
  auto schema = std::make_shared<const api::StreamSchema>(api::StreamSchema{
      api::ComponentId(component), api::StreamId(stream), api::Fields(std::move(fields))});
  return api::Tuple(schema, api::TaskId(3), std::move(values));
}

// ComponentArgs for `class_name` with the given properties.
inline api::ComponentArgs MakeArgs(const std::string& class_name, api::ValueMap properties = {},
                                   api::ValueList constructor_args = {}) {
  api::ComponentArgs args;
  args.class_name = class_name;
  args.id = api::ComponentId("comp");
  args.properties = std::move(properties);
  args.constructor_args = std::move(constructor_args);
  return args;
}

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_COMPONENT_HARNESS_H_
