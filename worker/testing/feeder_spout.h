#ifndef TEMPEST_WORKER_TESTING_FEEDER_SPOUT_H_
#define TEMPEST_WORKER_TESTING_FEEDER_SPOUT_H_

#include <deque>
#include <memory>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/api/spout.h"
#include "worker/testing/ack_fail_tracker.h"

namespace tempest::worker::testing {

// The test's end of a FeederSpout: Feed() queues a tuple (with an optional
// message id) that the spout emits on its next NextTuple. Finish() marks the
// feed complete, after which the spout reports IsExhausted() once the queue
// is empty and nothing it emitted is pending. Thread-safe; share it between
// the test and the spout factory with a shared_ptr.
class Feeder {
 public:
  void Feed(api::Values values, api::Value message_id = api::Value()) {
    absl::MutexLock lock(&mu_);
    queue_.emplace_back(std::move(values), std::move(message_id));
  }
  void Finish() {
    absl::MutexLock lock(&mu_);
    finished_ = true;
  }

 private:
  friend class FeederSpout;
  bool Pop(std::pair<api::Values, api::Value>& out) {
    absl::MutexLock lock(&mu_);
    if (queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    return true;
  }
  bool Drained() const {
    absl::MutexLock lock(&mu_);
    return finished_ && queue_.empty();
  }
  mutable absl::Mutex mu_;
  std::deque<std::pair<api::Values, api::Value>> queue_ ABSL_GUARDED_BY(mu_);
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

// Storm's FeederSpout: emits what the test feeds, on the default stream with
// the given fields, and reports acks and fails to an optional tracker. Runs
// on its executor thread like any spout. Use with parallelism 1.
class FeederSpout final : public api::Spout {
 public:
  FeederSpout(std::shared_ptr<Feeder> feeder, api::Fields fields,
              std::shared_ptr<AckFailTracker> tracker = nullptr)
      : feeder_(std::move(feeder)), fields_(std::move(fields)), tracker_(std::move(tracker)) {}

  absl::Status Open(const api::Config&, const api::TopologyContext&,
                    api::SpoutOutputCollector& collector) override {
    collector_ = &collector;
    return absl::OkStatus();
  }
  void NextTuple() override {
    std::pair<api::Values, api::Value> item;
    if (feeder_->Pop(item)) collector_->Emit(std::move(item.first), std::move(item.second));
  }
  void Ack(const api::MessageId& id) override {
    if (tracker_) tracker_->OnAck(id);
  }
  void Fail(const api::MessageId& id) override {
    if (tracker_) tracker_->OnFail(id);
  }
  bool IsExhausted() const override {
    return feeder_->Drained() && collector_ != nullptr && collector_->PendingCount() == 0;
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override {
    declarer.Declare(fields_);
  }

 private:
  std::shared_ptr<Feeder> feeder_;
  api::Fields fields_;
  std::shared_ptr<AckFailTracker> tracker_;
  api::SpoutOutputCollector* collector_ = nullptr;
};

}  // namespace tempest::worker::testing

#endif  // TEMPEST_WORKER_TESTING_FEEDER_SPOUT_H_
