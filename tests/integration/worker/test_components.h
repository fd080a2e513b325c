#ifndef TEMPEST_TESTS_INTEGRATION_WORKER_TEST_COMPONENTS_H_
#define TEMPEST_TESTS_INTEGRATION_WORKER_TEST_COMPONENTS_H_

// Small bolts used by the engine's integration tests (ports of the helper
// bolts in Storm's TopologyIntegrationTest), plus registry helpers.

#include <atomic>
#include <chrono>
#include <optional>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/api/bolt.h"
#include "common/api/component_registry.h"
#include "gtest/gtest.h"

namespace tempest::worker::testing {

inline void AddSpout(api::ComponentRegistry& r, const std::string& name,
                     std::function<std::unique_ptr<api::Spout>()> make) {
  ASSERT_TRUE(r.RegisterSpout(name, [make](const api::ComponentArgs&)
                                  -> absl::StatusOr<std::unique_ptr<api::Spout>> {
                  return make();
                }).ok());
}

inline void AddBolt(api::ComponentRegistry& r, const std::string& name,
                    std::function<std::unique_ptr<api::Bolt>()> make) {
  ASSERT_TRUE(r.RegisterBolt(name, [make](const api::ComponentArgs&)
                                 -> absl::StatusOr<std::unique_ptr<api::Bolt>> {
                  return make();
                }).ok());
}

// Base for the test bolts: keeps the collector and the task id.
class TestBolt : public api::Bolt {
 public:
  absl::Status Prepare(const api::Config&, const api::TopologyContext& context,
                       api::OutputCollector& collector) override {
    collector_ = &collector;
    task_ = context.ThisTaskId().value();
    return absl::OkStatus();
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer& d) const override {
    d.Declare(api::Fields({"num"}));
  }

 protected:
  api::OutputCollector* collector_ = nullptr;
  int32_t task_ = 0;
};

// Emits `n` tuples anchored to each input, then acks it.
class BranchingBolt final : public TestBolt {
 public:
  explicit BranchingBolt(int n) : n_(n) {}
  void Execute(const api::Tuple& input) override {
    for (int i = 0; i < n_; ++i) collector_->Emit(input, {input.Get(0)});
    collector_->Ack(input);
  }

 private:
  int n_;
};

// Collects `n` inputs, then emits one tuple anchored to all of them and
// acks them (Storm's AggBolt): the join of several trees.
class AggBolt final : public TestBolt {
 public:
  explicit AggBolt(int n) : n_(n) {}
  void Execute(const api::Tuple& input) override {
    seen_.push_back(input);
    if (static_cast<int>(seen_.size()) < n_) return;
    collector_->Emit(api::DefaultStreamId(), std::span<const api::Tuple>(seen_),
                     {api::Value(int64_t{1})});
    for (const api::Tuple& t : seen_) collector_->Ack(t);
    seen_.clear();
  }

 private:
  int n_;
  std::vector<api::Tuple> seen_;
};

// Acks everything.
class AckBolt final : public TestBolt {
 public:
  void Execute(const api::Tuple& input) override { collector_->Ack(input); }
};

// Emits anchored to the same input twice, then acks it (Storm's
// DupAnchorBolt for the self-anchoring case).
class DupAnchorBolt final : public TestBolt {
 public:
  void Execute(const api::Tuple& input) override {
    std::vector<api::Tuple> anchors{input, input};
    collector_->Emit(api::DefaultStreamId(), std::span<const api::Tuple>(anchors),
                     {input.Get(0)});
    collector_->Ack(input);
  }
};

// Acks the 1st, 3rd, 5th ... input and silently drops the others.
class AckEveryOtherBolt final : public TestBolt {
 public:
  void Execute(const api::Tuple& input) override {
    if (input.IsTick()) return;
    if (count_++ % 2 == 0) collector_->Ack(input);
  }

 private:
  int count_ = 0;
};

// Shared switchboard for HoldBolt: counts inputs; while `hold` is set
// inputs are kept, once cleared everything kept is acked on the next input
// or tick.
struct HoldControl {
  std::atomic<bool> hold{true};
  std::atomic<bool> reset_on_tick{false};
  std::atomic<int> received{0};
  std::atomic<int> resets{0};
};

class HoldBolt final : public TestBolt {
 public:
  explicit HoldBolt(std::shared_ptr<HoldControl> control) : control_(std::move(control)) {}
  void Execute(const api::Tuple& input) override {
    if (input.IsTick()) {
      if (control_->hold.load() && control_->reset_on_tick.load()) {
        for (const api::Tuple& t : held_) collector_->ResetTimeout(t);
        control_->resets.fetch_add(1);
      }
    } else {
      control_->received.fetch_add(1);
      held_.push_back(input);
    }
    if (!control_->hold.load()) {
      for (const api::Tuple& t : held_) collector_->Ack(t);
      held_.clear();
    }
  }

 private:
  std::shared_ptr<HoldControl> control_;
  std::vector<api::Tuple> held_;
};

// Holds every input and emits + acks it only from Poll, once `release` is
// set (as a multilang bolt or a Kafka sink finishes work outside Execute).
class PolledReleaseBolt final : public TestBolt {
 public:
  explicit PolledReleaseBolt(std::shared_ptr<HoldControl> control)
      : control_(std::move(control)) {}
  void Execute(const api::Tuple& input) override {
    control_->received.fetch_add(1);
    held_.push_back(input);
  }
  std::optional<std::chrono::milliseconds> PollInterval() const override {
    return std::chrono::milliseconds(2);
  }
  bool Poll() override {
    if (control_->hold.load() || held_.empty()) return false;
    for (const api::Tuple& t : held_) {
      collector_->Emit(t, {t.Get(0)});
      collector_->Ack(t);
    }
    held_.clear();
    return true;
  }

 private:
  std::shared_ptr<HoldControl> control_;
  std::vector<api::Tuple> held_;
};

}  // namespace tempest::worker::testing

#endif  // TEMPEST_TESTS_INTEGRATION_WORKER_TEST_COMPONENTS_H_
