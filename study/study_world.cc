#include "study/study_world.h"

#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/os/files.h"
#include "common/os/loopback.h"
#include "supervisor/worker_files.h"

namespace tempest::study {
namespace {

constexpr auto kDaemonStart = std::chrono::seconds(90);
// The dev cluster starts with one topic; each scenario creates its own.
constexpr const char* kTopic = "study";

std::string ReadOrEmpty(const std::string& path) {
  absl::StatusOr<std::string> text = os::ReadSmallFile(path, 1 << 20);
  return text.ok() ? *text : "";
}

// Worker pids come from files; a pid that is not a process-group leader
// any more was reused by something else and must not be signalled.
bool IsGroupLeader(pid_t pid) { return pid > 0 && ::getpgid(pid) == pid; }

std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

}  // namespace

std::string YamlQuoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

absl::StatusOr<std::unique_ptr<StudyWorld>> StudyWorld::Start(const Options& options) {
  auto world = std::unique_ptr<StudyWorld>(new StudyWorld(options));
  const std::filesystem::path dir = options.dir;
  for (const char* sub : {"logs", "commands"}) {
    std::error_code ec;
    std::filesystem::create_directories(dir / sub, ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("cannot create ", (dir / sub).string(), ": ", ec.message()));
    }
  }

  coord::ZkEnsemble::Options zo;
  zo.size = options.zookeepers;
  zo.dir = (dir / "zookeeper").string();
  absl::StatusOr<std::unique_ptr<coord::ZkEnsemble>> zk = coord::ZkEnsemble::Start(zo);
  if (!zk.ok()) return zk.status();
  world->zk_ = *std::move(zk);
  for (int i = 0; i < world->zk_->size(); ++i) {
    const std::string member = world->zk_->MemberConnectString(i);
    const size_t colon = member.rfind(':');
    int port = 0;
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(absl::string_view(member).substr(colon + 1), &port)) {
      return absl::InternalError(absl::StrCat("unexpected ZooKeeper address '", member, "'"));
    }
    absl::StatusOr<std::unique_ptr<net::TcpProxy>> proxy =
        net::TcpProxy::Start(member.substr(0, colon), port);
    if (!proxy.ok()) return proxy.status();
    world->zk_proxies_.push_back(*std::move(proxy));
  }

  absl::StatusOr<std::unique_ptr<kafka::DevKafkaCluster>> kafka =
      kafka::DevKafkaCluster::Create(1, {{kTopic, 1}});
  if (!kafka.ok()) return kafka.status();
  world->kafka_ = *std::move(kafka);

  // Short timeouts, so faults are detected and repaired within a scenario.
  world->config_path_ = (dir / "tempest.yaml").string();
  {
    std::ofstream yaml(world->config_path_);
    yaml << "storm.zookeeper.servers: [\"" << world->zk_->ConnectString() << "\"]\n"
         << "storm.zookeeper.root: " << YamlQuoted(options.zk_root) << "\n"
         << "storm.zookeeper.session.timeout: " << options.zk_session_timeout_ms << "\n"
         << "storm.zookeeper.connection.timeout: " << options.zk_session_timeout_ms << "\n"
         << "storm.local.hostname: 127.0.0.1\n"
         << "tempest.log.dir: " << YamlQuoted((dir / "logs").string()) << "\n"
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
    if (!yaml) return absl::InternalError(absl::StrCat("cannot write ", world->config_path_));
  }
  if (absl::Status s = world->StartNimbus(); !s.ok()) return s;
  for (int i = 0; i < options.supervisors; ++i) {
    std::vector<int> ports;
    for (int p = 0; p < options.slots_per_supervisor; ++p) {
      absl::StatusOr<int> port = os::FindFreeLoopbackPort();
      if (!port.ok()) return port.status();
      ports.push_back(*port);
    }
    world->slot_ports_.push_back(ports);
    world->supervisors_.emplace_back();
    if (absl::Status s = world->StartSupervisor(i); !s.ok()) return s;
  }
  return world;
}

StudyWorld::~StudyWorld() {
  for (auto& s : supervisors_) {
    if (s != nullptr) s->Stop(std::chrono::seconds(10));
  }
  // Workers of a supervisor killed on purpose are nobody's children now.
  for (const Worker& w : Workers()) ::kill(-w.pid, SIGKILL);
  if (nimbus_ != nullptr) nimbus_->Stop(std::chrono::seconds(10));
}

std::vector<std::string> StudyWorld::spout_zk_servers() const {
  std::vector<std::string> out;
  for (const auto& p : zk_proxies_) out.push_back(p->address());
  return out;
}

std::string StudyWorld::LocalDir(int supervisor) const {
  return (std::filesystem::path(options_.dir) / absl::StrCat("supervisor-", supervisor + 1))
      .string();
}

std::string StudyWorld::LogPath(const std::string& name) const {
  return (std::filesystem::path(options_.dir) / "logs" / (name + ".out")).string();
}

absl::Status StudyWorld::StartNimbus() {
  const std::string log = LogPath("nimbus");
  os::ChildProcess::Options o;
  o.argv = {options_.binary, "nimbus", "--config", config_path_};
  o.stdout_path = log;
  o.stderr_path = "=stdout";
  // A restarted nimbus prints its address again; only the new line counts.
  std::error_code ec;
  std::filesystem::remove(log, ec);
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> child = os::ChildProcess::Start(o);
  if (!child.ok()) return child.status();
  nimbus_ = *std::move(child);
  absl::StatusOr<std::string> address = os::AwaitLogLine(log, "nimbus=", *nimbus_, kDaemonStart);
  if (!address.ok()) {
    return absl::Status(address.status().code(),
                        absl::StrCat("nimbus: ", address.status().message()));
  }
  nimbus_address_ = *address;
  return absl::OkStatus();
}

void StudyWorld::KillNimbus() {
  if (nimbus_ != nullptr) nimbus_->Kill();
}

absl::Status StudyWorld::StartSupervisor(int i) {
  const std::string name = absl::StrCat("supervisor-", i + 1);
  const std::string log = LogPath(name);
  std::error_code ec;
  std::filesystem::remove(log, ec);
  std::vector<std::string> ports;
  for (int p : slot_ports_.at(i)) ports.push_back(absl::StrCat(p));
  os::ChildProcess::Options o;
  o.argv = {options_.binary, "supervisor", "--config", config_path_,
            "-c", absl::StrCat("storm.local.dir=", LocalDir(i)),
            "-c", absl::StrCat("supervisor.slots.ports=[", absl::StrJoin(ports, ","), "]")};
  o.stdout_path = log;
  o.stderr_path = "=stdout";
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> child = os::ChildProcess::Start(o);
  if (!child.ok()) return child.status();
  supervisors_.at(i) = *std::move(child);
  absl::StatusOr<std::string> line =
      os::AwaitLogLine(log, "supervisor=", *supervisors_[i], kDaemonStart);
  if (!line.ok()) {
    return absl::Status(line.status().code(), absl::StrCat(name, ": ", line.status().message()));
  }
  return absl::OkStatus();
}

void StudyWorld::KillSupervisor(int i) {
  std::vector<Worker> workers = Workers();
  if (supervisors_.at(i) != nullptr) supervisors_[i]->Kill();
  for (const Worker& w : workers) {
    if (w.supervisor == i) ::kill(-w.pid, SIGKILL);
  }
}

void StudyWorld::CutSpoutZooKeeper(bool cut) {
  for (auto& p : zk_proxies_) p->SetPartitioned(cut);
}

std::vector<StudyWorld::Worker> StudyWorld::Workers() const {
  std::vector<Worker> out;
  for (int s = 0; s < static_cast<int>(slot_ports_.size()); ++s) {
    for (int port : slot_ports_[s]) {
      const std::string wdir = supervisor::WorkerDir(LocalDir(s), port);
      absl::StatusOr<supervisor::WorkerLaunchRecord> launch =
          supervisor::ParseWorkerJson(ReadOrEmpty(supervisor::WorkerJsonPath(wdir)));
      if (!launch.ok() || !IsGroupLeader(launch->pid)) continue;
      Worker w;
      w.supervisor = s;
      w.port = port;
      w.pid = launch->pid;
      w.topology_id = launch->topology_id;
      absl::StatusOr<v1::WorkerHeartbeat> beat =
          supervisor::ParseWorkerHeartbeat(ReadOrEmpty(supervisor::HeartbeatPath(wdir)));
      if (beat.ok() && beat->pid() == w.pid) w.kafka_partitions = beat->kafka_partitions_size();
      out.push_back(w);
    }
  }
  return out;
}

void StudyWorld::CollectWorkerLogs(const std::vector<std::string>& name_prefixes,
                                   const std::string& dest_dir) const {
  std::error_code ec;
  for (int s = 0; s < static_cast<int>(slot_ports_.size()); ++s) {
    for (int port : slot_ports_[s]) {
      const std::string wdir = supervisor::WorkerDir(LocalDir(s), port);
      absl::StatusOr<supervisor::WorkerLaunchRecord> launch =
          supervisor::ParseWorkerJson(ReadOrEmpty(supervisor::WorkerJsonPath(wdir)));
      if (!launch.ok()) continue;
      const bool ours = std::any_of(name_prefixes.begin(), name_prefixes.end(),
                                    [&](const std::string& p) {
                                      return launch->topology_id.rfind(p + "-", 0) == 0;
                                    });
      if (!ours) continue;
      std::filesystem::create_directories(dest_dir, ec);
      std::filesystem::copy_file(
          supervisor::WorkerLogPath(wdir),
          std::filesystem::path(dest_dir) / absl::StrCat("supervisor-", s + 1, "-", port, ".log"),
          std::filesystem::copy_options::overwrite_existing, ec);
    }
  }
}

absl::StatusOr<StudyWorld::Command> StudyWorld::StartTempest(std::vector<std::string> args) {
  Command c;
  c.name = args.empty() ? "tempest" : args.front();
  const std::string base =
      (std::filesystem::path(options_.dir) / "commands" / absl::StrCat(++commands_, "-", c.name))
          .string();
  c.out = base + ".out";
  c.err = base + ".err";
  os::ChildProcess::Options o;
  o.argv = {options_.binary};
  o.argv.insert(o.argv.end(), args.begin(), args.end());
  o.argv.insert(o.argv.end(), {"--config", config_path_, "--nimbus", nimbus_address_});
  o.stdout_path = c.out;
  o.stderr_path = c.err;
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> child = os::ChildProcess::Start(o);
  if (!child.ok()) return child.status();
  c.process = *std::move(child);
  return c;
}

absl::StatusOr<std::string> StudyWorld::Finish(Command& c, std::chrono::seconds timeout) {
  std::optional<int> status = c.process->WaitFor(timeout);
  if (!status.has_value()) {
    c.process->Kill();
    return absl::DeadlineExceededError(
        absl::StrCat("tempest ", c.name, " did not finish within ", timeout.count(), " s"));
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::InternalError(absl::StrCat("tempest ", c.name, " ",
                                            os::DescribeWaitStatus(*status), ": ",
                                            LastLine(ReadOrEmpty(c.err))));
  }
  return ReadOrEmpty(c.out);
}

}  // namespace tempest::study
