// KafkaLagCache from the REST handler's side: a fresh answer is reused, a
// stale one is answered at once and refreshed behind, a first measurement is
// waited for only so long (then "being measured", never a lag of 0), a
// topology is never queued twice, and destruction waits for the measurer.
// The measurement is a fake the test holds back; time is a FakeClock.
#include "nimbus/kafka_lag_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_clock.h"

namespace tempest::nimbus {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Eventually;

// One storm-kafka-client spout, "reader".
StoredTopology Topology(const std::string& id, int version = 1) {
  StoredTopology t;
  t.id = id;
  t.version = version;
  t.base.set_name(id);
  t.base.set_flux_text(R"(name: "clicks"
components:
  - id: "builder"
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig$Builder"
    constructorArgs:
      - "broker-1:9092"
      - ["clicks"]
  - id: "config"
    className: "org.apache.storm.kafka.spout.KafkaSpoutConfig"
    constructorArgs:
      - ref: "builder"
spouts:
  - id: "reader"
    className: "org.apache.storm.kafka.spout.KafkaSpout"
    constructorArgs:
      - ref: "config"
bolts:
  - id: "sink"
    className: "org.apache.storm.flux.wrappers.bolts.LogInfoBolt"
streams:
  - from: "reader"
    to: "sink"
    grouping:
      type: SHUFFLE
)");
  return t;
}

// A measurement that answers "call N" in offsets_location once the test
// opens the gate.
class FakeMeasure {
 public:
  std::vector<spout::SpoutLag> Measure(const std::vector<spout::SpoutLagTarget>& targets) {
    const int call = ++started_;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return open_; });
    }
    std::vector<spout::SpoutLag> out;
    for (const spout::SpoutLagTarget& t : targets) {
      spout::SpoutLag s;
      s.component = t.component;
      s.offsets_location = absl::StrCat("call ", call);
      out.push_back(std::move(s));
    }
    ++finished_;
    return out;
  }
  void SetOpen(bool open) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_ = open;
    }
    cv_.notify_all();
  }
  int started() const { return started_; }
  int finished() const { return finished_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  std::atomic<int> started_{0};
  std::atomic<int> finished_{0};
};

class KafkaLagCacheTest : public ::testing::Test {
 protected:
  std::unique_ptr<KafkaLagCache> Make(milliseconds first_wait = seconds(60)) {
    KafkaLagCache::Options o;
    o.zk_connect = "127.0.0.1:1";
    o.clock = &clock_;
    o.ttl = seconds(2);
    o.first_wait = first_wait;
    o.measure = [this](const std::vector<spout::SpoutLagTarget>& t) { return fake_.Measure(t); };
    absl::StatusOr<std::unique_ptr<KafkaLagCache>> cache = KafkaLagCache::Create(std::move(o));
    EXPECT_TRUE(cache.ok()) << cache.status();
    return cache.ok() ? *std::move(cache) : nullptr;
  }
  // The "call N" of the cache's answer ("" when it is not one measured).
  static std::string Call(const absl::StatusOr<std::vector<spout::SpoutLag>>& lag) {
    if (!lag.ok() || lag->size() != 1 || !(*lag)[0].status.ok()) return "";
    return (*lag)[0].offsets_location;
  }

  testing::FakeClock clock_;
  FakeMeasure fake_;
};

TEST_F(KafkaLagCacheTest, FreshAnswerIsReused) {
  auto cache = Make();
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(Call(cache->Get(Topology("t-1"))), "call 1");
  clock_.Advance(seconds(1));
  EXPECT_EQ(Call(cache->Get(Topology("t-1"))), "call 1");
  EXPECT_EQ(fake_.started(), 1);
}

TEST_F(KafkaLagCacheTest, StaleAnswerIsReturnedAtOnceAndRefreshedBehind) {
  auto cache = Make();
  ASSERT_NE(cache, nullptr);
  ASSERT_EQ(Call(cache->Get(Topology("t-1"))), "call 1");
  clock_.Advance(seconds(3));
  fake_.SetOpen(false);  // the refresh hangs, as on an unreachable broker
  EXPECT_EQ(Call(cache->Get(Topology("t-1"))), "call 1");
  EXPECT_TRUE(Eventually(seconds(30), [&] { return fake_.started() == 2; }));
  EXPECT_EQ(Call(cache->Get(Topology("t-1"))), "call 1");
  fake_.SetOpen(true);
  EXPECT_TRUE(
      Eventually(seconds(30), [&] { return Call(cache->Get(Topology("t-1"))) == "call 2"; }));
}

TEST_F(KafkaLagCacheTest, FirstMeasurementIsWaitedForOnlySoLong) {
  auto cache = Make(milliseconds(50));
  ASSERT_NE(cache, nullptr);
  fake_.SetOpen(false);
  absl::StatusOr<std::vector<spout::SpoutLag>> lag = cache->Get(Topology("t-1"));
  ASSERT_TRUE(lag.ok()) << lag.status();
  ASSERT_EQ(lag->size(), 1u);
  EXPECT_EQ((*lag)[0].component, "reader");
  EXPECT_EQ((*lag)[0].status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE((*lag)[0].status.message().find("being measured"), std::string::npos);
  EXPECT_TRUE((*lag)[0].partitions.empty());
  fake_.SetOpen(true);
  EXPECT_TRUE(
      Eventually(seconds(30), [&] { return Call(cache->Get(Topology("t-1"))) == "call 1"; }));
  EXPECT_EQ(fake_.started(), 1);
}

TEST_F(KafkaLagCacheTest, ChangedRecordIsMeasuredAgain) {
  auto cache = Make();
  ASSERT_NE(cache, nullptr);
  ASSERT_EQ(Call(cache->Get(Topology("t-1", 1))), "call 1");
  EXPECT_EQ(Call(cache->Get(Topology("t-1", 2))), "call 2");
}

TEST_F(KafkaLagCacheTest, StaleTopologyIsRefreshedOnce) {
  auto cache = Make();
  ASSERT_NE(cache, nullptr);
  ASSERT_EQ(Call(cache->Get(Topology("t-1"))), "call 1");
  clock_.Advance(seconds(3));
  fake_.SetOpen(false);
  EXPECT_EQ(Call(cache->Get(Topology("t-1"))), "call 1");
  ASSERT_TRUE(Eventually(seconds(30), [&] { return fake_.started() == 2; }));
  // Asked again while queued or under way: no second job.
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Call(cache->Get(Topology("t-1"))), "call 1");
  fake_.SetOpen(true);
  // The measurer works in order: a duplicate would run before t-2.
  EXPECT_EQ(Call(cache->Get(Topology("t-2"))), "call 3");
  EXPECT_EQ(Call(cache->Get(Topology("t-1"))), "call 2");
  EXPECT_EQ(fake_.started(), 3);
}

TEST_F(KafkaLagCacheTest, DestructionWaitsForTheMeasurementUnderWay) {
  auto cache = Make(milliseconds(10));
  ASSERT_NE(cache, nullptr);
  fake_.SetOpen(false);
  (void)cache->Get(Topology("t-1"));
  (void)cache->Get(Topology("t-2"));
  ASSERT_TRUE(Eventually(seconds(30), [&] { return fake_.started() == 1; }));
  fake_.SetOpen(true);
  cache.reset();
  EXPECT_EQ(fake_.finished(), fake_.started());
}

TEST_F(KafkaLagCacheTest, DefinitionThatDoesNotLoadIsAnError) {
  auto cache = Make();
  ASSERT_NE(cache, nullptr);
  StoredTopology t = Topology("t-1");
  t.base.set_flux_text("spouts: [");
  EXPECT_FALSE(cache->Get(t).ok());
  EXPECT_EQ(fake_.started(), 0);
}

}  // namespace
}  // namespace tempest::nimbus
