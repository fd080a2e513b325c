#include "tests/system/cluster/cluster_fixture.h"

#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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
  ZkEnsemble::Options zo;
  zo.size = spec.zookeepers;
  zo.tick_ms = spec.zk_tick_ms;
  auto zk = ZkEnsemble::Start(zo);
  ASSERT_TRUE(zk.ok()) << zk.status();
  zk_ = *std::move(zk);
  {
    std::ofstream yaml(ConfigPath());
    yaml << "storm.zookeeper.servers: [\"" << zk_->ConnectString() << "\"]\n"
         << "storm.zookeeper.root: " << kRoot << "\n"
         << "storm.zookeeper.session.timeout: " << spec.zk_session_timeout_ms << "\n"
         << "storm.zookeeper.connection.timeout: 4000\n"
         << "storm.local.hostname: 127.0.0.1\n"
         << "ui.host: 127.0.0.1\n"
         << "ui.port: 0\n"
         << "nimbus.monitor.freq.secs: 1\n"
         << "nimbus.supervisor.timeout.secs: 10\n"
         << "nimbus.task.timeout.secs: 10\n"
         << "nimbus.task.launch.secs: 30\n"
         << "supervisor.heartbeat.frequency.secs: 1\n"
         << "supervisor.monitor.frequency.secs: 1\n"
         << "supervisor.worker.timeout.secs: 10\n"
         << "supervisor.worker.start.timeout.secs: 60\n";
    for (const std::string& line : spec.extra_config) yaml << line << "\n";
  }
  for (int i = 0; i < spec.nimbuses; ++i) {
    StartNimbus(i);
    if (HasFatalFailure()) return;
  }
  for (int i = 0; i < spec.supervisors; ++i) {
    std::vector<int> ports;
    for (int s = 0; s < spec.slots_per_supervisor; ++s) {
      auto port = os::FindFreeLoopbackPort();
      ASSERT_TRUE(port.ok()) << port.status();
      ports.push_back(*port);
    }
    slot_ports_.push_back(ports);
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
  if (static_cast<int>(nimbuses_.size()) <= index) {
    nimbuses_.resize(index + 1);
    nimbus_address_.resize(index + 1);
  }
  const std::string out = dir_.File(absl::StrCat("nimbus-", index, ".log"));
  std::filesystem::remove(out);
  os::ChildProcess::Options o;
  o.argv = {TempestBinary(), "nimbus", "--config", ConfigPath()};
  o.stdout_path = out;
  o.stderr_path = "=stdout";
  auto child = os::ChildProcess::Start(o);
  ASSERT_TRUE(child.ok()) << child.status();
  nimbuses_[index] = *std::move(child);
  auto address = WaitForLineWithPrefix(out, "nimbus=", seconds(60));
  ASSERT_TRUE(address.has_value()) << ReadFileOrEmpty(out);
  nimbus_address_[index] = *address;
}

void ClusterFixture::StartSupervisor(int index) {
  if (static_cast<int>(supervisors_.size()) <= index) supervisors_.resize(index + 1);
  const std::string out = dir_.File(absl::StrCat("supervisor-", index, ".log"));
  std::vector<std::string> ports;
  for (int p : slot_ports_.at(index)) ports.push_back(absl::StrCat(p));
  os::ChildProcess::Options o;
  o.argv = {TempestBinary(), "supervisor", "--config", ConfigPath(),
            "-c", absl::StrCat("storm.local.dir=", LocalDir(index)),
            "-c", absl::StrCat("supervisor.slots.ports=[", absl::StrJoin(ports, ","), "]")};
  o.stdout_path = out;
  o.stderr_path = "=stdout";
  auto child = os::ChildProcess::Start(o);
  ASSERT_TRUE(child.ok()) << child.status();
  supervisors_[index] = *std::move(child);
  ASSERT_TRUE(WaitForLineWithPrefix(out, "supervisor=", seconds(60)).has_value())
      << ReadFileOrEmpty(out);
}

void ClusterFixture::TearDown() {
  // Supervisors first: they stop their workers (which close their sinks).
  for (auto& s : supervisors_) {
    if (s != nullptr) s->Stop(seconds(20));
  }
  for (auto& n : nimbuses_) {
    if (n != nullptr) n->Stop(seconds(20));
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
    if (nimbuses_[i] != nullptr && nimbuses_[i]->Running()) return nimbus_address_[i];
  }
  return nimbus_address_.empty() ? "" : nimbus_address_.front();
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
  const std::string address = nimbus < 0 ? AnyNimbus() : nimbus_address_.at(nimbus);
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
    const std::filesystem::path workers = std::filesystem::path(LocalDir(static_cast<int>(s))) / "workers";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(workers, ec)) {
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
      if (beat.ParseFromString(ReadAll((entry.path() / "heartbeat").string())) &&
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

}  // namespace tempest::testing
