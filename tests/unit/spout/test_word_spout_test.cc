// org.apache.storm.testing.TestWordSpout, implemented natively.
#include "spout/test_word_spout.h"

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

constexpr const char* kClass = "org.apache.storm.testing.TestWordSpout";

TEST(TestWordSpoutTest, EmitsStormsWordsUnanchoredAtTenPerSecond) {
  FakeClock clock;
  FakeSpoutCollector out;
  auto spout = TestWordSpout::Create(MakeArgs(kClass, {}, {api::Value(true)}), clock);
  ASSERT_TRUE(spout.ok()) << spout.status();
  ASSERT_TRUE((*spout)->Open({}, testing::MakeContext("words"), out).ok());
  for (int i = 0; i < 5; ++i) (*spout)->NextTuple();
  EXPECT_EQ(out.emitted.size(), 1u);  // the first word at once, then 10/s
  clock.Advance(std::chrono::seconds(1));
  for (int i = 0; i < 50; ++i) (*spout)->NextTuple();
  EXPECT_EQ(out.emitted.size(), 11u);
  const std::set<std::string> storm_words = {"nathan", "mike", "jackson", "golda", "bertels"};
  for (const auto& e : out.emitted) {
    ASSERT_EQ(e.values.size(), 1u);
    EXPECT_TRUE(storm_words.count(e.values[0].AsString())) << e.values[0].AsString();
    EXPECT_TRUE(e.message_id.is_nil());  // unreliable, as in Storm
  }
  EXPECT_FALSE((*spout)->IsExhausted());
  api::OutputFieldsDeclarer d;
  (*spout)->DeclareOutputFields(d);
  EXPECT_EQ(d.streams().at(api::DefaultStreamId()).fields, api::Fields({"word"}));
}

TEST(TestWordSpoutTest, CountMakesItFiniteAndRateZeroIsUnlimited) {
  FakeClock clock;
  FakeSpoutCollector out;
  auto spout = TestWordSpout::Create(MakeArgs(kClass, {{"rate", 0}, {"count", 7}}), clock);
  ASSERT_TRUE(spout.ok()) << spout.status();
  ASSERT_TRUE((*spout)->Open({}, testing::MakeContext("words"), out).ok());
  for (int i = 0; i < 100; ++i) (*spout)->NextTuple();
  EXPECT_EQ(out.emitted.size(), 7u);
  EXPECT_TRUE((*spout)->IsExhausted());
}

TEST(TestWordSpoutTest, RegisteredUnderStormsNameAndRejectsBadArgs) {
  api::ComponentRegistry registry;
  ASSERT_TRUE(RegisterBuiltinSpouts(registry).ok());
  EXPECT_TRUE(registry.CreateSpout(MakeArgs(kClass)).ok());
  auto bad_arg = registry.CreateSpout(MakeArgs(kClass, {}, {api::Value("yes")}));
  ASSERT_FALSE(bad_arg.ok());
  EXPECT_NE(bad_arg.status().message().find("isDistributed"), std::string::npos);
  EXPECT_FALSE(registry.CreateSpout(MakeArgs(kClass, {{"rate", -1}})).ok());
  EXPECT_FALSE(registry.CreateSpout(MakeArgs(kClass, {{"count", -5}})).ok());
}

}  // namespace
}  // namespace tempest::spout
