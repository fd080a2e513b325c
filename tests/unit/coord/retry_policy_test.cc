#include "common/coord/retry_policy.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace tempest::coord {
namespace {

using std::chrono::milliseconds;

TEST(RetryPolicyTest, BackoffGrowsWithJitterAndStopsAtCeiling) {
  RetryPolicy policy(RetryPolicy::Options{10, milliseconds(100), milliseconds(1000)}, 42);
  const milliseconds far(1'000'000);
  for (int retry = 0; retry < 10; ++retry) {
    int64_t bound = std::min<int64_t>(100LL << retry, 1000);
    auto wait = policy.NextBackoff(retry, far);
    ASSERT_TRUE(wait.has_value()) << retry;
    EXPECT_GE(wait->count(), bound / 2) << retry;
    EXPECT_LE(wait->count(), bound) << retry;
  }
}

TEST(RetryPolicyTest, RetryBudgetIsBounded) {
  RetryPolicy policy(RetryPolicy::Options{3, milliseconds(10), milliseconds(100)}, 1);
  EXPECT_TRUE(policy.NextBackoff(2, milliseconds(1000)).has_value());
  EXPECT_FALSE(policy.NextBackoff(3, milliseconds(1000)).has_value());
  EXPECT_FALSE(policy.NextBackoff(-1, milliseconds(1000)).has_value());
}

TEST(RetryPolicyTest, NeverWaitsPastTheDeadline) {
  RetryPolicy policy(RetryPolicy::Options{5, milliseconds(1000), milliseconds(30000)}, 7);
  for (int i = 0; i < 5; ++i) {
    auto wait = policy.NextBackoff(i, milliseconds(250));
    ASSERT_TRUE(wait.has_value());
    EXPECT_LE(wait->count(), 250);
  }
  EXPECT_FALSE(policy.NextBackoff(0, milliseconds(0)).has_value());
  EXPECT_FALSE(policy.NextBackoff(0, milliseconds(-5)).has_value());
}

TEST(RetryPolicyTest, HugeRetryCountsDoNotOverflow) {
  RetryPolicy policy(RetryPolicy::Options{1000, milliseconds(1000), milliseconds(30000)}, 3);
  auto wait = policy.NextBackoff(999, milliseconds(1'000'000));
  ASSERT_TRUE(wait.has_value());
  EXPECT_GE(wait->count(), 15000);
  EXPECT_LE(wait->count(), 30000);
}

TEST(RetryPolicyTest, SameSeedSameSchedule) {
  RetryPolicy a(RetryPolicy::Options{}, 99), b(RetryPolicy::Options{}, 99);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(a.NextBackoff(i, milliseconds(60000)), b.NextBackoff(i, milliseconds(60000)));
}

TEST(ZkClientConfigTest, StormDefaults) {
  auto c = ZkClientConfig::FromLookup([](std::string_view) { return std::optional<int64_t>(); });
  EXPECT_EQ(c.retry_times, 5);
  EXPECT_EQ(c.retry_interval, milliseconds(1000));
  EXPECT_EQ(c.retry_interval_ceiling, milliseconds(30000));
  EXPECT_EQ(c.session_timeout, milliseconds(20000));
  EXPECT_EQ(c.connection_timeout, milliseconds(15000));
}

TEST(ZkClientConfigTest, ReadsStormKeysAndIgnoresNonsense) {
  std::map<std::string, int64_t> conf = {{"storm.zookeeper.retry.times", 2},
                                         {"storm.zookeeper.retry.interval", 50},
                                         {"storm.zookeeper.retry.intervalceiling.millis", 400},
                                         {"storm.zookeeper.session.timeout", 4000},
                                         {"storm.zookeeper.connection.timeout", -1}};
  auto c = ZkClientConfig::FromLookup([&](std::string_view key) -> std::optional<int64_t> {
    auto it = conf.find(std::string(key));
    if (it == conf.end()) return std::nullopt;
    return it->second;
  });
  EXPECT_EQ(c.retry_times, 2);
  EXPECT_EQ(c.retry_interval, milliseconds(50));
  EXPECT_EQ(c.retry_interval_ceiling, milliseconds(400));
  EXPECT_EQ(c.session_timeout, milliseconds(4000));
  EXPECT_EQ(c.connection_timeout, milliseconds(15000));
  RetryPolicy p = RetryPolicy::FromConfig(c, 5);
  EXPECT_EQ(p.options().max_retries, 2);
  EXPECT_EQ(p.options().max_interval, milliseconds(400));
}

}  // namespace
}  // namespace tempest::coord
