#include "spout/line_spout.h"

#include <fstream>

#include "gtest/gtest.h"
#include "tests/support/component_harness.h"
#include "tests/support/temp_dir.h"

namespace tempest::spout {
namespace {

using testing::FakeSpoutCollector;
using testing::MakeArgs;

class LineSpoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream f(dir_.File("lines.txt"));
    f << "the cow\r\njumped over\n\nthe moon";  // CRLF, an empty line, no final newline
  }
  std::unique_ptr<LineSpout> Open(api::ValueMap props, api::Config config = {}) {
    auto made = LineSpout::Create(MakeArgs("tempest.LineSpout", std::move(props)));
    EXPECT_TRUE(made.ok()) << made.status();
    if (!made.ok()) return nullptr;
    absl::Status opened = (*made)->Open(config, context_, collector_);
    EXPECT_TRUE(opened.ok()) << opened;
    return *std::move(made);
  }
  std::vector<std::string> Lines() const {
    std::vector<std::string> out;
    for (const auto& e : collector_.emitted) out.push_back(e.values[0].AsString());
    return out;
  }

  testing::TempDir dir_{"line-spout-test"};
  FakeSpoutCollector collector_;
  api::TopologyContext context_ = testing::MakeContext("lines");
};

TEST_F(LineSpoutTest, EmitsEveryLineOnceThenIsExhaustedWhenAcked) {
  auto spout = Open({{"path", dir_.File("lines.txt")}});
  for (int i = 0; i < 10; ++i) spout->NextTuple();
  EXPECT_EQ(Lines(), (std::vector<std::string>{"the cow", "jumped over", "", "the moon"}));
  EXPECT_FALSE(spout->IsExhausted());
  for (const auto& e : collector_.emitted) spout->Ack(e.message_id);
  EXPECT_TRUE(spout->IsExhausted());
  api::OutputFieldsDeclarer d;
  spout->DeclareOutputFields(d);
  EXPECT_EQ(d.streams().at(api::DefaultStreamId()).fields, api::Fields({"line"}));
}

TEST_F(LineSpoutTest, FailedLineIsReplayedWithItsTextUntilAcked) {
  auto spout = Open({{"path", dir_.File("lines.txt")}});
  spout->NextTuple();
  spout->NextTuple();
  api::MessageId second = collector_.emitted[1].message_id;
  spout->Fail(second);
  spout->NextTuple();
  ASSERT_EQ(collector_.emitted.size(), 3u);
  EXPECT_EQ(collector_.emitted[2].values[0].AsString(), "jumped over");
  EXPECT_EQ(collector_.emitted[2].message_id, second);
  for (int i = 0; i < 10; ++i) spout->NextTuple();
  EXPECT_EQ(collector_.emitted.size(), 5u);
  for (const auto& e : collector_.emitted) spout->Ack(e.message_id);
  EXPECT_TRUE(spout->IsExhausted());
}

TEST_F(LineSpoutTest, RepeatStartsOverAndNeverEnds) {
  auto spout = Open({{"path", dir_.File("lines.txt")}, {"repeat", true}});
  for (int i = 0; i < 9; ++i) spout->NextTuple();
  std::vector<std::string> lines = Lines();
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[4], "the cow");
  EXPECT_EQ(lines[8], "the cow");
  for (const auto& e : collector_.emitted) spout->Ack(e.message_id);
  EXPECT_FALSE(spout->IsExhausted());
}

TEST_F(LineSpoutTest, EmptyFileWithRepeatDoesNotSpin) {
  { std::ofstream f(dir_.File("empty.txt")); }
  auto spout = Open({{"path", dir_.File("empty.txt")}, {"repeat", true}});
  spout->NextTuple();
  EXPECT_TRUE(collector_.emitted.empty());
}

TEST_F(LineSpoutTest, RelativePathResolvesAgainstResourcesDir) {
  api::Config config;
  config.Set(kResourcesDirKey, dir_.path());
  auto spout = Open({{"path", "lines.txt"}, {"reliable", false}}, config);
  EXPECT_EQ(spout->resolved_path(), dir_.File("lines.txt"));
  spout->NextTuple();
  ASSERT_EQ(collector_.emitted.size(), 1u);
  EXPECT_TRUE(collector_.emitted[0].message_id.is_nil());
}

TEST_F(LineSpoutTest, MissingFileFailsOpenAndMissingPathFailsCreate) {
  auto made = LineSpout::Create(MakeArgs("tempest.LineSpout", {{"path", dir_.File("nope")}}));
  ASSERT_TRUE(made.ok());
  absl::Status opened = (*made)->Open({}, context_, collector_);
  EXPECT_EQ(opened.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(opened.message().find("nope"), std::string::npos);
  auto no_path = LineSpout::Create(MakeArgs("tempest.LineSpout"));
  EXPECT_EQ(no_path.status().code(), absl::StatusCode::kInvalidArgument);
  auto positional = LineSpout::Create(MakeArgs("tempest.LineSpout", {}, {"x.txt"}));
  ASSERT_TRUE(positional.ok());
}

}  // namespace
}  // namespace tempest::spout
