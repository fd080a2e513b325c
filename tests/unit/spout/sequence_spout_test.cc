#include "spout/sequence_spout.h"

#include <chrono>
#include <set>

#include "gtest/gtest.h"
#include "spout/builtin_spouts.h"
#include "tests/support/component_harness.h"
#include "tests/support/fake_clock.h"

namespace tempest::spout {
namespace {

using testing::FakeClock;
using testing::FakeSpoutCollector;
using testing::MakeArgs;

class SequenceSpoutTest : public ::testing::Test {
 protected:
  std::unique_ptr<SequenceSpout> Open(api::ValueMap props, api::Config config = {}) {
    auto made = SequenceSpout::Create(MakeArgs("tempest.SequenceSpout", std::move(props)), clock_);
    EXPECT_TRUE(made.ok()) << made.status();
    if (!made.ok()) return nullptr;
    EXPECT_TRUE((*made)->Open(config, context_, collector_).ok());
    return *std::move(made);
  }
  // Calls NextTuple until nothing more comes out (bounded).
  void Drain(SequenceSpout& spout) {
    for (int i = 0; i < 100000; ++i) {
      size_t before = collector_.emitted.size();
      spout.NextTuple();
      if (collector_.emitted.size() == before) return;
    }
    FAIL() << "spout never stopped emitting";
  }

  FakeClock clock_;
  FakeSpoutCollector collector_;
  api::TopologyContext context_ = testing::MakeContext("gen");
};

TEST_F(SequenceSpoutTest, EmitsSeqKeyPayloadWithSeqAsMessageId) {
  auto spout = Open({{"count", 20}, {"keys", 4}, {"payloadBytes", 7}});
  Drain(*spout);
  ASSERT_EQ(collector_.emitted.size(), 20u);
  for (int64_t i = 0; i < 20; ++i) {
    const auto& e = collector_.emitted[i];
    ASSERT_EQ(e.values.size(), 3u);
    EXPECT_EQ(e.values[0].AsInt(), i);
    EXPECT_EQ(e.values[1].AsString(), "k" + std::to_string(i % 4));
    ASSERT_TRUE(e.values[2].is_bytes());
    EXPECT_EQ(e.values[2].AsBytes().size(), 7u);
    EXPECT_EQ(e.message_id.AsInt(), i);
    EXPECT_EQ(e.stream.value(), "default");
  }
  api::OutputFieldsDeclarer d;
  spout->DeclareOutputFields(d);
  EXPECT_EQ(d.streams().at(api::DefaultStreamId()).fields, api::Fields({"seq", "key", "payload"}));
}

TEST_F(SequenceSpoutTest, KeysAreTheSameWithManyKeysAsWithFew) {
  // Above the precomputed table's size the keys are formatted per tuple.
  const int64_t many = 100000;
  auto spout = Open({{"count", many + 3}, {"keys", many}, {"payloadBytes", 0}});
  Drain(*spout);
  ASSERT_EQ(collector_.emitted.size(), static_cast<size_t>(many + 3));
  EXPECT_EQ(collector_.emitted[99999].values[1].AsString(), "k99999");
  EXPECT_EQ(collector_.emitted[static_cast<size_t>(many) + 2].values[1].AsString(), "k2");
}

TEST_F(SequenceSpoutTest, DefaultsAreSixteenKeysAndHundredBytePayload) {
  auto spout = Open({{"count", 17}});
  Drain(*spout);
  ASSERT_EQ(collector_.emitted.size(), 17u);
  EXPECT_EQ(collector_.emitted[16].values[1].AsString(), "k0");
  EXPECT_EQ(collector_.emitted[0].values[2].AsBytes().size(), 100u);
  EXPECT_TRUE(spout->options().reliable);
}

TEST_F(SequenceSpoutTest, FailedSeqsReplayBeforeNewOnesUntilAcked) {
  auto spout = Open({{"count", 10}, {"rate", 0}});
  // Unlimited rate emits a burst; take the first 10.
  spout->NextTuple();
  ASSERT_EQ(collector_.emitted.size(), 10u);
  EXPECT_FALSE(spout->IsExhausted());
  for (int64_t s = 0; s < 10; ++s) {
    if (s == 3 || s == 7) {
      spout->Fail(api::MessageId(s));
    } else {
      spout->Ack(api::MessageId(s));
    }
  }
  spout->Fail(api::MessageId(int64_t{7}));  // duplicate fail: no second replay
  EXPECT_FALSE(spout->IsExhausted());
  collector_.emitted.clear();
  Drain(*spout);
  ASSERT_EQ(collector_.emitted.size(), 2u);
  EXPECT_EQ(collector_.emitted[0].values[0].AsInt(), 3);
  EXPECT_EQ(collector_.emitted[1].values[0].AsInt(), 7);
  EXPECT_EQ(collector_.emitted[1].message_id.AsInt(), 7);
  // Fails again (a timeout) -> replayed again; then acked -> exhausted.
  spout->Fail(api::MessageId(int64_t{7}));
  spout->Ack(api::MessageId(int64_t{3}));
  collector_.emitted.clear();
  Drain(*spout);
  ASSERT_EQ(collector_.emitted.size(), 1u);
  EXPECT_EQ(collector_.emitted[0].values[0].AsInt(), 7);
  EXPECT_FALSE(spout->IsExhausted());
  spout->Ack(api::MessageId(int64_t{7}));
  EXPECT_TRUE(spout->IsExhausted());
  EXPECT_EQ(spout->acked(), 10);
}

TEST_F(SequenceSpoutTest, ReplaysComeBeforeNewSeqs) {
  auto spout = Open({{"count", 1000}});
  spout->NextTuple();
  int64_t first_batch = static_cast<int64_t>(collector_.emitted.size());
  ASSERT_GT(first_batch, 2);
  ASSERT_LT(first_batch, 1000);
  spout->Fail(api::MessageId(int64_t{1}));
  collector_.emitted.clear();
  spout->NextTuple();
  ASSERT_FALSE(collector_.emitted.empty());
  EXPECT_EQ(collector_.emitted[0].values[0].AsInt(), 1);
  ASSERT_GT(collector_.emitted.size(), 1u);
  EXPECT_EQ(collector_.emitted[1].values[0].AsInt(), first_batch);
}

TEST_F(SequenceSpoutTest, ExhaustedOnlyWhenAllEmittedAndAcked) {
  auto spout = Open({{"count", 3}});
  EXPECT_FALSE(spout->IsExhausted());
  Drain(*spout);
  EXPECT_FALSE(spout->IsExhausted());  // all emitted, none acked
  spout->Ack(api::MessageId(int64_t{0}));
  spout->Ack(api::MessageId(int64_t{1}));
  EXPECT_FALSE(spout->IsExhausted());
  spout->Ack(api::MessageId(int64_t{99}));  // stray ack is ignored
  EXPECT_FALSE(spout->IsExhausted());
  spout->Ack(api::MessageId(int64_t{2}));
  EXPECT_TRUE(spout->IsExhausted());
}

TEST_F(SequenceSpoutTest, CountZeroIsExhaustedAtOnce) {
  auto spout = Open({{"count", 0}});
  spout->NextTuple();
  EXPECT_TRUE(collector_.emitted.empty());
  EXPECT_TRUE(spout->IsExhausted());
}

TEST_F(SequenceSpoutTest, UnreliableEmitsWithoutMessageIdsAndEndsAfterLastSeq) {
  auto spout = Open({{"count", 5}, {"reliable", false}});
  Drain(*spout);
  ASSERT_EQ(collector_.emitted.size(), 5u);
  for (const auto& e : collector_.emitted) EXPECT_TRUE(e.message_id.is_nil());
  EXPECT_TRUE(spout->IsExhausted());
}

TEST_F(SequenceSpoutTest, ForeverIsNeverExhausted) {
  auto spout = Open({{"count", -1}});
  for (int i = 0; i < 10; ++i) spout->NextTuple();
  EXPECT_GT(collector_.emitted.size(), 100u);
  EXPECT_FALSE(spout->IsExhausted());
}

TEST_F(SequenceSpoutTest, RateLimitEmitsWhatIsDueWithoutSleeping) {
  auto spout = Open({{"count", -1}, {"rate", 1000}});
  spout->NextTuple();
  EXPECT_EQ(collector_.emitted.size(), 1u);  // the first tuple is due at once
  spout->NextTuple();
  EXPECT_EQ(collector_.emitted.size(), 1u);  // ahead of schedule: returns at once
  clock_.Advance(std::chrono::milliseconds(10));
  spout->NextTuple();
  EXPECT_EQ(collector_.emitted.size(), 11u);  // 10 ms at 1000/s = 10 more
  clock_.Advance(std::chrono::microseconds(500));
  spout->NextTuple();
  EXPECT_EQ(collector_.emitted.size(), 11u);
  clock_.Advance(std::chrono::microseconds(500));
  spout->NextTuple();
  EXPECT_EQ(collector_.emitted.size(), 12u);
  // Over one simulated second the total matches the rate.
  for (int i = 0; i < 100; ++i) {
    clock_.Advance(std::chrono::milliseconds(10));
    spout->NextTuple();
  }
  EXPECT_EQ(collector_.emitted.size(), 1012u);
}

TEST_F(SequenceSpoutTest, LongStallDoesNotTurnIntoAFlood) {
  auto spout = Open({{"count", -1}, {"rate", 100}});
  spout->NextTuple();
  clock_.Advance(std::chrono::seconds(60));
  spout->NextTuple();
  EXPECT_LE(collector_.emitted.size(), 1u + SequenceSpout::kMaxBurst);
}

TEST_F(SequenceSpoutTest, BurstStopsAtMaxSpoutPending) {
  api::Config config;
  config.Set(api::kTopologyMaxSpoutPending, 5);
  auto spout = Open({{"count", 100}}, config);
  collector_.pending = 5;
  spout->NextTuple();
  EXPECT_EQ(collector_.emitted.size(), 1u);
}

TEST_F(SequenceSpoutTest, PositionalConstructorArgsAreCountAndRate) {
  auto made = SequenceSpout::Create(MakeArgs("tempest.SequenceSpout", {}, {7, 50.0}), clock_);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ((*made)->options().count, 7);
  EXPECT_EQ((*made)->options().rate, 50.0);
}

TEST_F(SequenceSpoutTest, BadPropertiesAreClearErrors) {
  struct Case {
    api::ValueMap props;
    std::string needle;
  };
  std::vector<Case> cases = {
      {{{"count", -2}}, "'count'"},     {{{"rate", -1}}, "'rate'"},
      {{{"keys", 0}}, "'keys'"},        {{{"payloadBytes", -1}}, "'payloadBytes'"},
      {{{"count", "lots"}}, "'count'"}, {{{"reliable", "maybe"}}, "'reliable'"},
  };
  for (const auto& c : cases) {
    auto made = SequenceSpout::Create(MakeArgs("tempest.SequenceSpout", c.props));
    ASSERT_FALSE(made.ok()) << c.needle;
    EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(made.status().message().find(c.needle), std::string::npos) << made.status();
    EXPECT_NE(made.status().message().find("tempest.SequenceSpout"), std::string::npos);
  }
  auto both = SequenceSpout::Create(MakeArgs("tempest.SequenceSpout", {{"count", 1}}, {2}));
  EXPECT_FALSE(both.ok());
  auto too_many = SequenceSpout::Create(MakeArgs("tempest.SequenceSpout", {}, {1, 2, 3}));
  EXPECT_FALSE(too_many.ok());
}

TEST(BuiltinSpoutsTest, RegisteredByClassNameAndIdempotent) {
  api::ComponentRegistry registry;
  ASSERT_TRUE(RegisterBuiltinSpouts(registry).ok());
  ASSERT_TRUE(RegisterBuiltinSpouts(registry).ok());
  EXPECT_TRUE(registry.HasSpout("tempest.SequenceSpout"));
  EXPECT_TRUE(registry.HasSpout("tempest.LineSpout"));
  auto spout = registry.CreateSpout(MakeArgs("tempest.SequenceSpout", {{"count", 3}}));
  ASSERT_TRUE(spout.ok()) << spout.status();
  auto bad = registry.CreateSpout(MakeArgs("tempest.SequenceSpout", {{"keys", 0}}));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  // The static registration reached the global registry too.
  LinkBuiltinSpouts();
  EXPECT_TRUE(api::ComponentRegistry::Global().HasSpout("tempest.SequenceSpout"));
}

}  // namespace
}  // namespace tempest::spout
