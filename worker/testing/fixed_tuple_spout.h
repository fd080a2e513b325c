#ifndef TEMPEST_WORKER_TESTING_FIXED_TUPLE_SPOUT_H_
#define TEMPEST_WORKER_TESTING_FIXED_TUPLE_SPOUT_H_

#include <memory>
#include <utility>
#include <vector>

#include "common/api/spout.h"
#include "worker/testing/ack_fail_tracker.h"

namespace tempest::worker::testing {

// Storm's FixedTupleSpout: emits a fixed list of tuples once each, with its
// index as the message id, then is exhausted once all were emitted and none
// is pending (a CompletableSpout, for CompleteTopology). Every task of the
// component emits the whole list. Executor thread, like any spout.
class FixedTupleSpout final : public api::Spout {
 public:
  FixedTupleSpout(std::vector<api::Values> tuples, api::Fields fields,
                  std::shared_ptr<AckFailTracker> tracker = nullptr, bool reliable = true)
      : tuples_(std::move(tuples)),
        fields_(std::move(fields)),
        tracker_(std::move(tracker)),
        reliable_(reliable) {}

  absl::Status Open(const api::Config&, const api::TopologyContext&,
                    api::SpoutOutputCollector& collector) override {
    collector_ = &collector;
    return absl::OkStatus();
  }
  void NextTuple() override {
    if (next_ >= tuples_.size()) return;
    const int64_t id = static_cast<int64_t>(next_);
    collector_->Emit(tuples_[next_++], reliable_ ? api::Value(id) : api::Value());
  }
  void Ack(const api::MessageId& id) override {
    if (tracker_) tracker_->OnAck(id);
  }
  void Fail(const api::MessageId& id) override {
    if (tracker_) tracker_->OnFail(id);
  }
  bool IsExhausted() const override {
    return next_ >= tuples_.size() && collector_ != nullptr && collector_->PendingCount() == 0;
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override {
    declarer.Declare(fields_);
  }

 private:
  std::vector<api::Values> tuples_;
  api::Fields fields_;
  std::shared_ptr<AckFailTracker> tracker_;
  bool reliable_;
  size_t next_ = 0;
  api::SpoutOutputCollector* collector_ = nullptr;
};

}  // namespace tempest::worker::testing

#endif  // TEMPEST_WORKER_TESTING_FIXED_TUPLE_SPOUT_H_
