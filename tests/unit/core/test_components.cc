#include "tests/unit/core/test_components.h"

namespace tempest::core::testing {
namespace {

using api::Fields;
using api::OutputFieldsDeclarer;

class DeclaringSpout : public api::Spout {
 public:
  using DeclareFn = void (*)(OutputFieldsDeclarer&);
  explicit DeclaringSpout(DeclareFn fn) : fn_(fn) {}
  absl::Status Open(const api::Config&, const api::TopologyContext&,
                    api::SpoutOutputCollector&) override {
    return absl::OkStatus();
  }
  void NextTuple() override {}
  void DeclareOutputFields(OutputFieldsDeclarer& d) const override { fn_(d); }

 private:
  DeclareFn fn_;
};

class DeclaringBolt : public api::Bolt {
 public:
  using DeclareFn = void (*)(OutputFieldsDeclarer&);
  explicit DeclaringBolt(DeclareFn fn) : fn_(fn) {}
  absl::Status Prepare(const api::Config&, const api::TopologyContext&,
                       api::OutputCollector&) override {
    return absl::OkStatus();
  }
  void Execute(const api::Tuple&) override {}
  void DeclareOutputFields(OutputFieldsDeclarer& d) const override { fn_(d); }

 private:
  DeclareFn fn_;
};

class EvenGrouping : public api::CustomStreamGrouping {
 public:
  absl::Status Prepare(const api::TopologyContext&, const api::StreamId&,
                       const std::vector<api::TaskId>& targets) override {
    targets_ = targets;
    return absl::OkStatus();
  }
  void ChooseTasks(api::TaskId, const api::Values&, std::vector<api::TaskId>& out) override {
    for (api::TaskId t : targets_) {
      if (t.value() % 2 == 0) out.push_back(t);
    }
    out.push_back(api::TaskId(1000));  // not a target: must be dropped
  }

 private:
  std::vector<api::TaskId> targets_;
};

template <void (*Fn)(OutputFieldsDeclarer&)>
api::ComponentRegistry::SpoutFactory Spout() {
  return [](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::Spout>> {
    return std::make_unique<DeclaringSpout>(Fn);
  };
}
template <void (*Fn)(OutputFieldsDeclarer&)>
api::ComponentRegistry::BoltFactory Bolt() {
  return [](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::Bolt>> {
    return std::make_unique<DeclaringBolt>(Fn);
  };
}

void WordStreams(OutputFieldsDeclarer& d) {
  d.Declare(Fields({"word", "n"}));
  d.DeclareStream("errors", Fields({"reason"}));
  d.DeclareDirectStream("direct", Fields({"x"}));
}
void WordOnly(OutputFieldsDeclarer& d) { d.Declare(Fields({"word"})); }
void WordCount(OutputFieldsDeclarer& d) { d.Declare(Fields({"word", "count"})); }
void Nothing(OutputFieldsDeclarer&) {}
void Str(OutputFieldsDeclarer& d) { d.Declare(Fields({"str"})); }
void PassThrough(OutputFieldsDeclarer& d) { d.DeclarePassThrough(); }
void ReadsWord(OutputFieldsDeclarer& d) { d.RequireInputFields({"word"}, "set its 'field' property"); }
void RenamesTwo(OutputFieldsDeclarer& d) {
  d.Declare(Fields({"a", "b"}));
  d.RequireInputWidth(2, "set its 'fields' property");
}

// A component listing its properties, as built-ins do.
class ListedPropertiesBolt : public DeclaringBolt {
 public:
  static constexpr std::string_view kPropertyNames[] = {"count", "path"};
  ListedPropertiesBolt() : DeclaringBolt(&Nothing) {}
};

}  // namespace

std::unique_ptr<api::ComponentRegistry> MakeTestRegistry() {
  auto r = std::make_unique<api::ComponentRegistry>();
  (void)r->RegisterSpout("test.WordSpout", Spout<WordStreams>());
  (void)r->RegisterSpout("org.apache.storm.kafka.KafkaSpout", Spout<Str>());
  (void)r->RegisterBolt("test.SplitBolt", Bolt<WordOnly>());
  (void)r->RegisterBolt("test.CountBolt", Bolt<WordCount>());
  (void)r->RegisterBolt("test.SinkBolt", Bolt<Nothing>());
  (void)r->RegisterBolt("test.PassThroughBolt", Bolt<PassThrough>());
  (void)r->RegisterBolt("test.ReadsWordBolt", Bolt<ReadsWord>());
  (void)r->RegisterBolt("test.RenamesTwoBolt", Bolt<RenamesTwo>());
  (void)r->RegisterBolt("test.ListedPropertiesBolt",
                        &api::registry_internal::Make<api::Bolt, ListedPropertiesBolt>);
  (void)r->RegisterBolt(
      "test.FailingBolt",
      [](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::Bolt>> {
        return absl::InvalidArgumentError("missing property 'path'");
      });
  (void)r->RegisterGrouping(
      "test.EvenGrouping",
      [](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::CustomStreamGrouping>> {
        return std::make_unique<EvenGrouping>();
      });
  return r;
}

}  // namespace tempest::core::testing
