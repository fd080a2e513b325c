#ifndef TEMPEST_COMMON_API_BASIC_BOLT_H_
#define TEMPEST_COMMON_API_BASIC_BOLT_H_

#include <memory>

#include "absl/status/status.h"
#include "common/api/bolt.h"

namespace tempest::api {

// The collector a BasicBolt emits through: every emit is anchored to the
// input being executed. Created by BasicBoltRunner per Execute call; do not
// keep it beyond Execute.
class BasicOutputCollector {
 public:
  BasicOutputCollector(OutputCollector& out, const Tuple& input) : out_(out), input_(input) {}

  void Emit(Values values) { out_.Emit(input_, std::move(values)); }
  void Emit(const StreamId& stream, Values values, std::vector<TaskId>* task_ids = nullptr) {
    out_.Emit(stream, std::span<const Tuple>(&input_, 1), std::move(values), task_ids);
  }
  void EmitDirect(TaskId task, const StreamId& stream, Values values) {
    out_.EmitDirect(task, stream, std::span<const Tuple>(&input_, 1), std::move(values));
  }
  void ResetTimeout() { out_.ResetTimeout(input_); }
  void ReportError(const absl::Status& error) { out_.ReportError(error); }

 private:
  OutputCollector& out_;
  const Tuple& input_;
};

// A bolt that needs no explicit acking (Storm's IBasicBolt): each emit is
// anchored to the input, the input is acked when Execute returns OK, and it
// is failed (and the error reported) when Execute returns a non-OK status or
// throws. Same threading and construction rules as Bolt. The worker runs it
// through BasicBoltRunner.
class BasicBolt {
 public:
  virtual ~BasicBolt() = default;

  virtual absl::Status Prepare(const Config& config, const TopologyContext& context) {
    (void)config;
    (void)context;
    return absl::OkStatus();
  }
  virtual absl::Status Execute(const Tuple& input, BasicOutputCollector& collector) = 0;
  virtual void Cleanup() {}
  virtual void DeclareOutputFields(OutputFieldsDeclarer& declarer) const = 0;
};

// Adapts a BasicBolt to the Bolt interface (Storm's BasicBoltExecutor). Owns
// the BasicBolt; lives on the bolt's executor thread like any Bolt. Tick
// tuples are passed to Execute like other inputs and acked the same way.
class BasicBoltRunner final : public Bolt {
 public:
  explicit BasicBoltRunner(std::unique_ptr<BasicBolt> bolt) : bolt_(std::move(bolt)) {}

  absl::Status Prepare(const Config& config, const TopologyContext& context,
                       OutputCollector& collector) override;
  void Execute(const Tuple& input) override;
  void Cleanup() override { bolt_->Cleanup(); }
  void DeclareOutputFields(OutputFieldsDeclarer& declarer) const override {
    bolt_->DeclareOutputFields(declarer);
  }

  BasicBolt& bolt() { return *bolt_; }

 private:
  std::unique_ptr<BasicBolt> bolt_;
  OutputCollector* collector_ = nullptr;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_BASIC_BOLT_H_
