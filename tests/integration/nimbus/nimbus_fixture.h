#ifndef TEMPEST_TESTS_INTEGRATION_NIMBUS_NIMBUS_FIXTURE_H_
#define TEMPEST_TESTS_INTEGRATION_NIMBUS_NIMBUS_FIXTURE_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/api/component_registry.h"
#include "common/coord/zk_session.h"
#include "gtest/gtest.h"
#include "nimbus/nimbus.h"
#include "tests/support/zk_ensemble.h"

namespace tempest::nimbus::testing {

using std::chrono::milliseconds;

// A small valid topology: 2 spout executors, 3 bolt executors, 2 workers
// (so 2 acker executors): 7 executors, 7 tasks.
extern const char* const kDemoFlux;  // tests/support/demo_flux.h
// A submission of kDemoFlux, under `name` when given.
SubmitRequest Demo(const std::string& name = "");

// One ZooKeeper server for the whole binary; every test gets its own
// storm.zookeeper.root so tests never see each other's nodes.
class NimbusTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite();
  static void TearDownTestSuite();
  void SetUp() override;
  void TearDown() override;

  NimbusOptions Options() const;
  std::unique_ptr<Nimbus> StartNimbus();
  // A plain session for checking and faking nodes (e.g. supervisors).
  coord::ZkSession& zk() { return *zk_; }
  // Writes a fake supervisor node as a supervisor would.
  void AddSupervisor(const std::string& id, std::vector<int> ports);
  // Writes {root}/workerbeats/{topology}/{node}-{port} as a worker would,
  // listing `executors` and running totals derived from `counter` (so each
  // new counter changes the beat).
  void WriteBeat(const std::string& topology, const std::string& node, int port,
                 const std::vector<v1::ExecutorRange>& executors, int64_t counter);
  // The assignment as stored (nullopt if none).
  std::optional<v1::Assignment> StoredAssignment(const std::string& topology);
  int CountChildren(const std::string& path);

  static tempest::testing::ZkEnsemble* ensemble_;
  api::ComponentRegistry registry_;
  std::string root_;
  std::unique_ptr<coord::ZkSession> zk_;
};

}  // namespace tempest::nimbus::testing

#endif  // TEMPEST_TESTS_INTEGRATION_NIMBUS_NIMBUS_FIXTURE_H_
