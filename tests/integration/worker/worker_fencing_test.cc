// A whole WorkerProcess in this test process, against a real ZooKeeper
// reached through a TcpProxy: cutting the proxy (traffic dropped both ways)
// makes the worker's session lost, and the worker must fence itself (stop its
// spouts, keep its bolts and acks going) until it has read the assignment
// again on a connected session.
//
// Topology: gen (a paced, reliable counting spout) -> sink (acks everything),
// one acker, all in the one slot the test assigns.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/api/component_registry.h"
#include "common/api/spout.h"
#include "common/coord/cluster_paths.h"
#include "common/coord/zk_session.h"
#include "common/core/flux/stored_topology.h"
#include "common/core/topology/task_layout.h"
#include "common/os/files.h"
#include "tempest/v1/cluster.pb.h"
#include "tests/integration/coord/tcp_proxy.h"
#include "tests/integration/worker/test_components.h"
#include "tests/support/eventually.h"
#include "tests/support/log_capture.h"
#include "tests/support/temp_dir.h"
#include "tests/support/zk_ensemble.h"
#include "worker/worker_process.h"

namespace tempest::worker {
namespace {

using std::chrono::milliseconds;
namespace support = ::tempest::testing;

constexpr milliseconds kSessionTimeout{4000};
// Cut to fenced: the client notices the silence (2/3 of the timeout), its
// timer declares the session lost (one more timeout), and the worker's loop
// may be inside a heartbeat write (2 s). Generous on top.
constexpr milliseconds kFenceWithin = kSessionTimeout * 6;
constexpr milliseconds kHealWithin{30000};

constexpr char kFencedLine[] = "worker fenced: ZooKeeper session lost";
constexpr char kUnfencedLine[] = "worker unfenced";

constexpr char kFlux[] = R"(name: fencing
config:
  topology.acker.executors: 1
  topology.message.timeout.secs: 120
spouts:
  - id: gen
    className: test.CountingSpout
    parallelism: 1
bolts:
  - id: sink
    className: test.AckBolt
    parallelism: 1
streams:
  - from: gen
    to: sink
    grouping:
      type: SHUFFLE
)";

struct SpoutCounts {
  std::atomic<int64_t> emitted{0};
  std::atomic<int64_t> acked{0};
};

// Emits one tracked tuple every 2 ms (so the counts stay small) and counts
// emits and acks.
class CountingSpout final : public api::Spout {
 public:
  explicit CountingSpout(std::shared_ptr<SpoutCounts> counts) : counts_(std::move(counts)) {}
  absl::Status Open(const api::Config&, const api::TopologyContext&,
                    api::SpoutOutputCollector& collector) override {
    collector_ = &collector;
    return absl::OkStatus();
  }
  void NextTuple() override {
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return;
    next_ = now + milliseconds(2);
    const int64_t seq = counts_->emitted.load();
    collector_->Emit({api::Value(seq)}, api::MessageId(seq));
    counts_->emitted.fetch_add(1);
  }
  void Ack(const api::MessageId&) override { counts_->acked.fetch_add(1); }
  void DeclareOutputFields(api::OutputFieldsDeclarer& d) const override {
    d.Declare(api::Fields({"num"}));
  }

 private:
  std::shared_ptr<SpoutCounts> counts_;
  api::SpoutOutputCollector* collector_ = nullptr;
  std::chrono::steady_clock::time_point next_{};
};

class WorkerFencingTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto e = support::ZkEnsemble::Start();
    ASSERT_TRUE(e.ok()) << e.status();
    ensemble_ = std::move(*e).release();
  }
  static void TearDownTestSuite() {
    delete ensemble_;
    ensemble_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(ensemble_, nullptr);
    testing::AddSpout(registry_, "test.CountingSpout",
                      [c = counts_] { return std::make_unique<CountingSpout>(c); });
    testing::AddBolt(registry_, "test.AckBolt",
                     [] { return std::make_unique<testing::AckBolt>(); });
    static std::atomic<int> counter{0};
    root_ = absl::StrCat("/fencing-test-", ++counter);
    port_ = support::FreePort();

    // The test's own session goes to ZooKeeper directly, never through the proxy.
    auto s = ::tempest::testing::ConnectedZkSession(ensemble_->ConnectString());
    ASSERT_TRUE(s.ok()) << s.status();
    zk_ = *std::move(s);

    base_.set_name("fencing");
    base_.set_status(v1::ACTIVE);
    base_.set_flux_text(kFlux);
    base_.set_flux_file_name("fencing.yaml");
    auto def = core::LoadStoredTopology(base_);
    ASSERT_TRUE(def.ok()) << def.status();
    auto layout = core::TaskLayout::Create(*def, core::TaskLayout::AckerExecutors(def->config));
    ASSERT_TRUE(layout.ok()) << layout.status();
    (*assignment_.mutable_node_host())[kSupervisor] = "127.0.0.1";
    for (const core::ExecutorInfo& e : layout->executors()) {
      v1::ExecutorAssignment* a = assignment_.add_executors();
      a->set_start_task(e.start.value());
      a->set_end_task(e.end.value());
      a->set_node(kSupervisor);
      a->set_port(port_);
    }
    assignment_.set_transport_secret(std::string(32, 's'));
    coord::ZkCreateOptions create;
    create.create_parents = true;
    ASSERT_TRUE(zk_->Create(Paths().Storm(kTopology), base_.SerializeAsString(), create).ok());
    ASSERT_TRUE(
        zk_->Create(Paths().Assignment(kTopology), assignment_.SerializeAsString(), create).ok());

    proxy_ = std::make_unique<support::TcpProxy>(ZkPort());
    WorkerProcessOptions wo;
    wo.zk.connect = absl::StrCat("127.0.0.1:", proxy_->port());
    wo.zk.root = root_;
    wo.zk.client.session_timeout = kSessionTimeout;
    wo.zk.client.connection_timeout = milliseconds(10000);
    wo.zk.client.retry_interval = milliseconds(100);
    wo.zk.client.retry_interval_ceiling = milliseconds(1000);
    wo.topology_id = kTopology;
    wo.supervisor_id = kSupervisor;
    wo.port = port_;
    wo.worker_dir = dir_.path();
    wo.shutdown_wait = milliseconds(500);
    wo.registry = &registry_;
    auto process = WorkerProcess::Start(std::move(wo));
    ASSERT_TRUE(process.ok()) << process.status();
    process_ = *std::move(process);
    runner_ = std::thread([this] { exit_ = process_->Run([this] { return stop_.load(); }); });
  }

  void TearDown() override {
    if (proxy_ != nullptr) Heal();
    StopWorker();
    process_.reset();
    proxy_.reset();
    if (zk_ != nullptr) zk_->Close();
  }

  coord::ClusterPaths Paths() const { return coord::ClusterPaths(root_); }
  int ZkPort() const {
    const std::string connect = ensemble_->ConnectString();
    return std::stoi(connect.substr(connect.rfind(':') + 1));
  }
  void Cut() {
    proxy_->DropToServer(true);
    proxy_->DropToClient(true);
  }
  void Heal() {
    proxy_->DropToServer(false);
    proxy_->DropToClient(false);
  }
  void StopWorker() {
    stop_ = true;
    if (runner_.joinable()) runner_.join();
  }
  void SetStatus(v1::TopologyStatus status) {
    base_.set_status(status);
    ASSERT_TRUE(zk_->Set(Paths().Storm(kTopology), base_.SerializeAsString()).ok());
  }

  // The spout has emitted `more` tuples beyond `from`.
  bool EmitsPast(int64_t from, int64_t more, milliseconds within) {
    return support::Eventually(within, [&] { return counts_->emitted.load() >= from + more; });
  }
  // The emitted count no longer moves: it settles (the spout executor sees
  // the deactivation on its next loop) and then stays put for a second.
  int64_t SettledEmitted() {
    std::this_thread::sleep_for(milliseconds(500));
    const int64_t settled = counts_->emitted.load();
    std::this_thread::sleep_for(milliseconds(1000));
    EXPECT_EQ(counts_->emitted.load(), settled) << "the spout kept emitting";
    return settled;
  }
  // tempest_worker_fenced as the last local heartbeat file carries it (-1:
  // not there).
  int64_t FencedGauge() const {
    auto bytes = os::ReadSmallFile(dir_.File("heartbeat"), 16 << 20);
    if (!bytes.ok()) return -1;
    v1::WorkerHeartbeat beat;
    if (!beat.ParseFromString(*bytes)) return -1;
    for (const v1::MetricPoint& p : beat.local_metrics()) {
      if (p.name() == "tempest_worker_fenced") return p.value();
    }
    return -1;
  }

  static constexpr char kTopology[] = "fencing-1-1";
  static constexpr char kSupervisor[] = "sup-1";
  static support::ZkEnsemble* ensemble_;

  support::LogCapture log_;
  support::TempDir dir_{"worker-fencing"};
  std::shared_ptr<SpoutCounts> counts_ = std::make_shared<SpoutCounts>();
  api::ComponentRegistry registry_;
  std::string root_;
  int port_ = 0;
  std::unique_ptr<coord::ZkSession> zk_;
  v1::StormBase base_;
  v1::Assignment assignment_;
  std::unique_ptr<support::TcpProxy> proxy_;
  std::unique_ptr<WorkerProcess> process_;
  std::thread runner_;
  std::atomic<bool> stop_{false};
  WorkerExit exit_ = WorkerExit::kStopRequested;
};
support::ZkEnsemble* WorkerFencingTest::ensemble_ = nullptr;

// Cut off from ZooKeeper the worker stops its spout once its session is lost,
// while the bolt and the acker finish every tree in flight; healed, with its
// slot's plan unchanged, it resumes.
TEST_F(WorkerFencingTest, LostSessionStopsSpoutsUntilTheAssignmentIsReadAgain) {
  ASSERT_TRUE(EmitsPast(0, 100, milliseconds(20000)));
  EXPECT_EQ(FencedGauge(), 0);

  Cut();
  ASSERT_TRUE(support::Eventually(kFenceWithin, [&] { return log_.Count(kFencedLine) > 0; }));
  EXPECT_EQ(log_.Count("(topology fencing-1-1, port " + std::to_string(port_) + ")"), 1);
  const int64_t fenced_at = SettledEmitted();
  // Acks still flow: everything emitted before the fence completes.
  EXPECT_TRUE(
      support::Eventually(milliseconds(10000), [&] { return counts_->acked.load() == fenced_at; }));
  EXPECT_TRUE(support::Eventually(milliseconds(10000), [&] { return FencedGauge() == 1; }));

  Heal();
  ASSERT_TRUE(support::Eventually(kHealWithin, [&] { return log_.Count(kUnfencedLine) > 0; }));
  EXPECT_TRUE(EmitsPast(fenced_at, 100, milliseconds(20000)));
  EXPECT_TRUE(support::Eventually(milliseconds(10000), [&] { return FencedGauge() == 0; }));
  // One line per episode, however many loss events it had (the local timer's,
  // then the server's expiry when the client gets through again).
  EXPECT_EQ(log_.Count(kFencedLine), 1);
  EXPECT_EQ(log_.Count(kUnfencedLine), 1);

  StopWorker();
  EXPECT_EQ(exit_, WorkerExit::kStopRequested);
}

// While the worker was cut off nimbus moved its executors elsewhere: after
// healing it must not resume but stop, as for any change of its plan.
TEST_F(WorkerFencingTest, FencedWorkerWhoseSlotWasReassignedStopsWithoutResuming) {
  ASSERT_TRUE(EmitsPast(0, 100, milliseconds(20000)));
  Cut();
  ASSERT_TRUE(support::Eventually(kFenceWithin, [&] { return log_.Count(kFencedLine) > 0; }));
  const int64_t fenced_at = SettledEmitted();

  v1::Assignment moved = assignment_;
  (*moved.mutable_node_host())["sup-2"] = "127.0.0.1";
  for (v1::ExecutorAssignment& e : *moved.mutable_executors()) e.set_node("sup-2");
  ASSERT_TRUE(zk_->Set(Paths().Assignment(kTopology), moved.SerializeAsString()).ok());

  Heal();
  // Run returns by itself.
  ASSERT_TRUE(support::Eventually(kHealWithin,
                                  [&] { return log_.Count("stopping: assignment changed") > 0; }));
  StopWorker();
  EXPECT_EQ(exit_, WorkerExit::kAssignmentChanged);
  EXPECT_EQ(log_.Count(kUnfencedLine), 0);
  EXPECT_EQ(counts_->emitted.load(), fenced_at);
}

// The topology was deactivated meanwhile: the fence lifts but the spouts stay
// stopped, and activating the topology later runs them again.
TEST_F(WorkerFencingTest, FenceLiftsIntoTheTopologyStatus) {
  ASSERT_TRUE(EmitsPast(0, 100, milliseconds(20000)));
  Cut();
  ASSERT_TRUE(support::Eventually(kFenceWithin, [&] { return log_.Count(kFencedLine) > 0; }));
  SetStatus(v1::INACTIVE);

  Heal();
  ASSERT_TRUE(support::Eventually(kHealWithin, [&] {
    return log_.Count(
               "worker unfenced: the assignment is unchanged; spouts stay stopped: the "
               "topology is INACTIVE") > 0;
  }));
  const int64_t inactive_at = SettledEmitted();

  SetStatus(v1::ACTIVE);
  EXPECT_TRUE(EmitsPast(inactive_at, 100, milliseconds(20000)));
  EXPECT_EQ(log_.Count(kFencedLine), 1);
}

}  // namespace
}  // namespace tempest::worker
