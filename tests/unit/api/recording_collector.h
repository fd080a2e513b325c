#ifndef TEMPEST_TESTS_UNIT_API_RECORDING_COLLECTOR_H_
#define TEMPEST_TESTS_UNIT_API_RECORDING_COLLECTOR_H_

#include <string>
#include <vector>

#include "common/api/output_collector.h"

namespace tempest::api::testing {

// An OutputCollector that records every call, for bolt unit tests.
class RecordingCollector final : public OutputCollector {
 public:
  struct Emitted {
    StreamId stream;
    std::vector<Tuple> anchors;
    Values values;
    std::optional<TaskId> direct_task;
  };
  std::vector<Emitted> emitted;
  std::vector<Tuple> acked, failed, reset;
  std::vector<std::string> errors;

  void Ack(const Tuple& t) override { acked.push_back(t); }
  void Fail(const Tuple& t) override { failed.push_back(t); }
  void ResetTimeout(const Tuple& t) override { reset.push_back(t); }
  void ReportError(const absl::Status& e) override { errors.emplace_back(e.message()); }

 protected:
  void DoEmit(const StreamId& stream, std::span<const Tuple> anchors, Values values,
              std::vector<TaskId>* task_ids) override {
    emitted.push_back({stream, {anchors.begin(), anchors.end()}, std::move(values), {}});
    if (task_ids != nullptr) task_ids->push_back(TaskId(7));
  }
  void DoEmitDirect(TaskId task, const StreamId& stream, std::span<const Tuple> anchors,
                    Values values) override {
    emitted.push_back({stream, {anchors.begin(), anchors.end()}, std::move(values), task});
  }
};

}  // namespace tempest::api::testing

#endif  // TEMPEST_TESTS_UNIT_API_RECORDING_COLLECTOR_H_
