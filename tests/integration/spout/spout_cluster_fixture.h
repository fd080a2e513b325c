#ifndef TEMPEST_TESTS_INTEGRATION_SPOUT_SPOUT_CLUSTER_FIXTURE_H_
#define TEMPEST_TESTS_INTEGRATION_SPOUT_SPOUT_CLUSTER_FIXTURE_H_

// The cluster the KafkaSpout integration tests run against: a real ZooKeeper
// ensemble of kZkSize members and one DevKafka, started once per test suite
// (the test's thread), plus a ZooKeeper client per test.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api/component_registry.h"
#include "common/api/config.h"
#include "common/coord/zk_session.h"
#include "tests/support/dev_kafka.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::testing {

// Records "k<i>" -> "<i>" for i in [from, to).
inline std::vector<DevKafka::Record> NumberedRecords(int from, int to) {
  std::vector<DevKafka::Record> out;
  for (int i = from; i < to; ++i) out.push_back({absl::StrCat("k", i), absl::StrCat(i)});
  return out;
}

template <int kZkSize>
class SpoutClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ZkEnsemble::Options o;
    o.size = kZkSize;
    auto zk = ZkEnsemble::Start(o);
    ASSERT_TRUE(zk.ok()) << zk.status();
    zk_ = zk->release();
    auto kafka = DevKafka::Start(1, {});
    ASSERT_TRUE(kafka.ok()) << kafka.status();
    kafka_ = kafka->release();
  }
  static void TearDownTestSuite() {
    delete kafka_;
    kafka_ = nullptr;
    delete zk_;
    zk_ = nullptr;
  }

  // A connected client of the ensemble (no chroot), or nullptr with a failure.
  static std::unique_ptr<coord::ZkSession> ConnectClient(std::chrono::seconds timeout) {
    coord::ZkSession::Options o;
    o.connect_string = zk_->ConnectString();
    o.create_chroot = false;
    auto s = coord::ZkSession::Create(o);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return nullptr;
    EXPECT_TRUE((*s)->WaitConnected(timeout).ok());
    return std::move(*s);
  }

  // A tempest.KafkaSpout on this cluster: spout id "spout" under `root`,
  // 200 ms commit interval, plus `extra` properties.
  static api::ComponentArgs KafkaSpoutArgs(const std::string& topics, const std::string& root,
                                           const api::ValueMap& extra = {}) {
    api::ComponentArgs args;
    args.class_name = "tempest.KafkaSpout";
    args.id = api::ComponentId("kafka");
    args.properties = {{"bootstrap.servers", kafka_->bootstrap_servers()},
                       {"topics", topics},
                       {"zkRoot", root},
                       {"id", "spout"},
                       {"zkServers", zk_->ConnectString()},
                       {"stateUpdateIntervalMs", 200}};
    for (const auto& [k, v] : extra) args.properties[k] = v;
    return args;
  }

  // Short ZooKeeper timeouts, so the faults these tests inject play out fast.
  static api::Config TopologyConfig() {
    api::Config c;
    c.Set(api::kStormZookeeperSessionTimeout, 4000);
    c.Set(api::kStormZookeeperConnectionTimeout, 4000);
    return c;
  }

  inline static ZkEnsemble* zk_ = nullptr;
  inline static DevKafka* kafka_ = nullptr;
};

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_INTEGRATION_SPOUT_SPOUT_CLUSTER_FIXTURE_H_
