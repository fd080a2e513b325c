// What the user guide promises about the statistics' freshness ("Statistics:
// what each number means"): every executor publishes its counts at least
// about once a second whatever its speed, workers beat every second, and
// nimbus's REST pages read the latest beats. So a bolt handling about 25
// tuples/s shows its `executed` count rising from one sample of the
// component page to the next, both when a rate-limited spout feeds it 25
// tuples/s and when the bolt itself is that slow (40 ms a tuple, with a
// backlog waiting: the case that used to show steps of 256 every 10 s).
//
// Not a throughput check: only that the count moves between samples taken
// 1.5 s apart, in most of them (a loaded machine may delay a beat).

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/eventually.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Two paths of about 25 tuples/s each: `paced` gets a spout rate-limited to
// 25 tuples/s; `slow` takes 40 ms per tuple behind an unlimited spout held
// to 300 pending trees, so its queue always has hundreds waiting.
constexpr char kTopology[] = R"(name: fresh
config:
  topology.workers: 1
  topology.max.spout.pending: 300
spouts:
  - id: rated
    className: tempest.SequenceSpout
    properties:
      - name: rate
        value: 25
  - id: flood
    className: tempest.SequenceSpout
bolts:
  - id: paced
    className: tempest.IdentityBolt
  - id: slow
    className: tempest.IdentityBolt
    properties:
      - name: delayMicros
        value: 40000
streams:
  - from: rated
    to: paced
    grouping:
      type: SHUFFLE
  - from: flood
    to: slow
    grouping:
      type: SHUFFLE
)";

// All-time `executed` of a bolt as its component page shows it (-1: none yet).
int64_t Executed(const json& page) {
  for (const json& w : page.value("boltStats", json::array())) {
    if (w.value("window", "") == ":all-time") return w.value("executed", int64_t{-1});
  }
  return -1;
}

class StatsFreshnessTest : public ClusterFixture {};

TEST_F(StatsFreshnessTest, ASlowOrPacedBoltsExecutedCountRisesEverySample) {
  ClusterSpec spec;
  spec.supervisors = 1;
  StartCluster(spec);
  ASSERT_FALSE(HasFatalFailure());
  const std::string id = Submit(kTopology, "fresh.yaml");
  ASSERT_FALSE(id.empty());
  const std::vector<std::string> bolts = {"paced", "slow"};
  auto page_of = [&](const std::string& bolt) {
    return RestGet(absl::StrCat("/api/v1/topology/", id, "/component/", bolt));
  };
  // Running and counting: both bolts have executed something.
  ASSERT_TRUE(Eventually(
      seconds(90),
      [&] {
        for (const std::string& b : bolts) {
          if (Executed(page_of(b)) <= 0) return false;
        }
        return true;
      },
      milliseconds(500)))
      << page_of("slow").dump();

  // Samples 1.5 s apart: each window holds at least one worker beat.
  constexpr int kWindows = 12;
  constexpr int kMustRise = 9;
  std::vector<std::vector<int64_t>> samples(bolts.size());
  for (int i = 0; i <= kWindows; ++i) {
    if (i > 0) std::this_thread::sleep_for(milliseconds(1500));  // the sampling period
    for (size_t b = 0; b < bolts.size(); ++b) samples[b].push_back(Executed(page_of(bolts[b])));
  }
  for (size_t b = 0; b < bolts.size(); ++b) {
    int rises = 0;
    for (int i = 1; i <= kWindows; ++i) {
      EXPECT_GE(samples[b][i], samples[b][i - 1]) << bolts[b] << " went backwards";
      if (samples[b][i] > samples[b][i - 1]) ++rises;
    }
    EXPECT_GE(rises, kMustRise) << bolts[b] << "'s executed count, sampled every 1.5 s: "
                                << absl::StrJoin(samples[b], " ");
  }
  CommandRun kill = Tempest({"kill", "fresh", "-w", "0"});
  EXPECT_EQ(kill.exit_code, 0) << kill.err;
}

}  // namespace
}  // namespace tempest::testing
