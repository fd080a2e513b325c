#include "bolts/identity_bolt.h"

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "tests/support/component_harness.h"
#include "tests/support/fake_clock.h"
#include "tests/support/temp_dir.h"

namespace tempest::bolts {
namespace {

using testing::FakeClock;
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
  // Without `fields` its output carries whatever its input carries.
  api::OutputFieldsDeclarer d;
  bolt->DeclareOutputFields(d);
  EXPECT_TRUE(d.pass_through().contains(api::DefaultStreamId()));
  EXPECT_FALSE(d.required_input_width().has_value());
}

TEST(IdentityBoltTest, WithoutFieldsPassesAnyInputThrough) {
  FakeOutputCollector out;
  auto bolt = Prepared({}, out);
  api::Tuple record = MakeTuple({"topic", "partition", "offset", "key", "value"},
                                {api::Value("t"), api::Value(0), api::Value(7), api::Value(),
                                 api::Value("v")});
  bolt->Execute(record);
  ASSERT_EQ(out.emitted.size(), 1u);
  EXPECT_EQ(out.emitted[0].values, record.values());
  EXPECT_EQ(out.acked.size(), 1u);
  EXPECT_TRUE(out.failed.empty());
}

TEST(IdentityBoltTest, FailValuesFindTheFailFieldByNameInPassThroughMode) {
  FakeOutputCollector out;
  auto bolt = Prepared({{"failField", "offset"}, {"failValues", api::ValueList{"7"}}}, out);
  auto record = [](int64_t offset) {
    return MakeTuple({"topic", "offset"}, {api::Value("t"), api::Value(offset)});
  };
  bolt->Execute(record(6));
  bolt->Execute(record(7));
  EXPECT_EQ(out.emitted.size(), 1u);
  EXPECT_EQ(out.failed.size(), 1u);
}

TEST(IdentityBoltTest, FieldsPropertyDeclaresOutputAndMismatchFails) {
  FakeOutputCollector out;
  auto bolt = Prepared({{"fields", api::ValueList{"line"}}}, out);
  api::OutputFieldsDeclarer d;
  bolt->DeclareOutputFields(d);
  EXPECT_EQ(d.streams().at(api::DefaultStreamId()).fields, api::Fields({"line"}));
  EXPECT_EQ(d.required_input_width(), 1);  // the validator checks the input's width
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
  EXPECT_EQ(bolt->options().fail_field, "");  // no name: the first value (seq here)
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

std::unique_ptr<IdentityBolt> PreparedWithClock(api::ValueMap props, const core::Clock& clock,
                                                FakeOutputCollector& out) {
  auto made = IdentityBolt::Create(MakeArgs("tempest.IdentityBolt", std::move(props)), clock);
  EXPECT_TRUE(made.ok()) << made.status();
  if (!made.ok()) return nullptr;
  EXPECT_TRUE((*made)->Prepare({}, testing::MakeContext("id", {}, {}, 1), out).ok());
  return *std::move(made);
}

TEST(IdentityBoltTest, FaultSwitchFileTurnsFaultsOnAndOff) {
  testing::TempDir dir("identity-switch");
  const std::string path = dir.File("faults-on");
  FakeClock clock;
  FakeOutputCollector out;
  auto bolt = PreparedWithClock(
      {{"failFraction", 1}, {"failValues", api::ValueList{int64_t{3}}}, {"faultSwitchFile", path}},
      clock, out);
  ASSERT_NE(bolt, nullptr);
  EXPECT_EQ(bolt->options().fault_switch_file, path);

  // Absent: every input passes, even at failFraction 1 and a listed value.
  for (int i = 0; i < 100; ++i) bolt->Execute(Seq(i % 5));
  EXPECT_TRUE(out.failed.empty());
  EXPECT_EQ(out.acked.size(), 100u);
  EXPECT_EQ(out.emitted.size(), 100u);
  // One stat() for all of them: the clock did not move.
  EXPECT_EQ(bolt->fault_switch_checks(), 1);

  // Created: the cached answer holds until the re-check interval has passed.
  std::ofstream(path) << "on\n";
  bolt->Execute(Seq(100));
  EXPECT_TRUE(out.failed.empty());
  clock.Advance(IdentityBolt::kFaultSwitchRecheck);
  for (int i = 0; i < 10; ++i) bolt->Execute(Seq(200 + i));
  EXPECT_EQ(out.failed.size(), 10u);
  EXPECT_EQ(out.acked.size(), 101u);
  EXPECT_EQ(bolt->injected_failures(), 10);
  EXPECT_EQ(bolt->fault_switch_checks(), 2);

  // Removed: inputs pass again after the next re-check.
  ASSERT_TRUE(std::filesystem::remove(path));
  bolt->Execute(Seq(300));
  EXPECT_EQ(out.failed.size(), 11u);  // still the cached "on"
  clock.Advance(IdentityBolt::kFaultSwitchRecheck / 2);
  bolt->Execute(Seq(301));
  EXPECT_EQ(out.failed.size(), 12u);  // half the interval: still cached
  clock.Advance(IdentityBolt::kFaultSwitchRecheck / 2);
  for (int i = 0; i < 10; ++i) bolt->Execute(Seq(400 + i));
  EXPECT_EQ(out.failed.size(), 12u);
  EXPECT_EQ(out.acked.size(), 111u);
  EXPECT_EQ(bolt->fault_switch_checks(), 3);
  EXPECT_TRUE(out.errors.empty());
}

TEST(IdentityBoltTest, WithoutSwitchFileFaultsAlwaysApplyAndNothingIsChecked) {
  FakeOutputCollector out;
  auto bolt = Prepared({{"failFraction", 1}}, out);
  for (int i = 0; i < 10; ++i) bolt->Execute(Seq(i));
  EXPECT_EQ(out.failed.size(), 10u);
  EXPECT_EQ(bolt->fault_switch_checks(), 0);
}

TEST(IdentityBoltTest, SwitchFileWithoutFaultsIsNeverChecked) {
  FakeClock clock;
  FakeOutputCollector out;
  auto bolt = PreparedWithClock({{"faultSwitchFile", "/tmp/no-such-switch"}}, clock, out);
  ASSERT_NE(bolt, nullptr);
  for (int i = 0; i < 3; ++i) {
    bolt->Execute(Seq(i));
    clock.Advance(IdentityBolt::kFaultSwitchRecheck);
  }
  EXPECT_EQ(bolt->fault_switch_checks(), 0);
  EXPECT_EQ(out.acked.size(), 3u);
  EXPECT_EQ(out.emitted.size(), 3u);
}

TEST(IdentityBoltTest, UnstattableSwitchFileMeansOffAndIsReportedOnce) {
  FakeClock clock;
  FakeOutputCollector out;
  // A name longer than NAME_MAX: stat() fails with ENAMETOOLONG, not ENOENT.
  auto bolt = PreparedWithClock(
      {{"failFraction", 1}, {"faultSwitchFile", "/tmp/" + std::string(5000, 'x')}}, clock, out);
  ASSERT_NE(bolt, nullptr);
  for (int i = 0; i < 3; ++i) {
    bolt->Execute(Seq(i));
    clock.Advance(IdentityBolt::kFaultSwitchRecheck);
  }
  EXPECT_EQ(bolt->fault_switch_checks(), 3);
  EXPECT_TRUE(out.failed.empty());
  EXPECT_EQ(out.acked.size(), 3u);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_NE(out.errors[0].find("faultSwitchFile"), std::string::npos) << out.errors[0];
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
                                                        {{"fields", api::ValueList{"a"}}, {"failField", "nope"}},
                                                        {{"faultSwitchFile", 5}},
                                                        {{"faultSwitchFile", true}},
                                                        {{"faultSwitchFile", api::ValueList{"/a"}}}}) {
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
