#ifndef TEMPEST_TESTS_SYSTEM_CLUSTER_CLUSTER_FIXTURE_H_
#define TEMPEST_TESTS_SYSTEM_CLUSTER_CLUSTER_FIXTURE_H_

// A real multi-process cluster for system tests, assembled by
// devcluster::DevCluster: a ZooKeeper ensemble, `tempest nimbus` processes
// and `tempest supervisor` processes (which start `tempest worker`
// processes), all on 127.0.0.1 with short timeouts. The test reaches every
// process, so it can kill any of them.

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/coord/zk_ensemble.h"
#include "common/os/child_process.h"
#include "devcluster/dev_cluster.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tempest/v1/cluster.pb.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {

struct ClusterSpec {
  int zookeepers = 1;
  int nimbuses = 1;
  int supervisors = 2;
  int slots_per_supervisor = 2;
  // Short by default, so tests that kill daemons see their sessions expire
  // quickly; a test of ZooKeeper's own failures gives the ensemble's election
  // room, as production settings do (Storm's default session is 20 s).
  int zk_tick_ms = 250;
  int zk_session_timeout_ms = 4000;
  // Extra `key: value` lines for every daemon's tempest.yaml.
  std::vector<std::string> extra_config;
};

// One worker as its supervisor's local state shows it.
struct WorkerSlot {
  int supervisor = 0;  // index into the fixture's supervisors
  int port = 0;
  pid_t pid = 0;
  std::string topology_id;
  std::optional<v1::WorkerHeartbeat> beat;  // the local heartbeat file
};

class ClusterFixture : public ::testing::Test {
 protected:
  void TearDown() override;

  // Starts everything and waits until the supervisors are registered.
  void StartCluster(const ClusterSpec& spec);
  void StartNimbus(int index);
  void StartSupervisor(int index);

  // `tempest ARGS... --nimbus <a live nimbus>`; 60 s bound.
  CommandRun Tempest(std::vector<std::string> args);
  // GET on a nimbus's REST API; the parsed body (null on failure).
  nlohmann::json RestGet(const std::string& path, int nimbus = -1);
  // Writes `yaml` to a file and submits it; returns the topology id.
  std::string Submit(const std::string& yaml, const std::string& file_name);

  // The workers every supervisor runs now (launch records in {local}/supervisor/workers/*).
  std::vector<WorkerSlot> Workers() const;
  std::vector<WorkerSlot> WorkersOf(const std::string& topology_id) const;
  // The assignment nimbus wrote, read through a ZooKeeper client.
  std::optional<v1::Assignment> AssignmentOf(const std::string& topology_id) const;
  // Whether {root}/{relative} exists, read through a ZooKeeper client
  // (nullopt when ZooKeeper cannot be asked).
  std::optional<bool> ClusterNodeExists(const std::string& relative) const;
  // The cluster example (examples/cluster-generator-verifier.yaml) with its
  // files in this test's directory, paced at `rate` tuples/s for `count`
  // tuples, and a 5 s message timeout so trees lost with a worker replay
  // soon.
  std::string PacedExample(int64_t count, int64_t rate);
  // A resources directory (under this test's) holding Storm's storm.py and
  // erring_bolt.py, a Python bolt that acks every tuple and reports an error
  // ("cannot parse record N") for every 25th; returns its path.
  std::string ErringBoltResources();
  // Where PacedExample's verifier writes.
  std::string VerifierLog() const { return dir_.File("gv/verifier.log"); }
  // `tempest verify LOG --expected N --json`; null if it could not run.
  nlohmann::json Verify(const std::string& log, int64_t expected);
  // Waits (at most `timeout`) until VerifierLog() holds all `count` values;
  // fails the test otherwise. Returns the last report.
  nlohmann::json ExpectAllVerified(int64_t count, std::chrono::seconds timeout);

  std::string LocalDir(int supervisor) const;
  std::string ConfigPath() const { return dir_.File("tempest.yaml"); }
  std::string NimbusAddress(int index) const { return cluster_->nimbus_address(index); }
  // The address of a nimbus that is still running.
  std::string AnyNimbus() const;

  TempDir dir_{"tempest-cluster"};
  ClusterSpec spec_;
  // Declared after dir_, so its processes stop before the directory goes.
  std::unique_ptr<devcluster::DevCluster> cluster_;
  // Views into cluster_, for the tests' faults: the ensemble and each
  // daemon's current process.
  coord::ZkEnsemble* zk_ = nullptr;
  std::vector<os::ChildProcess*> nimbuses_;
  std::vector<os::ChildProcess*> supervisors_;
  int commands_ = 0;
};

// The source tree (ctest sets TEMPEST_SOURCE_DIR).
std::string SourceDir();

// A copy of an example topology with its /tmp paths moved into `dir`.
std::string ExampleWithPaths(const std::string& example, const std::string& from_dir,
                             const std::string& to_dir);

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SYSTEM_CLUSTER_CLUSTER_FIXTURE_H_
