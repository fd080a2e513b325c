#include "tests/integration/nimbus/nimbus_fixture.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "bolts/builtin_bolts.h"
#include "spout/builtin_spouts.h"
#include "tests/support/demo_flux.h"

namespace tempest::nimbus::testing {

const char* const kDemoFlux = tempest::testing::kGenSinkFlux;

SubmitRequest Demo(const std::string& name) {
  SubmitRequest r;
  r.flux_text = kDemoFlux;
  r.file_name = "demo.yaml";
  r.name = name;
  return r;
}

tempest::testing::ZkEnsemble* NimbusTest::ensemble_ = nullptr;

void NimbusTest::SetUpTestSuite() {
  auto e = tempest::testing::ZkEnsemble::Start();
  ASSERT_TRUE(e.ok()) << e.status();
  ensemble_ = e->release();
}

void NimbusTest::TearDownTestSuite() {
  delete ensemble_;
  ensemble_ = nullptr;
}

void NimbusTest::SetUp() {
  ASSERT_NE(ensemble_, nullptr);
  ASSERT_TRUE(spout::RegisterBuiltinSpouts(registry_).ok());
  ASSERT_TRUE(bolts::RegisterBuiltinBolts(registry_).ok());
  static std::atomic<int> counter{0};
  root_ = absl::StrCat("/nimbus-test-", ++counter);
  auto s = ::tempest::testing::ConnectedZkSession(ensemble_->ConnectString(), Options().zk);
  ASSERT_TRUE(s.ok()) << s.status();
  zk_ = *std::move(s);
}

void NimbusTest::TearDown() {
  if (zk_) zk_->Close();
}

NimbusOptions NimbusTest::Options() const {
  NimbusOptions o;
  o.zk_connect = ensemble_ != nullptr ? ensemble_->ConnectString() : "";
  o.root = root_;
  o.zk.session_timeout = milliseconds(4000);
  o.zk.connection_timeout = milliseconds(10000);
  o.zk.retry_interval = milliseconds(100);
  o.zk.retry_interval_ceiling = milliseconds(1000);
  o.bind_host = "127.0.0.1";
  o.port = 0;
  o.monitor_interval = milliseconds(200);
  o.op_timeout = milliseconds(15000);
  o.registry = &registry_;
  return o;
}

std::unique_ptr<Nimbus> NimbusTest::StartNimbus() {
  auto n = Nimbus::Create(Options());
  EXPECT_TRUE(n.ok()) << n.status();
  return n.ok() ? *std::move(n) : nullptr;
}

void NimbusTest::AddSupervisor(const std::string& id, std::vector<int> ports) {
  v1::SupervisorInfo info;
  info.set_supervisor_id(id);
  info.set_hostname("127.0.0.1");
  for (int p : ports) info.add_slot_ports(p);
  coord::ZkCreateOptions create;
  create.mode = coord::ZkCreateMode::kEphemeral;
  create.create_parents = true;
  auto created = zk_->Create(absl::StrCat(root_, "/supervisors/", id), info.SerializeAsString(),
                             create);
  ASSERT_TRUE(created.ok()) << created.status();
}

void NimbusTest::WriteBeat(const std::string& topology, const std::string& node, int port,
                           const std::vector<v1::ExecutorRange>& executors, int64_t counter) {
  v1::WorkerHeartbeat beat;
  beat.set_topology_id(topology);
  beat.set_supervisor_id(node);
  beat.set_port(port);
  beat.set_time_secs(1'700'000'000 + counter);
  beat.set_uptime_secs(counter);
  beat.set_pid(1000 + port);
  for (const auto& e : executors) {
    *beat.add_executors() = e;
    if (e.component().empty()) continue;
    // Storm's executor statistics, derived from `counter` like the totals:
    // spout "gen" emits 10 per count and sees one tree acked, a bolt
    // executes and acks one tuple from gen per count.
    v1::ExecutorStats* stats = beat.add_executor_stats();
    stats->set_component(e.component());
    stats->set_start_task(e.start_task());
    stats->set_end_task(e.end_task());
    stats->set_uptime_secs(counter);
    if (e.component() == "gen") {
      stats->set_spout(true);
      v1::StreamStats* out = stats->add_outputs();
      out->set_stream("default");
      out->set_emitted(10 * counter);
      out->set_transferred(10 * counter);
      out->set_acked(counter);
      out->set_complete_latency_us_sum(1000 * counter);
      out->set_complete_latency_samples(counter);
    } else {
      v1::StreamStats* in = stats->add_inputs();
      in->set_component("gen");
      in->set_stream("default");
      in->set_executed(counter);
      in->set_acked(counter);
    }
  }
  beat.set_emitted(10 * counter);
  beat.set_transferred(10 * counter);
  beat.set_acked(counter);
  beat.set_failed(counter % 2);
  beat.set_complete_latency_p99_us(1000 + counter);
  const std::string path = absl::StrCat(root_, "/workerbeats/", topology, "/", node, "-", port);
  auto set = zk_->Set(path, beat.SerializeAsString());
  if (set.ok()) return;
  ASSERT_TRUE(absl::IsNotFound(set.status())) << set.status();
  coord::ZkCreateOptions create;
  create.create_parents = true;
  auto created = zk_->Create(path, beat.SerializeAsString(), create);
  ASSERT_TRUE(created.ok() || absl::IsAlreadyExists(created.status())) << created.status();
}

std::optional<v1::Assignment> NimbusTest::StoredAssignment(const std::string& topology) {
  auto node = zk_->Get(absl::StrCat(root_, "/assignments/", topology));
  if (!node.ok()) return std::nullopt;
  v1::Assignment a;
  if (!a.ParseFromString(node->data)) return std::nullopt;
  return a;
}

int NimbusTest::CountChildren(const std::string& path) {
  auto children = zk_->Children(path);
  if (absl::IsNotFound(children.status())) return 0;
  EXPECT_TRUE(children.ok()) << children.status();
  return children.ok() ? static_cast<int>(children->size()) : -1;
}

}  // namespace tempest::nimbus::testing
