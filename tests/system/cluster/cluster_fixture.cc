#include "tests/system/cluster/cluster_fixture.h"

#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/os/loopback.h"
#include "tests/support/eventually.h"
#include "tests/support/output_file.h"
#include "tests/support/raw_zk_client.h"

namespace tempest::testing {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr const char* kRoot = "/tempest-cluster";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::string SourceDir() {
  const char* s = std::getenv("TEMPEST_SOURCE_DIR");
  return s != nullptr ? s : ".";
}

std::string ExampleWithPaths(const std::string& example, const std::string& from_dir,
                             const std::string& to_dir) {
  return absl::StrReplaceAll(ReadAll(example), {{from_dir, to_dir}});
}

void ClusterFixture::StartCluster(const ClusterSpec& spec) {
  spec_ = spec;
  devcluster::DevCluster::Options o;
  o.binary = TempestBinary();
  o.log_dir = dir_.path();
  o.start_timeout = seconds(60);
  o.zookeepers = spec.zookeepers;
  o.zk_tick_ms = spec.zk_tick_ms;
  devcluster::ClusterConfig config;
  config.zk_root = kRoot;
  config.zk_session_timeout_ms = spec.zk_session_timeout_ms;
  config.zk_connection_timeout_ms = 4000;
  config.extra_lines = spec.extra_config;
  o.config = config;
  o.config_path = ConfigPath();
  cluster_ = std::make_unique<devcluster::DevCluster>(std::move(o));
  absl::Status zk = cluster_->StartZooKeeper();
  ASSERT_TRUE(zk.ok()) << zk;
  zk_ = cluster_->ensemble();
  for (int i = 0; i < spec.nimbuses; ++i) {
    StartNimbus(i);
    if (HasFatalFailure()) return;
  }
  for (int i = 0; i < spec.supervisors; ++i) {
    StartSupervisor(i);
    if (HasFatalFailure()) return;
  }
  // Every supervisor is visible to nimbus before a test submits.
  ASSERT_TRUE(Eventually(seconds(60), [&] {
    json s = RestGet("/api/v1/supervisor/summary");
    return s.is_object() && s.contains("supervisors") &&
           static_cast<int>(s["supervisors"].size()) == spec.supervisors;
  })) << RestGet("/api/v1/supervisor/summary").dump();
}

void ClusterFixture::StartNimbus(int index) {
  absl::StatusOr<std::string> address = index < cluster_->nimbus_count()
                                            ? cluster_->RestartNimbus(index)
                                            : cluster_->AddNimbus(absl::StrCat("nimbus-", index));
  ASSERT_GT(cluster_->nimbus_count(), index) << address.status();
  nimbuses_.resize(cluster_->nimbus_count());
  nimbuses_[index] = cluster_->nimbus(index).process.get();
  ASSERT_TRUE(address.ok()) << address.status() << "\n"
                            << ReadFileOrEmpty(cluster_->nimbus(index).log);
}

void ClusterFixture::StartSupervisor(int index) {
  absl::Status started;
  if (index < cluster_->supervisor_count()) {
    started = cluster_->RestartSupervisor(index);
  } else {
    started = cluster_->AddSupervisor(absl::StrCat("supervisor-", index), LocalDir(index),
                                      spec_.slots_per_supervisor)
                  .status();
  }
  ASSERT_GT(cluster_->supervisor_count(), index) << started;
  supervisors_.resize(cluster_->supervisor_count());
  supervisors_[index] = cluster_->supervisor(index).process.get();
  ASSERT_TRUE(started.ok()) << started << "\n" << ReadFileOrEmpty(cluster_->supervisor(index).log);
}

void ClusterFixture::TearDown() {
  // Supervisors first: they stop their workers (which close their sinks).
  if (cluster_ != nullptr) {
    cluster_->StopSupervisors(seconds(20));
    cluster_->StopNimbuses(seconds(20));
  }
  // Workers of a supervisor that a test SIGKILLed are not its children any
  // more; they are found by their local state and killed here.
  for (const WorkerSlot& w : Workers()) {
    if (w.pid > 0) ::kill(-w.pid, SIGKILL);
  }
  if (HasFailure()) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path())) {
      const std::string p = entry.path().string();
      if (entry.is_regular_file() && p.size() > 4 && p.substr(p.size() - 4) == ".log") {
        std::string text = ReadFileOrEmpty(p);
        if (text.size() > 6000) text = "..." + text.substr(text.size() - 6000);
        std::cerr << "==== " << p << "\n" << text << "\n";
      }
    }
  }
}

std::string ClusterFixture::LocalDir(int supervisor) const {
  return dir_.File(absl::StrCat("supervisor-", supervisor));
}

std::string ClusterFixture::AnyNimbus() const {
  for (size_t i = 0; i < nimbuses_.size(); ++i) {
    if (nimbuses_[i] != nullptr && nimbuses_[i]->Running()) return NimbusAddress(i);
  }
  return nimbuses_.empty() ? "" : NimbusAddress(0);
}

CommandRun ClusterFixture::Tempest(std::vector<std::string> args) {
  std::vector<std::string> argv = {TempestBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--nimbus");
  argv.push_back(AnyNimbus());
  CommandRun r = RunCommand(argv, dir_.File(absl::StrCat("cmd-", ++commands_)), milliseconds(60000));
  EXPECT_TRUE(r.finished) << args[0] << " did not finish";
  return r;
}

json ClusterFixture::RestGet(const std::string& path, int nimbus) {
  const std::string address = nimbus < 0 ? AnyNimbus() : NimbusAddress(nimbus);
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return json();
  const std::string host = address.substr(0, colon);
  const int port = std::stoi(address.substr(colon + 1));
  auto response = os::TcpRequest(
      host, port, absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", address, "\r\nConnection: close\r\n\r\n"),
      milliseconds(10000));
  if (!response.ok()) return json();
  const size_t body = response->find("\r\n\r\n");
  if (body == std::string::npos) return json();
  json j = json::parse(response->substr(body + 4), nullptr, false);
  return j.is_discarded() ? json() : j;
}

std::string ClusterFixture::Submit(const std::string& yaml, const std::string& file_name) {
  const std::string path = dir_.File(file_name);
  std::ofstream(path) << yaml;
  CommandRun r = Tempest({"submit", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string id = r.out;
  while (!id.empty() && (id.back() == '\n' || id.back() == '\r')) id.pop_back();
  return id;
}

std::vector<WorkerSlot> ClusterFixture::Workers() const {
  std::vector<WorkerSlot> out;
  for (size_t s = 0; s < supervisors_.size(); ++s) {
    // Launch records in the supervisor's own directory, heartbeats in each
    // worker's scratch directory (supervisor/worker_sandbox.h).
    const std::filesystem::path local(LocalDir(static_cast<int>(s)));
    std::error_code ec;
    for (const auto& entry :
         std::filesystem::directory_iterator(local / "supervisor" / "workers", ec)) {
      json info = json::parse(ReadAll((entry.path() / "worker.json").string()), nullptr, false);
      if (info.is_discarded() || !info.is_object() || !info.contains("pid")) continue;
      WorkerSlot w;
      w.supervisor = static_cast<int>(s);
      w.pid = info.value("pid", 0);
      w.port = info.value("port", 0);
      w.topology_id = info.value("topologyId", "");
      // Only live processes count.
      if (w.pid <= 0 || ::kill(w.pid, 0) != 0) continue;
      v1::WorkerHeartbeat beat;
      const std::filesystem::path scratch = local / "workers" / entry.path().filename();
      if (beat.ParseFromString(ReadAll((scratch / "heartbeat").string())) &&
          beat.pid() == w.pid) {
        w.beat = beat;
      }
      out.push_back(w);
    }
  }
  return out;
}

std::vector<WorkerSlot> ClusterFixture::WorkersOf(const std::string& topology_id) const {
  std::vector<WorkerSlot> out;
  for (const WorkerSlot& w : Workers()) {
    if (w.topology_id == topology_id) out.push_back(w);
  }
  return out;
}

std::optional<v1::Assignment> ClusterFixture::AssignmentOf(const std::string& topology_id) const {
  auto client = RawZkClient::Connect(zk_->ConnectString(), 10000, seconds(20));
  if (client == nullptr) return std::nullopt;
  auto [rc, data] = client->Get(absl::StrCat(kRoot, "/assignments/", topology_id));
  if (rc != 0) return std::nullopt;
  v1::Assignment a;
  if (!a.ParseFromString(data)) return std::nullopt;
  return a;
}

std::optional<bool> ClusterFixture::ClusterNodeExists(const std::string& relative) const {
  auto client = RawZkClient::Connect(zk_->ConnectString(), 10000, seconds(20));
  if (client == nullptr) return std::nullopt;
  const int rc = client->Exists(absl::StrCat(kRoot, "/", relative));
  if (rc == ZOK) return true;
  if (rc == ZNONODE) return false;
  return std::nullopt;
}

std::string ClusterFixture::ErringBoltResources() {
  const std::string resources = dir_.File("erring");
  std::filesystem::create_directories(resources);
  std::filesystem::copy_file(SourceDir() + "/examples/legacy/multilang/storm.py",
                             resources + "/storm.py",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(resources + "/erring_bolt.py") << R"(import storm

class ErringBolt(storm.BasicBolt):
    def initialize(self, conf, context):
        self.seen = 0

    def process(self, tup):
        self.seen += 1
        if self.seen % 25 == 0:
            storm.reportError("cannot parse record %d" % self.seen)

ErringBolt().run()
)";
  return resources;
}

std::string ClusterFixture::PacedExample(int64_t count, int64_t rate) {
  std::string yaml = ExampleWithPaths(SourceDir() + "/examples/cluster-generator-verifier.yaml",
                                      "${ENV-OUT}/cluster-gv", dir_.File("gv"));
  yaml = absl::StrReplaceAll(
      yaml, {{"value: 0          # unlimited", absl::StrCat("value: ", rate, "   # paced")},
             {"topology.message.timeout.secs: 30", "topology.message.timeout.secs: 5"}});
  return absl::StrReplaceAll(yaml, {{"value: 200000", absl::StrCat("value: ", count)}});
}

json ClusterFixture::Verify(const std::string& log, int64_t expected) {
  CommandRun r = RunCommand({TempestBinary(), "verify", log, "--expected", absl::StrCat(expected), "--json"},
                            dir_.File(absl::StrCat("verify-", ++commands_)), milliseconds(60000));
  json j = json::parse(r.out, nullptr, false);
  return j.is_discarded() ? json() : j;
}

json ClusterFixture::ExpectAllVerified(int64_t count, std::chrono::seconds timeout) {
  json v;
  EXPECT_TRUE(Eventually(timeout, [&] {
    v = Verify(VerifierLog(), count);
    return v.is_object() && v.value("missing", int64_t{-1}) == 0;
  }, milliseconds(1000))) << v.dump();
  return v;
}

}  // namespace tempest::testing
