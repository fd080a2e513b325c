#include "common/api/basic_bolt.h"

#include <memory>
#include <stdexcept>

#include "gtest/gtest.h"
#include "tests/unit/api/recording_collector.h"

namespace tempest::api {
namespace {

// Emits the upper-cased word; fails "bad" by status and "boom" by throwing.
class UpperBolt : public BasicBolt {
 public:
  absl::Status Execute(const Tuple& input, BasicOutputCollector& out) override {
    const std::string& w = input.GetString(0);
    if (w == "bad") return absl::InvalidArgumentError("bad word");
    if (w == "boom") throw std::runtime_error("kaboom");
    std::string up = w;
    for (char& c : up) c = static_cast<char>(std::toupper(c));
    out.Emit({Value(up)});
    return absl::OkStatus();
  }
  void DeclareOutputFields(OutputFieldsDeclarer& d) const override { d.Declare(Fields({"w"})); }
};

Tuple Word(std::string w) {
  static const auto schema = std::make_shared<const StreamSchema>(
      StreamSchema{ComponentId("src"), DefaultStreamId(), Fields({"word"})});
  return Tuple(schema, TaskId(1), {Value(std::move(w))});
}

class BasicBoltTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto info = std::make_shared<TopologyInfo>();
    context_ = std::make_unique<TopologyContext>(info, TaskId(1));
    ASSERT_TRUE(runner_.Prepare(Config(), *context_, collector_).ok());
  }
  testing::RecordingCollector collector_;
  std::unique_ptr<TopologyContext> context_;
  BasicBoltRunner runner_{std::make_unique<UpperBolt>()};
};

TEST_F(BasicBoltTest, AnchorsEmitsAndAcks) {
  Tuple in = Word("storm");
  runner_.Execute(in);
  ASSERT_EQ(collector_.emitted.size(), 1u);
  EXPECT_EQ(collector_.emitted[0].values[0].AsString(), "STORM");
  ASSERT_EQ(collector_.emitted[0].anchors.size(), 1u);
  EXPECT_EQ(collector_.emitted[0].anchors[0].GetString(0), "storm");
  ASSERT_EQ(collector_.acked.size(), 1u);
  EXPECT_TRUE(collector_.failed.empty());
}

TEST_F(BasicBoltTest, ErrorStatusFailsTuple) {
  runner_.Execute(Word("bad"));
  EXPECT_TRUE(collector_.acked.empty());
  ASSERT_EQ(collector_.failed.size(), 1u);
  ASSERT_EQ(collector_.errors.size(), 1u);
  EXPECT_EQ(collector_.errors[0], "bad word");
}

TEST_F(BasicBoltTest, ThrowFailsTuple) {
  runner_.Execute(Word("boom"));
  EXPECT_TRUE(collector_.acked.empty());
  ASSERT_EQ(collector_.failed.size(), 1u);
  EXPECT_EQ(collector_.errors[0], "exception in Execute: kaboom");
}

TEST_F(BasicBoltTest, DeclaresThroughRunner) {
  OutputFieldsDeclarer d;
  runner_.DeclareOutputFields(d);
  ASSERT_EQ(d.streams().size(), 1u);
  EXPECT_EQ(d.streams().begin()->first, DefaultStreamId());
}

TEST(OutputCollectorTest, TaskIdsOnlyWhenAsked) {
  testing::RecordingCollector c;
  std::vector<TaskId> ids;
  c.Emit(StreamId("s"), {}, {Value(1)}, &ids);
  c.Emit({Value(2)});
  EXPECT_EQ(ids, std::vector<TaskId>{TaskId(7)});
  EXPECT_EQ(c.emitted.size(), 2u);
  c.EmitDirect(TaskId(3), {Value(3)});
  EXPECT_EQ(c.emitted[2].direct_task, TaskId(3));
}

}  // namespace
}  // namespace tempest::api
