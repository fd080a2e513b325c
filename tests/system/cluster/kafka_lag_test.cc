// KafkaSpout lag as an operator reads it, on a real cluster: GET
// /api/v1/topology/:id/lag, nimbus's /metrics and `tempest offsets show`
// measure it the same way (the log end asked of Kafka, the offsets where the
// spout stores them), whether the topology runs or not (docs/user-guide.md,
// "Kafka lag").

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/os/loopback.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/dev_kafka.h"
#include "tests/support/eventually.h"
#include "tests/system/cluster/cluster_fixture.h"

namespace tempest::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// One KafkaSpout reading `topic` into a sink whose execute takes
// `delay_micros`, so the spout falls behind a producer on purpose.
std::string KafkaTopology(const std::string& name, const std::string& bootstrap,
                          const std::string& zk, const std::string& topic, int64_t delay_micros,
                          const std::string& extra_spouts = "") {
  return absl::StrCat(R"(name: )", name, R"(
config:
  topology.workers: 1
  topology.max.spout.pending: 50
spouts:
  - id: events
    className: tempest.KafkaSpout
    parallelism: 1
    properties:
      - name: bootstrap.servers
        value: ")", bootstrap, R"("
      - name: topics
        value: )", topic, R"(
      - name: zkServers
        value: ")", zk, R"("
      - name: zkRoot
        value: /kafkaspout
      - name: id
        value: )", name, R"(
      - name: startOffsetTime
        value: -2
      - name: stateUpdateIntervalMs
        value: 200
)", extra_spouts, R"(bolts:
  - id: sink
    className: tempest.IdentityBolt
    parallelism: 1
    properties:
      - name: fields
        value: [topic, partition, offset, key, value]
      - name: delayMicros
        value: )", delay_micros, R"(
streams:
  - from: events
    to: sink
    grouping:
      type: SHUFFLE
)");
}

std::vector<DevKafka::Record> Records(int n) {
  std::vector<DevKafka::Record> out;
  for (int i = 0; i < n; ++i) out.push_back({"", absl::StrCat(i)});
  return out;
}

class KafkaLagTest : public ClusterFixture {
 protected:
  json Lag(const std::string& id) { return RestGet(absl::StrCat("/api/v1/topology/", id, "/lag")); }

  // `tempest offsets show --json` of the spout whose id is `spout_id`, every
  // partition of `topic` listed (stored offset or not).
  json OffsetsShow(const std::string& spout_id, const std::string& topic) {
    std::vector<std::string> args = {"offsets", "show", "--zk", zk_->ConnectString(), "--root",
                                     "/kafkaspout", "--id", spout_id, "--bootstrap",
                                     kafka_->bootstrap_servers(), "--topic", topic, "--json"};
    CommandRun run = Tempest(args);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return json::parse(run.out, nullptr, false);
  }

  // nimbus's /metrics, as Prometheus scrapes it.
  std::string MetricsText() {
    const std::string address = AnyNimbus();
    const size_t colon = address.rfind(':');
    auto response = os::TcpRequest(
        address.substr(0, colon), std::stoi(address.substr(colon + 1)),
        absl::StrCat("GET /metrics HTTP/1.1\r\nHost: ", address, "\r\nConnection: close\r\n\r\n"),
        milliseconds(30000));
    return response.ok() ? *response : std::string();
  }

  static const json* Row(const json& rows, const std::string& topic, int partition) {
    for (const json& r : rows) {
      if (r.value("topic", "") == topic && r.value("partition", -1) == partition) return &r;
    }
    return nullptr;
  }

  std::unique_ptr<DevKafka> kafka_;
};

// A topology that has not run yet (no supervisor) and is inactive reads
// nothing, yet its lag is every record waiting: partition 0 from the offset
// an operator stored, partition 1 (no stored offset) from its start policy
// (earliest); a second spout starting at the latest offset has nothing to
// read. `offsets show` and /metrics say the same. Scheduled, still inactive,
// the lag stays; activated, it drains. With the broker gone the answer says
// so, and is not a lag of 0.
TEST_F(KafkaLagTest, InactiveTopologyLagIsEveryWaitingRecord) {
  ClusterSpec spec;
  spec.supervisors = 0;
  StartCluster(spec);
  ASSERT_FALSE(HasFatalFailure());
  auto kafka = DevKafka::Start(1, {{"waiting", 2}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  kafka_ = *std::move(kafka);
  ASSERT_TRUE(kafka_->Produce("waiting", 0, Records(300)).ok());
  ASSERT_TRUE(kafka_->Produce("waiting", 1, Records(200)).ok());
  const std::string latest_spout = absl::StrCat(R"(  - id: tail
    className: tempest.KafkaSpout
    parallelism: 1
    properties:
      - name: bootstrap.servers
        value: ")", kafka_->bootstrap_servers(), R"("
      - name: topics
        value: waiting
      - name: zkServers
        value: ")", zk_->ConnectString(), R"("
      - name: zkRoot
        value: /kafkaspout
      - name: id
        value: lag-tail
      - name: startOffsetTime
        value: -1
)");
  const std::string path = dir_.File("inactive.yaml");
  std::ofstream(path) << KafkaTopology("lag-inactive", kafka_->bootstrap_servers(),
                                       zk_->ConnectString(), "waiting", 0, latest_spout);
  CommandRun submitted = Tempest({"submit", path, "--inactive"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  std::string id = submitted.out;
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();

  // Nothing stored yet: all 500 records wait.
  json lag = Lag(id);
  ASSERT_TRUE(lag.contains("events")) << lag.dump();
  EXPECT_EQ(lag["events"].value("totalLag", int64_t{-1}), 500) << lag.dump();
  EXPECT_EQ(lag["events"].value("partitionsWithUnknownLag", -1), 0) << lag.dump();
  for (const json& r : lag["events"]["spoutLagResult"]) {
    EXPECT_EQ(r.value("lagBasis", ""), "earliest") << r.dump();
    EXPECT_EQ(r.value("consumerCommittedOffset", int64_t{0}), -1) << r.dump();
  }
  ASSERT_TRUE(lag.contains("tail")) << lag.dump();
  EXPECT_EQ(lag["tail"].value("totalLag", int64_t{-1}), 0) << lag.dump();
  EXPECT_EQ(OffsetsShow("lag-inactive", "waiting").value("total_lag", int64_t{-1}), 500);

  // An operator stores partition 0's offset at 100: 200 + 200 wait.
  CommandRun set = Tempest({"offsets", "set", "--zk", zk_->ConnectString(), "--root",
                            "/kafkaspout", "--id", "lag-inactive", "--topic", "waiting",
                            "--partition", "0", "--offset", "100", "--bootstrap",
                            kafka_->bootstrap_servers(), "--seed", "--execute"});
  ASSERT_EQ(set.exit_code, 0) << set.out << set.err;
  EXPECT_TRUE(Eventually(seconds(30), [&] {
    lag = Lag(id);
    return lag.contains("events") && lag["events"].value("totalLag", int64_t{-1}) == 400;
  }, milliseconds(500))) << lag.dump();
  const json* p0 = Row(lag["events"]["spoutLagResult"], "waiting", 0);
  ASSERT_NE(p0, nullptr) << lag.dump();
  EXPECT_EQ(p0->value("consumerCommittedOffset", int64_t{-1}), 100);
  EXPECT_EQ(p0->value("logHeadOffset", int64_t{-1}), 300);
  EXPECT_EQ(p0->value("lag", int64_t{-1}), 200);
  EXPECT_EQ(p0->value("lagBasis", ""), "committed");
  const json shown = OffsetsShow("lag-inactive", "waiting");
  EXPECT_EQ(shown.value("total_lag", int64_t{-1}), 400) << shown.dump();
  const json* shown_p0 = Row(shown["partitions"], "waiting", 0);
  ASSERT_NE(shown_p0, nullptr) << shown.dump();
  EXPECT_EQ(shown_p0->value("lag", int64_t{-1}), 200);

  // nimbus's /metrics carries the same numbers.
  const std::string series = absl::StrCat("tempest_kafka_partition_lag{topology_id=\"", id,
                                          "\",topology=\"lag-inactive\",component=\"events\","
                                          "topic=\"waiting\",partition=\"0\"} 200\n");
  std::string metrics = MetricsText();
  EXPECT_NE(metrics.find(series), std::string::npos) << metrics;

  // Scheduled but still inactive: nothing is read, the lag stays.
  StartSupervisor(0);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(Eventually(seconds(90), [&] {
    for (const WorkerSlot& w : WorkersOf(id)) {
      if (w.beat.has_value()) return true;
    }
    return false;
  }, milliseconds(500))) << "no worker of " << id;
  lag = Lag(id);
  EXPECT_EQ(lag["events"].value("totalLag", int64_t{-1}), 400) << lag.dump();

  // Activated, it drains to 0.
  CommandRun activate = Tempest({"activate", "lag-inactive"});
  ASSERT_EQ(activate.exit_code, 0) << activate.err;
  EXPECT_TRUE(Eventually(seconds(90), [&] {
    lag = Lag(id);
    return lag.contains("events") && lag["events"].value("totalLag", int64_t{-1}) == 0;
  }, milliseconds(500))) << lag.dump();

  // The broker goes away: the lag is unknown, and says why.
  ASSERT_TRUE(kafka_->SetBrokerDown(1).ok());
  EXPECT_TRUE(Eventually(seconds(60), [&] {
    lag = Lag(id);
    return lag.contains("events") && lag["events"].contains("errorInfo");
  }, milliseconds(1000))) << lag.dump();
  EXPECT_TRUE(lag["events"]["totalLag"].is_null()) << lag.dump();
  metrics = MetricsText();
  EXPECT_NE(metrics.find(absl::StrCat("tempest_kafka_spout_lag_measured{topology_id=\"", id,
                                      "\",topology=\"lag-inactive\",component=\"events\"} 0\n")),
            std::string::npos)
      << metrics;
  ASSERT_TRUE(kafka_->SetBrokerUp(1).ok());
}

// An active topology whose sink is slower than the producer: after each
// bounded batch, REST shows the log end Kafka has (not the spout's last
// fetch), and `offsets show` read right after agrees: the same log end, and
// a lag that differs only by what the spout committed in between.
TEST_F(KafkaLagTest, ActiveTopologyLagAgreesWithOffsetsShow) {
  StartCluster({});
  ASSERT_FALSE(HasFatalFailure());
  auto kafka = DevKafka::Start(1, {{"load", 1}});
  ASSERT_TRUE(kafka.ok()) << kafka.status();
  kafka_ = *std::move(kafka);
  // 50 tuples/s at most, against batches of 400.
  const std::string id =
      Submit(KafkaTopology("lag-active", kafka_->bootstrap_servers(), zk_->ConnectString(),
                           "load", 20000),
             "active.yaml");
  ASSERT_FALSE(id.empty());
  int64_t produced = 0;
  json lag;
  for (int batch = 0; batch < 4; ++batch) {
    ASSERT_TRUE(kafka_->Produce("load", 0, Records(400)).ok());
    produced += 400;
    // Within the cache's life the answer may predate the batch.
    ASSERT_TRUE(Eventually(seconds(60), [&] {
      lag = Lag(id);
      const json* r = lag.contains("events") ? Row(lag["events"]["spoutLagResult"], "load", 0)
                                             : nullptr;
      return r != nullptr && r->value("logHeadOffset", int64_t{-1}) == produced &&
             (batch == 0 || r->value("consumerCommittedOffset", int64_t{-1}) > 0);
    }, milliseconds(250))) << "batch " << batch << ": " << lag.dump();
    const json shown = OffsetsShow("lag-active", "load");
    const json* rest_row = Row(lag["events"]["spoutLagResult"], "load", 0);
    const json* show_row = Row(shown["partitions"], "load", 0);
    ASSERT_NE(show_row, nullptr) << shown.dump();
    EXPECT_EQ(show_row->value("log_end_offset", int64_t{-1}), produced) << shown.dump();
    if (!show_row->value("stored", false)) continue;  // not committed yet
    const int64_t rest_committed = rest_row->value("consumerCommittedOffset", int64_t{-1});
    const int64_t show_committed = show_row->value("committed_offset", int64_t{-1});
    // Commits only move forward, and the two lags differ by exactly that.
    EXPECT_LE(rest_committed, show_committed) << lag.dump() << shown.dump();
    EXPECT_EQ(rest_row->value("lag", int64_t{-1}) - show_row->value("lag", int64_t{-1}),
              show_committed - rest_committed)
        << lag.dump() << shown.dump();
    EXPECT_EQ(lag["events"].value("totalLag", int64_t{-1}), rest_row->value("lag", int64_t{-2}));
  }
  // Behind on purpose: the lag is real, and never the spout's stale 0.
  EXPECT_GT(lag["events"].value("totalLag", int64_t{0}), 0) << lag.dump();
}

}  // namespace
}  // namespace tempest::testing
