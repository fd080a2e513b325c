#ifndef TEMPEST_WORKER_TESTING_TUPLE_CAPTURE_BOLT_H_
#define TEMPEST_WORKER_TESTING_TUPLE_CAPTURE_BOLT_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/api/bolt.h"

namespace tempest::worker::testing {

// One captured tuple: what arrived, from where, at which task.
struct CapturedTuple {
  std::string component;
  std::string stream;
  int32_t source_task = 0;
  int32_t receiving_task = 0;
  api::Values values;
};

// Where TupleCaptureBolts put what they receive (Storm's TupleCaptureBolt
// store). Thread-safe; shared by the test and the bolt factory.
class CaptureStore {
 public:
  void Add(CapturedTuple t) {
    absl::MutexLock lock(&mu_);
    tuples_.push_back(std::move(t));
  }
  std::vector<CapturedTuple> All() const {
    absl::MutexLock lock(&mu_);
    return tuples_;
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return tuples_.size();
  }
  // Values received from `component` (on `stream`, or any stream if empty).
  std::vector<api::Values> Read(const std::string& component,
                                const std::string& stream = "default") const {
    std::vector<api::Values> out;
    absl::MutexLock lock(&mu_);
    for (const CapturedTuple& t : tuples_) {
      if (t.component == component && (stream.empty() || t.stream == stream)) {
        out.push_back(t.values);
      }
    }
    return out;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<CapturedTuple> tuples_ ABSL_GUARDED_BY(mu_);
};

// Records every input (ticks excluded) in a CaptureStore and acks it.
// Declares no outputs. Executor thread, like any bolt.
class TupleCaptureBolt final : public api::Bolt {
 public:
  explicit TupleCaptureBolt(std::shared_ptr<CaptureStore> store) : store_(std::move(store)) {}

  absl::Status Prepare(const api::Config&, const api::TopologyContext& context,
                       api::OutputCollector& collector) override {
    collector_ = &collector;
    task_ = context.ThisTaskId().value();
    return absl::OkStatus();
  }
  void Execute(const api::Tuple& input) override {
    if (!input.IsTick()) {
      store_->Add({input.source_component().value(), input.source_stream().value(),
                   input.source_task().value(), task_, input.values()});
    }
    collector_->Ack(input);
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer&) const override {}

 private:
  std::shared_ptr<CaptureStore> store_;
  api::OutputCollector* collector_ = nullptr;
  int32_t task_ = 0;
};

}  // namespace tempest::worker::testing

#endif  // TEMPEST_WORKER_TESTING_TUPLE_CAPTURE_BOLT_H_
