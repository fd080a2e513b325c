#include "study/study_world.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/core/status_macros.h"
#include "common/os/files.h"
#include "common/os/loopback.h"
#include "common/os/unique_fd.h"
#include "nlohmann/json.hpp"
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

// "user:" followed by 24 random hex digits.
std::string RandomCredentials(const std::string& user) {
  std::random_device random;
  std::string out = user + ":";
  for (int i = 0; i < 3; ++i) absl::StrAppend(&out, absl::Hex(random(), absl::kZeroPad8));
  return out;
}

// The offset-commit metrics of one worker's registry (see Worker).
std::map<std::string, int64_t> CommitMetrics(const v1::WorkerHeartbeat& beat) {
  std::map<std::string, int64_t> out;
  for (const v1::MetricPoint& m : beat.local_metrics()) {
    const std::string& name = m.name();
    if (name.rfind("tempest_kafka_spout_", 0) != 0 && name.rfind("tempest_zk_", 0) != 0) continue;
    if (m.kind() == v1::MetricPoint::HISTOGRAM) {
      int64_t& max = out[name + "_max"];
      max = std::max(max, m.max());
      int64_t& p99 = out[name + "_p99"];
      p99 = std::max(p99, m.p99());
    } else {
      out[name] += m.value();
    }
  }
  return out;
}

std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

}  // namespace

StudyWorld::StudyWorld(Options options)
    : options_(std::move(options)),
      spout_credentials_(RandomCredentials("study-spout")),
      operator_credentials_(RandomCredentials("study-operator")) {
  if (options_.hosts) return;  // StartOnHosts builds that world
  const std::filesystem::path dir = options_.dir;
  devcluster::DevCluster::Options co;
  co.binary = options_.binary;
  co.log_dir = (dir / "logs").string();
  co.log_suffix = ".out";
  co.start_timeout = kDaemonStart;
  co.zookeepers = options_.zookeepers;
  co.zk_dir = (dir / "zookeeper").string();
  // Short timeouts, so faults are detected and repaired within a scenario.
  devcluster::ClusterConfig config;
  config.zk_root = options_.zk_root;
  config.zk_session_timeout_ms = options_.zk_session_timeout_ms;
  config.zk_connection_timeout_ms = options_.zk_session_timeout_ms;
  config.log_dir = co.log_dir;
  co.config = config;
  co.config_path = (dir / "tempest.yaml").string();
  cluster_ = std::make_unique<devcluster::DevCluster>(std::move(co));
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
  if (options.hosts) {
    RETURN_IF_ERROR(world->StartOnHosts());
    return world;
  }
  devcluster::DevCluster& cluster = *world->cluster_;
  RETURN_IF_ERROR(cluster.StartZooKeeper());
  RETURN_IF_ERROR(world->StartSpoutZkProxies());
  RETURN_IF_ERROR(cluster.StartKafka({{kTopic, 1}}));
  RETURN_IF_ERROR(world->StartNimbus());
  for (int i = 0; i < options.supervisors; ++i) {
    RETURN_IF_ERROR(cluster.AddSupervisor(absl::StrCat("supervisor-", i + 1), world->LocalDir(i),
                                          options.slots_per_supervisor));
  }
  return world;
}

absl::Status StudyWorld::StartOnHosts() {
  const std::filesystem::path dir = options_.dir;
  devcluster::NetnsCluster::Options o;
  o.dir = dir.string();
  o.binary = options_.binary;
  o.zookeepers = 3;
  o.nimbuses = 2;
  o.supervisors = options_.supervisors;
  o.slots_per_supervisor = options_.slots_per_supervisor;
  o.zk_session_timeout_ms = options_.zk_session_timeout_ms;
  o.start_timeout = kDaemonStart;
  ASSIGN_OR_RETURN(hosts_cluster_, devcluster::NetnsCluster::Start(std::move(o)));
  // This thread is on "client" now: the brokers listen there, and every
  // other host reaches 127.0.0.1:PORT through the bridge.
  ASSIGN_OR_RETURN(hosts_kafka_, kafka::DevKafkaCluster::Create(1, {{kTopic, 1}}));
  devcluster::NetnsHosts& hosts = hosts_cluster_->hosts();
  for (const auto& [host, port] : hosts_kafka_->BrokerAddresses()) {
    RETURN_IF_ERROR(hosts.ShareLoopbackPort(hosts.Find("client"), port));
  }
  ASSIGN_OR_RETURN(client_config_, hosts_cluster_->WriteConfig("client"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> StudyWorld::LeaderNimbusHost() const {
  for (const std::string& address : hosts_cluster_->NimbusAddresses()) {
    const size_t colon = address.rfind(':');
    int port = 0;
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(absl::string_view(address).substr(colon + 1), &port)) {
      continue;
    }
    absl::StatusOr<std::string> response = os::TcpRequest(
        address.substr(0, colon), port,
        absl::StrCat("GET /api/v1/nimbus/summary HTTP/1.1\r\nHost: ", address,
                     "\r\nConnection: close\r\n\r\n"),
        std::chrono::milliseconds(3000));
    if (!response.ok()) continue;
    const size_t body = response->find("\r\n\r\n");
    if (body == std::string::npos) continue;
    nlohmann::json summary = nlohmann::json::parse(response->substr(body + 4), nullptr, false);
    if (!summary.is_object() || !summary.contains("nimbuses") ||
        !summary["nimbuses"].is_array()) {
      continue;
    }
    for (const nlohmann::json& n : summary["nimbuses"]) {
      if (!n.is_object() || n.value("status", "") != "Leader") continue;
      const std::string leader = n.value("host", "");
      for (int i = 0; i < static_cast<int>(hosts_cluster_->NimbusAddresses().size()); ++i) {
        const std::string name = devcluster::NetnsCluster::NimbusHost(i);
        if (hosts_cluster_->Address(name) == leader) return name;
      }
    }
  }
  return absl::NotFoundError("no nimbus answers as the leader");
}

absl::Status StudyWorld::StartSpoutZkProxies() {
  const coord::ZkEnsemble& zk = *cluster_->ensemble();
  for (int i = 0; i < zk.size(); ++i) {
    const std::string member = zk.MemberConnectString(i);
    const size_t colon = member.rfind(':');
    int port = 0;
    if (colon == std::string::npos ||
        !absl::SimpleAtoi(absl::string_view(member).substr(colon + 1), &port)) {
      return absl::InternalError(absl::StrCat("unexpected ZooKeeper address '", member, "'"));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<net::TcpProxy> proxy,
                     net::TcpProxy::Start(member.substr(0, colon), port));
    zk_proxies_.push_back(std::move(proxy));
  }
  return absl::OkStatus();
}

StudyWorld::~StudyWorld() {
  if (hosts_cluster_ != nullptr) {
    // The workers die with their hosts; the brokers outlive their clients.
    hosts_cluster_.reset();
    hosts_kafka_.reset();
    return;
  }
  if (cluster_ == nullptr) return;  // StartOnHosts failed before the cluster existed
  cluster_->StopSupervisors(std::chrono::seconds(10));
  // Workers of a supervisor killed on purpose are nobody's children now.
  for (const Worker& w : Workers()) ::kill(-w.pid, SIGKILL);
  cluster_->StopNimbuses(std::chrono::seconds(10));
}

std::vector<std::string> StudyWorld::spout_zk_servers() const {
  if (hosts_cluster_ != nullptr) return absl::StrSplit(hosts_cluster_->ZkConnect(), ',');
  std::vector<std::string> out;
  for (const auto& p : zk_proxies_) out.push_back(p->address());
  return out;
}

coord::ZkClientConfig StudyWorld::reader_zk_config() const {
  coord::ZkClientConfig c;
  c.auth.scheme = "digest";
  c.auth.payload = spout_credentials_;
  return c;
}

absl::StatusOr<std::string> StudyWorld::DeadZkServer() const {
  // Bind an ephemeral port and let it go: nothing listens there afterwards
  // (the kernel hands out ephemeral ports in turn, so it is not reused soon).
  const os::UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  if (!fd.valid()) return absl::InternalError("cannot create a socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (port == 0) return absl::InternalError("cannot find a free port");
  return absl::StrCat("127.0.0.1:", port);
}

std::string StudyWorld::LocalDir(int supervisor) const {
  if (hosts_cluster_ != nullptr) return hosts_cluster_->SupervisorLocalDir(supervisor);
  return (std::filesystem::path(options_.dir) / absl::StrCat("supervisor-", supervisor + 1))
      .string();
}

std::vector<int> StudyWorld::SlotPorts(int supervisor) const {
  if (hosts_cluster_ == nullptr) return cluster_->slot_ports(supervisor);
  std::vector<int> ports;
  for (int i = 0; i < options_.slots_per_supervisor; ++i) {
    ports.push_back(devcluster::NetnsCluster::kFirstSlotPort + i);
  }
  return ports;
}

absl::Status StudyWorld::StartNimbus() {
  // A restarted nimbus prints its address again; its log starts afresh, so
  // only the new line counts.
  if (cluster_ == nullptr) return absl::FailedPreconditionError("no single-host nimbus to start");
  if (cluster_->nimbus_count() == 0) return cluster_->AddNimbus("nimbus").status();
  return cluster_->RestartNimbus(0).status();
}

void StudyWorld::KillNimbus() {
  if (cluster_ != nullptr && cluster_->nimbus_count() > 0 && cluster_->nimbus(0).process != nullptr) {
    cluster_->nimbus(0).process->Kill();
  }
}

absl::Status StudyWorld::StartSupervisor(int i) {
  if (cluster_ == nullptr) return absl::FailedPreconditionError("no single-host supervisor");
  return cluster_->RestartSupervisor(i);
}

void StudyWorld::KillSupervisor(int i) {
  if (cluster_ == nullptr) return;
  std::vector<Worker> workers = Workers();
  devcluster::Daemon& supervisor = cluster_->supervisor(i);
  if (supervisor.process != nullptr) supervisor.process->Kill();
  for (const Worker& w : workers) {
    if (w.supervisor == i) ::kill(-w.pid, SIGKILL);
  }
}

void StudyWorld::CutSpoutZooKeeper(bool cut) {
  for (auto& p : zk_proxies_) p->SetPartitioned(cut);
}

std::vector<StudyWorld::Worker> StudyWorld::Workers() const {
  std::vector<Worker> out;
  for (int s = 0; s < supervisor_count(); ++s) {
    for (int port : SlotPorts(s)) {
      const std::string wdir = supervisor::WorkerDir(LocalDir(s), port);
      const std::string records = supervisor::SlotRecordsDir(LocalDir(s), port);
      absl::StatusOr<supervisor::WorkerLaunchRecord> launch =
          supervisor::ParseWorkerJson(ReadOrEmpty(supervisor::WorkerJsonPath(records)));
      if (!launch.ok() || !IsGroupLeader(launch->pid)) continue;
      Worker w;
      w.supervisor = s;
      w.port = port;
      w.pid = launch->pid;
      w.topology_id = launch->topology_id;
      absl::StatusOr<v1::WorkerHeartbeat> beat =
          supervisor::ParseWorkerHeartbeat(ReadOrEmpty(supervisor::HeartbeatPath(wdir)));
      if (beat.ok() && beat->pid() == w.pid) {
        w.kafka_partitions = beat->kafka_partitions_size();
        w.assignment_version = beat->assignment_version();
        if (w.kafka_partitions > 0) w.commit_metrics = CommitMetrics(*beat);
      }
      out.push_back(w);
    }
  }
  return out;
}

void StudyWorld::ForEachWorkerLogLine(std::string_view needle,
                                      const std::function<void(std::string_view)>& fn) const {
  // Slot logs, not launch records: a worker that keeps failing at start is
  // mostly waiting for its next restart, without a launch record.
  for (int s = 0; s < supervisor_count(); ++s) {
    for (int port : SlotPorts(s)) {
      absl::StatusOr<std::string> log = os::ReadSmallFile(
          supervisor::WorkerLogPath(supervisor::SlotRecordsDir(LocalDir(s), port)), 64 << 20);
      if (!log.ok()) continue;
      for (absl::string_view line : absl::StrSplit(*log, '\n')) {
        if (absl::StrContains(line, absl::string_view(needle.data(), needle.size()))) {
          fn(std::string_view(line.data(), line.size()));
        }
      }
    }
  }
}

std::string StudyWorld::WorkerComplaint() const {
  std::string last;
  for (std::string_view level : {"[error]", "[critical]"}) {
    ForEachWorkerLogLine(level, [&](std::string_view line) { last = std::string(line); });
  }
  return last.empty() ? "" : absl::StrCat("; a worker logged: ", last);
}

int StudyWorld::TopologiesLogging(const std::vector<std::string>& names,
                                  std::string_view needle) const {
  std::set<std::string> found;
  ForEachWorkerLogLine(needle, [&](std::string_view line) {
    for (const std::string& name : names) {
      if (line.find(absl::StrCat(name, ":")) != std::string_view::npos) found.insert(name);
    }
  });
  return static_cast<int>(found.size());
}

int64_t StudyWorld::CountWorkerLogLines(const std::string& tag, std::string_view needle) const {
  int64_t n = 0;
  ForEachWorkerLogLine(needle, [&](std::string_view line) {
    if (line.find(tag) != std::string_view::npos) ++n;
  });
  return n;
}

void StudyWorld::CollectWorkerLogs(const std::vector<std::string>& name_prefixes,
                                   const std::string& dest_dir) const {
  std::error_code ec;
  for (int s = 0; s < supervisor_count(); ++s) {
    for (int port : SlotPorts(s)) {
      const std::string records = supervisor::SlotRecordsDir(LocalDir(s), port);
      absl::StatusOr<supervisor::WorkerLaunchRecord> launch =
          supervisor::ParseWorkerJson(ReadOrEmpty(supervisor::WorkerJsonPath(records)));
      if (!launch.ok()) continue;
      const bool ours = std::any_of(name_prefixes.begin(), name_prefixes.end(),
                                    [&](const std::string& p) {
                                      return launch->topology_id.rfind(p + "-", 0) == 0;
                                    });
      if (!ours) continue;
      std::filesystem::create_directories(dest_dir, ec);
      std::filesystem::copy_file(
          supervisor::WorkerLogPath(records),
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
  if (hosts_cluster_ != nullptr) {
    // nimbus.seeds: the command finds whichever nimbus leads now.
    o.argv.insert(o.argv.end(), {"--config", client_config_});
  } else {
    o.argv.insert(o.argv.end(), {"--config", cluster_->options().config_path, "--nimbus",
                                 cluster_->nimbus_address(0)});
  }
  o.stdout_path = c.out;
  o.stderr_path = c.err;
  ASSIGN_OR_RETURN(c.process, os::ChildProcess::Start(o));
  return c;
}

absl::StatusOr<std::string> StudyWorld::Finish(Command& c, std::chrono::seconds timeout) {
  // In short slices: a stop request (Ctrl-C) must not wait out a slow submit.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::optional<int> status;
  while (!(status = c.process->WaitFor(std::chrono::milliseconds(250))).has_value()) {
    if (options_.stop_requested()) {
      c.process->Kill();
      return absl::CancelledError("stopped");
    }
    if (std::chrono::steady_clock::now() < deadline) continue;
    c.process->Kill();
    std::string said = LastLine(ReadOrEmpty(c.err));
    if (said.empty()) said = LastLine(ReadOrEmpty(c.out));
    return absl::DeadlineExceededError(absl::StrCat(
        "tempest ", c.name, " did not finish within ", timeout.count(), " s",
        said.empty() ? "" : absl::StrCat("; its last words: ", said), WorkerComplaint()));
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
    return absl::InternalError(absl::StrCat("tempest ", c.name, " ",
                                            os::DescribeWaitStatus(*status), ": ",
                                            LastLine(ReadOrEmpty(c.err))));
  }
  return ReadOrEmpty(c.out);
}

}  // namespace tempest::study
