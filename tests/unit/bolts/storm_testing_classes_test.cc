// Storm's own test classes, implemented natively: TestWordCounter and
// LogInfoBolt (here), TestWordSpout (tests/unit/spout).
#include "bolts/builtin_bolts.h"
#include "gtest/gtest.h"
#include "tests/support/component_harness.h"

namespace tempest::bolts {
namespace {

using testing::FakeOutputCollector;
using testing::MakeArgs;
using testing::MakeTuple;

std::unique_ptr<api::Bolt> MakeStormBolt(const std::string& cls, FakeOutputCollector& out,
                                         api::ValueList constructor_args = {}) {
  api::ComponentRegistry registry;
  EXPECT_TRUE(RegisterBuiltinBolts(registry).ok());
  api::ComponentArgs args = MakeArgs(cls, {});
  args.constructor_args = std::move(constructor_args);
  auto made = registry.CreateBolt(args);
  if (!made.ok()) return nullptr;
  EXPECT_TRUE((*made)->Prepare({}, testing::MakeContext("c", {}), out).ok());
  return *std::move(made);
}

TEST(TestWordCounterTest, CountsTheFirstValueAndEmitsWordAndCountAnchored) {
  FakeOutputCollector out;
  auto bolt = MakeStormBolt("org.apache.storm.testing.TestWordCounter", out);
  ASSERT_NE(bolt, nullptr);
  // By position, whatever the field is called (Storm uses getString(0)).
  for (const char* w : {"nathan", "mike", "nathan"}) {
    bolt->Execute(MakeTuple({"token"}, {api::Value(w)}));
  }
  ASSERT_EQ(out.emitted.size(), 3u);
  EXPECT_EQ(out.emitted[0].values, (api::Values{"nathan", 1}));
  EXPECT_EQ(out.emitted[1].values, (api::Values{"mike", 1}));
  EXPECT_EQ(out.emitted[2].values, (api::Values{"nathan", 2}));
  EXPECT_EQ(out.emitted[2].anchors.size(), 1u);
  EXPECT_EQ(out.acked.size(), 3u);
  api::OutputFieldsDeclarer d;
  bolt->DeclareOutputFields(d);
  EXPECT_EQ(d.streams().at(api::DefaultStreamId()).fields, api::Fields({"word", "count"}));
}

TEST(TestWordCounterTest, EmptyTupleFailsWithAnErrorInsteadOfCrashing) {
  FakeOutputCollector out;
  auto bolt = MakeStormBolt("org.apache.storm.testing.TestWordCounter", out);
  ASSERT_NE(bolt, nullptr);
  bolt->Execute(MakeTuple({}, {}));
  EXPECT_TRUE(out.emitted.empty());
  EXPECT_EQ(out.failed.size(), 1u);
  EXPECT_EQ(out.errors.size(), 1u);
}

TEST(TestWordCounterTest, RejectsConstructorArgs) {
  api::ComponentRegistry registry;
  ASSERT_TRUE(RegisterBuiltinBolts(registry).ok());
  api::ComponentArgs args = MakeArgs("org.apache.storm.testing.TestWordCounter", {});
  args.constructor_args = {api::Value("x")};
  auto made = registry.CreateBolt(args);
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.status().message().find("no constructor arguments"), std::string::npos);
}

TEST(LogInfoBoltTest, AcksEveryInputAndDeclaresNothing) {
  FakeOutputCollector out;
  auto bolt = MakeStormBolt("org.apache.storm.flux.wrappers.bolts.LogInfoBolt", out);
  ASSERT_NE(bolt, nullptr);
  bolt->Execute(MakeTuple({"word", "count"}, {api::Value("golda"), api::Value(3)}));
  bolt->Execute(MakeTuple({"word", "count"}, {api::Value("mike"), api::Value(1)}));
  EXPECT_EQ(out.acked.size(), 2u);
  EXPECT_TRUE(out.emitted.empty());
  api::OutputFieldsDeclarer d;
  bolt->DeclareOutputFields(d);
  EXPECT_TRUE(d.streams().empty());
}

}  // namespace
}  // namespace tempest::bolts
