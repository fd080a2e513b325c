#include "common/net/backoff.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "gtest/gtest.h"

namespace tempest::net {
namespace {

using std::chrono::milliseconds;

TEST(BackoffTest, GrowsExponentiallyWithinJitterAndIsBounded) {
  Backoff backoff(milliseconds(10), milliseconds(1000), /*seed=*/42);
  int64_t base = 10;
  for (int i = 0; i < 40; ++i) {
    const auto d = backoff.Next();
    EXPECT_GE(d.count(), base / 2) << "attempt " << i;
    EXPECT_LE(d.count(), base) << "attempt " << i;
    base = std::min<int64_t>(base * 2, 1000);
  }
  EXPECT_LE(backoff.Next().count(), 1000);
}

TEST(BackoffTest, ResetStartsOverAndSeedMakesItDeterministic) {
  Backoff a(milliseconds(10), milliseconds(1000), 7);
  Backoff b(milliseconds(10), milliseconds(1000), 7);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(a.Next(), b.Next());
  a.Reset();
  EXPECT_EQ(a.attempt(), 0);
  EXPECT_LE(a.Next().count(), 10);
}

TEST(BackoffTest, JitterSpreadsClients) {
  // Many clients with different seeds must not all pick the same delay.
  std::set<int64_t> delays;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    Backoff backoff(milliseconds(100), milliseconds(5000), seed);
    backoff.Next();
    delays.insert(backoff.Next().count());
  }
  EXPECT_GT(delays.size(), 10u);
}

}  // namespace
}  // namespace tempest::net
