// The KafkaSpout's retry defaults per Flux form, the backoff they give, the
// pace past the retry limit, the legacy form's warning, and the rate-limited
// report of tuples failing repeatedly (driven by a FakeClock).
#include <gtest/gtest.h>

#include <string>

#include "common/api/component_registry.h"
#include "spout/kafka/kafka_partition_state.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/retry_schedule.h"
#include "tests/support/fake_clock.h"

namespace tempest::spout {
namespace {

using api::Value;
using api::ValueList;
using api::ValueMap;
using std::chrono::milliseconds;
using std::chrono::seconds;

api::ComponentArgs Tempest(ValueMap props = {}) {
  api::ComponentArgs a;
  a.class_name = "tempest.KafkaSpout";
  a.id = api::ComponentId("kafka");
  a.properties = {{"bootstrap.servers", "127.0.0.1:9092"}, {"topics", "events"}};
  for (auto& [k, v] : props) a.properties[k] = v;
  return a;
}

api::ComponentArgs Legacy(ValueMap spout_config_props = {}) {
  auto bean = [](const std::string& id, const std::string& cls, ValueList ctor, ValueMap props) {
    return Value(ValueMap{{"id", id},
                          {"className", cls},
                          {"constructorArgs", std::move(ctor)},
                          {"properties", std::move(props)}});
  };
  api::ComponentArgs a;
  a.class_name = "org.apache.storm.kafka.KafkaSpout";
  a.id = api::ComponentId("kafka");
  a.constructor_args = {bean(
      "cfg", "org.apache.storm.kafka.SpoutConfig",
      {bean("hosts", "org.apache.storm.kafka.ZkHosts", {"zk1:2181"}, {}), "events", "/kafkaspout",
       "my-id"},
      std::move(spout_config_props))};
  return a;
}

TEST(RetryDefaultsTest, TempestFormBacksOffAndHasALimit) {
  auto c = ParseKafkaSpoutArgs(Tempest());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->retry.retry_initial_delay_ms, 100);
  EXPECT_DOUBLE_EQ(c->retry.retry_delay_multiplier, 2.0);
  EXPECT_EQ(c->retry.retry_delay_max_ms, 10'000);
  EXPECT_EQ(c->retry.retry_limit, 10);
  EXPECT_FALSE(c->storm_kafka_form);
  EXPECT_FALSE(ImmediateRetryWarning(*c).has_value());
}

TEST(RetryDefaultsTest, TempestFormKeepsWhatIsSet) {
  auto c = ParseKafkaSpoutArgs(Tempest({{"retryInitialDelayMs", 0}, {"retryLimit", -1}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->retry.retry_initial_delay_ms, 0);
  EXPECT_EQ(c->retry.retry_limit, -1);
  EXPECT_EQ(c->retry.retry_delay_max_ms, 10'000);  // the rest stay defaults
  // Only the storm-kafka form warns: here the user asked for it.
  EXPECT_FALSE(ImmediateRetryWarning(*c).has_value());
}

TEST(RetryDefaultsTest, MaxBelowTheDefaultInitialDelayIsOneClearError) {
  auto c = ParseKafkaSpoutArgs(Tempest({{"retryDelayMaxMs", 50}}));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("retryDelayMaxMs (50) must be >= retryInitialDelayMs (100)"),
            std::string::npos)
      << c.status();
}

TEST(RetryDefaultsTest, StormKafkaFormKeepsStormDefaultsAndWarns) {
  auto c = ParseKafkaSpoutArgs(Legacy());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->storm_kafka_form);
  EXPECT_EQ(c->retry.retry_initial_delay_ms, 0);
  EXPECT_DOUBLE_EQ(c->retry.retry_delay_multiplier, 1.0);
  EXPECT_EQ(c->retry.retry_delay_max_ms, 60'000);
  EXPECT_EQ(c->retry.retry_limit, -1);
  std::optional<std::string> w = ImmediateRetryWarning(*c);
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("at once"), std::string::npos) << *w;
  EXPECT_NE(w->find("forever"), std::string::npos) << *w;
  EXPECT_NE(w->find("retryInitialDelayMs"), std::string::npos) << *w;  // how to change it
  EXPECT_NE(w->find("deadLetterTopic"), std::string::npos) << *w;
}

TEST(RetryDefaultsTest, StormKafkaFormWithADelayDoesNotWarn) {
  auto c = ParseKafkaSpoutArgs(Legacy({{"retryInitialDelayMs", 250}}));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(ImmediateRetryWarning(*c).has_value());
  auto limited = ParseKafkaSpoutArgs(Legacy({{"retryLimit", 5}}));
  ASSERT_TRUE(limited.ok()) << limited.status();
  std::optional<std::string> w = ImmediateRetryWarning(*limited);
  ASSERT_TRUE(w.has_value());  // still immediate, but not forever
  EXPECT_NE(w->find("up to retryLimit 5 times"), std::string::npos) << *w;
}

TEST(RetryDefaultsTest, DefaultScheduleDoublesFrom100MsTo10s) {
  RetrySchedule r(TempestRetryDefaults());
  const int64_t expected[] = {100, 200, 400, 800, 1600, 3200, 6400, 10'000, 10'000, 10'000};
  for (int n = 1; n <= 10; ++n) EXPECT_EQ(r.DelayAfter(n), milliseconds(expected[n - 1])) << n;
}

TEST(RetryDefaultsTest, PastTheLimitRetriesComeAtTheMaximumDelay) {
  testing::FakeClock clock;
  RetrySchedule r({.retry_initial_delay_ms = 10, .retry_delay_multiplier = 1.0,
                   .retry_delay_max_ms = 5000, .retry_limit = 2});
  r.Failed(3, clock.Now());
  clock.Advance(milliseconds(10));
  ASSERT_EQ(r.NextDue(clock.Now()), 3);  // 10 ms after the first failure
  r.Retrying(3);
  r.Failed(3, clock.Now());  // the limit is used up
  EXPECT_FALSE(r.RetryFurther(3));
  clock.Advance(milliseconds(4999));
  EXPECT_FALSE(r.NextDue(clock.Now()).has_value());
  clock.Advance(milliseconds(1));
  EXPECT_EQ(r.NextDue(clock.Now()), 3);
}

// A poison record under the defaults, without a dead-letter topic: its
// deliveries in 10 s of fake time are few, and it is never acked past.
TEST(RetryDefaultsTest, PoisonRecordUnderDefaultsIsRetriedSlowlyAndBlocksCommits) {
  testing::FakeClock clock;
  KafkaPartitionState::Options o;
  o.retry = TempestRetryDefaults();
  KafkaPartitionState s(o, 0, 0);
  for (int64_t off = 0; off < 5; ++off) {
    s.OnFetched(off);
    s.OnEmitted(off);
  }
  for (int64_t off : {0, 1, 3, 4}) ASSERT_TRUE(s.OnAck(off));
  int deliveries = 1;
  ASSERT_EQ(s.OnFail(2, clock.Now()), KafkaPartitionState::FailAction::kRetry);
  for (int tick = 0; tick < 10'000; ++tick) {  // 10 s in 1 ms steps
    clock.Advance(milliseconds(1));
    if (std::optional<int64_t> due = s.NextRetry(clock.Now())) {
      ASSERT_EQ(*due, 2);
      s.Retrying(2);
      ++deliveries;
      ASSERT_EQ(s.OnFail(2, clock.Now()), KafkaPartitionState::FailAction::kRetry);
    }
  }
  // 0, 0.1, 0.3, 0.7, 1.5, 3.1, 6.3 s (the next is at 12.7 s).
  EXPECT_EQ(deliveries, 7);
  EXPECT_EQ(s.CommitPoint(), 2);
}

TEST(RetryDefaultsTest, WorstOffenderIsTheMostFailedOffset) {
  testing::FakeClock clock;
  RetrySchedule r(TempestRetryDefaults());
  EXPECT_FALSE(r.WorstOffender().has_value());
  r.Failed(40, clock.Now());
  for (int i = 0; i < 3; ++i) r.Failed(12, clock.Now());
  for (int i = 0; i < 3; ++i) r.Failed(30, clock.Now());
  EXPECT_EQ(r.failing_count(), 3u);
  std::optional<RetrySchedule::Worst> w = r.WorstOffender();
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->offset, 12);  // the lowest of the most failed
  EXPECT_EQ(w->failures, 3);
  EXPECT_EQ(w->delay, milliseconds(400));
  EXPECT_FALSE(w->limit_reached);
  for (int i = 0; i < 7; ++i) r.Failed(30, clock.Now());
  w = r.WorstOffender();
  EXPECT_EQ(w->offset, 30);
  EXPECT_EQ(w->failures, 10);
  EXPECT_TRUE(w->limit_reached);
  EXPECT_EQ(w->delay, milliseconds(10'000));
}

RepeatedFailureReporter::Summary Poisoned(int failures, bool limit_reached, bool dead_letter) {
  RepeatedFailureReporter::Summary s;
  s.failing_offsets = 2;
  s.worst_partition = "events/3";
  s.worst.offset = 1234;
  s.worst.failures = failures;
  s.worst.delay = milliseconds(limit_reached ? 10'000 : 1600);
  s.worst.limit_reached = limit_reached;
  s.dead_letter = dead_letter;
  s.retry_limit = 10;
  return s;
}

TEST(RepeatedFailureReporterTest, AtMostOneLinePerIntervalWithCounts) {
  testing::FakeClock clock;
  RepeatedFailureReporter r(seconds(10));
  EXPECT_FALSE(r.Due(clock.Now()));  // nothing failed
  r.OnFailure(clock.Now());
  clock.Advance(milliseconds(9999));
  r.OnFailure(clock.Now());
  EXPECT_FALSE(r.Due(clock.Now()));
  clock.Advance(milliseconds(1));
  ASSERT_TRUE(r.Due(clock.Now()));
  std::optional<std::string> line = r.Report(clock.Now(), Poisoned(5, false, false));
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(*line,
            "2 failed deliveries in the last 10 s; 2 offsets failing; worst: events/3 offset "
            "1234 failed 5 times, next retry delay 1600 ms");
  EXPECT_FALSE(r.Due(clock.Now()));
  r.OnFailure(clock.Now());
  clock.Advance(seconds(5));
  EXPECT_FALSE(r.Due(clock.Now()));  // the interval counts from the last line
  clock.Advance(seconds(5));
  EXPECT_TRUE(r.Due(clock.Now()));
}

TEST(RepeatedFailureReporterTest, NeverFallsSilentWhileATupleKeepsFailing) {
  testing::FakeClock clock;
  RepeatedFailureReporter r(seconds(10));
  int lines = 0;
  // An hour of a record failing every 10 s, the housekeeping checking every 100 ms.
  for (int step = 0; step < 36'000; ++step) {
    if (step % 100 == 0) r.OnFailure(clock.Now());
    if (r.Due(clock.Now()) && r.Report(clock.Now(), Poisoned(10, true, false)).has_value()) {
      ++lines;
    }
    clock.Advance(milliseconds(100));
  }
  EXPECT_GE(lines, 359);
  EXPECT_LE(lines, 360);
  EXPECT_EQ(r.reports(), lines);
}

TEST(RepeatedFailureReporterTest, SingleFailuresAreNotReported) {
  testing::FakeClock clock;
  RepeatedFailureReporter r(seconds(10));
  for (int i = 0; i < 50; ++i) r.OnFailure(clock.Now());
  clock.Advance(seconds(10));
  ASSERT_TRUE(r.Due(clock.Now()));
  EXPECT_FALSE(r.Report(clock.Now(), Poisoned(1, false, false)).has_value());
  EXPECT_FALSE(r.Due(clock.Now()));  // and it does not ask again at once
  EXPECT_EQ(r.reports(), 0);
}

TEST(RepeatedFailureReporterTest, SaysWhatHappensPastTheLimit) {
  testing::FakeClock clock;
  RepeatedFailureReporter r(seconds(10));
  r.OnFailure(clock.Now());
  clock.Advance(seconds(10));
  std::optional<std::string> stall = r.Report(clock.Now(), Poisoned(12, true, false));
  ASSERT_TRUE(stall.has_value());
  EXPECT_NE(stall->find("next retry delay 10000 ms"), std::string::npos) << *stall;
  EXPECT_NE(stall->find("retryLimit 10 reached and no deadLetterTopic is set: commits of "
                        "events/3 stay at or below offset 1234"),
            std::string::npos)
      << *stall;
  r.OnFailure(clock.Now());
  clock.Advance(seconds(10));
  std::optional<std::string> dead = r.Report(clock.Now(), Poisoned(10, true, true));
  ASSERT_TRUE(dead.has_value());
  EXPECT_NE(dead->find("it goes to the dead-letter topic"), std::string::npos) << *dead;
}

}  // namespace
}  // namespace tempest::spout
