#include "bolts/identity_bolt.h"

#include "gtest/gtest.h"
#include "tests/support/component_harness.h"

namespace tempest::bolts {
namespace {

using testing::FakeOutputCollector;
using testing::MakeArgs;
using testing::MakeTuple;

api::Tuple Seq(int64_t seq) {
  return MakeTuple({"seq", "key", "payload"},
                   {api::Value(seq), api::Value("k1"), api::Value::OfBytes("xyz")});
}

std::unique_ptr<IdentityBolt> Prepared(api::ValueMap props, FakeOutputCollector& out,
                                       int32_t task = 1) {
  auto made = IdentityBolt::Create(MakeArgs("tempest.IdentityBolt", std::move(props)));
  EXPECT_TRUE(made.ok()) << made.status();
  if (!made.ok()) return nullptr;
  EXPECT_TRUE((*made)->Prepare({}, testing::MakeContext("id", {}, {}, task), out).ok());
  return *std::move(made);
}

TEST(IdentityBoltTest, ReEmitsInputAnchoredThenAcks) {
  FakeOutputCollector out;
  auto bolt = Prepared({}, out);
  api::Tuple in = Seq(42);
  bolt->Execute(in);
  ASSERT_EQ(out.emitted.size(), 1u);
  EXPECT_EQ(out.emitted[0].values, in.values());
  EXPECT_EQ(out.emitted[0].stream, api::DefaultStreamId());
  ASSERT_EQ(out.emitted[0].anchors.size(), 1u);
  EXPECT_EQ(out.emitted[0].anchors[0].GetInt(0), 42);
  ASSERT_EQ(out.acked.size(), 1u);
  EXPECT_TRUE(out.failed.empty());
  api::OutputFieldsDeclarer d;
  bolt->DeclareOutputFields(d);
  EXPECT_EQ(d.streams().at(api::DefaultStreamId()).fields, api::Fields({"seq", "key", "payload"}));
}

TEST(IdentityBoltTest, FieldsPropertyDeclaresOutputAndMismatchFails) {
  FakeOutputCollector out;
  auto bolt = Prepared({{"fields", api::ValueList{"line"}}}, out);
  api::OutputFieldsDeclarer d;
  bolt->DeclareOutputFields(d);
  EXPECT_EQ(d.streams().at(api::DefaultStreamId()).fields, api::Fields({"line"}));
  bolt->Execute(MakeTuple({"line"}, {api::Value("hello")}));
  EXPECT_EQ(out.emitted.size(), 1u);
  bolt->Execute(Seq(1));  // three values, one declared field
  EXPECT_EQ(out.emitted.size(), 1u);
  EXPECT_EQ(out.failed.size(), 1u);
  EXPECT_EQ(out.errors.size(), 1u);

  auto csv = IdentityBolt::Create(MakeArgs("tempest.IdentityBolt", {{"fields", "a, b"}}));
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ((*csv)->options().fields, (std::vector<std::string>{"a", "b"}));
}

TEST(IdentityBoltTest, FailFractionFailsThatShareWithAFixedSeed) {
  FakeOutputCollector out;
  auto bolt = Prepared({{"failFraction", 0.05}, {"seed", 1234}}, out);
  constexpr int kN = 100000;
  for (int i = 0; i < kN; ++i) bolt->Execute(Seq(i));
  double failed = static_cast<double>(out.failed.size()) / kN;
  EXPECT_NEAR(failed, 0.05, 0.01);
  EXPECT_EQ(out.failed.size() + out.acked.size(), static_cast<size_t>(kN));
  // Failed inputs are not emitted; passed ones are emitted exactly once.
  EXPECT_EQ(out.emitted.size(), out.acked.size());
  EXPECT_EQ(bolt->injected_failures(), static_cast<int64_t>(out.failed.size()));
}

TEST(IdentityBoltTest, SameSeedSameDecisionsAndReplaysCanPass) {
  FakeOutputCollector a, b;
  auto first = Prepared({{"failFraction", 0.5}, {"seed", 7}}, a);
  auto second = Prepared({{"failFraction", 0.5}, {"seed", 7}}, b);
  // The same tuple delivered again and again: every delivery draws anew.
  api::Tuple in = Seq(5);
  for (int i = 0; i < 200; ++i) {
    first->Execute(in);
    second->Execute(in);
  }
  EXPECT_EQ(a.failed.size(), b.failed.size());
  EXPECT_GT(a.acked.size(), 50u);
  EXPECT_GT(a.failed.size(), 50u);
}

TEST(IdentityBoltTest, ParallelTasksDrawDifferently) {
  FakeOutputCollector a, b;
  auto t0 = Prepared({{"failFraction", 0.5}, {"seed", 7}}, a, /*task=*/1);
  // Another task index: a context with two tasks where this one is second.
  auto info = std::make_shared<api::TopologyInfo>();
  info->task_to_component = {{api::TaskId(1), api::ComponentId("id")},
                             {api::TaskId(2), api::ComponentId("id")}};
  info->component_tasks[api::ComponentId("id")] = {api::TaskId(1), api::TaskId(2)};
  auto made =
      IdentityBolt::Create(MakeArgs("tempest.IdentityBolt", {{"failFraction", 0.5}, {"seed", 7}}));
  ASSERT_TRUE(made.ok());
  ASSERT_TRUE((*made)->Prepare({}, api::TopologyContext(info, api::TaskId(2)), b).ok());
  std::vector<bool> da, db;
  for (int i = 0; i < 64; ++i) {
    size_t fa = a.failed.size(), fb = b.failed.size();
    t0->Execute(Seq(i));
    (*made)->Execute(Seq(i));
    da.push_back(a.failed.size() > fa);
    db.push_back(b.failed.size() > fb);
  }
  EXPECT_NE(da, db);
}

TEST(IdentityBoltTest, ZeroAndOneFractionsAreExact) {
  FakeOutputCollector none, all;
  auto keep = Prepared({{"failFraction", 0}}, none);
  auto drop = Prepared({{"failFraction", 1}}, all);
  for (int i = 0; i < 1000; ++i) {
    keep->Execute(Seq(i));
    drop->Execute(Seq(i));
  }
  EXPECT_TRUE(none.failed.empty());
  EXPECT_EQ(all.failed.size(), 1000u);
  EXPECT_TRUE(all.emitted.empty());
}

TEST(IdentityBoltTest, FailValuesFailEveryDeliveryOfThoseInputsOnly) {
  FakeOutputCollector out;
  // Integers and strings in the list both match the field's text.
  auto bolt = Prepared({{"failValues", api::ValueList{int64_t{7}, "9"}}}, out);
  ASSERT_NE(bolt, nullptr);
  EXPECT_EQ(bolt->options().fail_field, "seq");  // the first declared field
  for (int delivery = 0; delivery < 5; ++delivery) {
    for (int64_t seq = 5; seq < 11; ++seq) bolt->Execute(Seq(seq));
  }
  EXPECT_EQ(out.failed.size(), 10u);  // 7 and 9, every time
  for (const api::Tuple& t : out.failed) {
    EXPECT_TRUE(t.GetInt(0) == 7 || t.GetInt(0) == 9) << t.DebugString();
  }
  EXPECT_EQ(out.acked.size(), 20u);
  EXPECT_EQ(out.emitted.size(), 20u);
  EXPECT_EQ(bolt->injected_failures(), 10);
}

TEST(IdentityBoltTest, FailFieldChoosesTheComparedField) {
  FakeOutputCollector out;
  auto bolt = Prepared({{"fields", api::ValueList{"offset", "value"}},
                        {"failField", "value"},
                        {"failValues", "b, c"}},
                       out);
  ASSERT_NE(bolt, nullptr);
  for (const char* v : {"a", "b", "c", "d"}) {
    bolt->Execute(MakeTuple({"offset", "value"}, {api::Value(int64_t{1}), api::Value(v)}));
  }
  EXPECT_EQ(out.failed.size(), 2u);
  EXPECT_EQ(out.acked.size(), 2u);
}

TEST(IdentityBoltTest, TickIsAckedNotEmitted) {
  FakeOutputCollector out;
  auto bolt = Prepared({}, out);
  bolt->Execute(api::Tuple::MakeTick(1));
  EXPECT_TRUE(out.emitted.empty());
  EXPECT_EQ(out.acked.size(), 1u);
}

TEST(IdentityBoltTest, BadPropertiesAreClearErrors) {
  for (api::ValueMap props : std::vector<api::ValueMap>{{{"failFraction", 1.5}},
                                                        {{"failFraction", -0.1}},
                                                        {{"failFraction", "often"}},
                                                        {{"delayMicros", -1}},
                                                        {{"fields", api::ValueList{}}},
                                                        {{"fields", api::ValueList{"a", "a"}}},
                                                        {{"seed", "x"}},
                                                        {{"failValues", api::ValueList{}}},
                                                        {{"failField", "nope"}}}) {
    auto made = IdentityBolt::Create(MakeArgs("tempest.IdentityBolt", props));
    ASSERT_FALSE(made.ok()) << api::Value(props).DebugString();
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(made.status().message().find("tempest.IdentityBolt"), std::string::npos)
        << made.status();
  }
  auto positional = IdentityBolt::Create(MakeArgs("tempest.IdentityBolt", {}, {0.25}));
  ASSERT_TRUE(positional.ok()) << positional.status();
  EXPECT_EQ((*positional)->options().fail_fraction, 0.25);
}

}  // namespace
}  // namespace tempest::bolts
