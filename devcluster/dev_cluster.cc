#include "devcluster/dev_cluster.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/status_macros.h"
#include "common/os/loopback.h"

namespace tempest::devcluster {
namespace {

// The slot uid base (tempest.supervisor.worker.slot.uid.base) of this
// process's clusters. A slot's uid is base + port, and a supervisor kills
// every process of a slot's uid before each launch: two clusters on one
// kernel that drew the same free port with the same base would kill each
// other's workers. Bases a 65536 apart never share a uid, so each process
// draws one of 3700 (from 1900000000, the default, up to 2^31 - 2^16).
int64_t ProcessSlotUidBase() {
  static const int64_t base = [] {
    std::random_device random;
    return int64_t{1900000000} + int64_t{65536} * static_cast<int64_t>(random() % 3700);
  }();
  return base;
}

constexpr auto kZooKeeperStart = std::chrono::seconds(60);

// The last `n` non-empty lines of the text file at `path` (its last 16 KiB
// at most); none if it cannot be read.
std::vector<std::string> LastLines(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 16 * 1024);
  in.seekg(from);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  if (from > 0 && !lines.empty()) lines.erase(lines.begin());  // maybe cut
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<long>(n));
  return lines;
}

// The supervisor's keys ClusterConfig sets, in tempest.yaml's order.
void AppendSupervisorKeys(const ClusterConfig& config, std::ostringstream& yaml) {
  if (!config.slot_ports.empty()) {
    yaml << "supervisor.slots.ports: [" << absl::StrJoin(config.slot_ports, ", ") << "]\n";
  }
  if (config.supervisor_metrics_port != 0) {
    yaml << "tempest.supervisor.metrics.port: " << config.supervisor_metrics_port << "\n";
  }
  if (!config.local_dir.empty()) {
    yaml << "storm.local.dir: " << YamlQuoted(config.local_dir) << "\n";
  }
  if (config.slot_uid_base.has_value()) {
    yaml << "tempest.supervisor.worker.slot.uid.base: " << *config.slot_uid_base << "\n";
  }
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

std::string ClusterConfigYaml(const std::vector<std::string>& zk_servers,
                              const ClusterConfig& config) {
  std::vector<std::string> servers;
  for (const std::string& server : zk_servers) servers.push_back(YamlQuoted(server));
  std::vector<std::string> seeds;
  for (const std::string& seed : config.nimbus_seeds) seeds.push_back(YamlQuoted(seed));
  std::ostringstream yaml;
  yaml << "storm.zookeeper.servers: [" << absl::StrJoin(servers, ", ") << "]\n";
  if (config.zk_port != 0) yaml << "storm.zookeeper.port: " << config.zk_port << "\n";
  yaml << "storm.zookeeper.root: " << YamlQuoted(config.zk_root) << "\n"
       << "storm.zookeeper.session.timeout: " << config.zk_session_timeout_ms << "\n"
       << "storm.zookeeper.connection.timeout: " << config.zk_connection_timeout_ms << "\n"
       << "storm.local.hostname: " << config.hostname << "\n";
  if (!seeds.empty()) yaml << "nimbus.seeds: [" << absl::StrJoin(seeds, ", ") << "]\n";
  if (!config.log_dir.empty()) yaml << "tempest.log.dir: " << YamlQuoted(config.log_dir) << "\n";
  if (!config.ui_host.empty()) yaml << "ui.host: " << config.ui_host << "\n";
  yaml << "ui.port: " << config.ui_port << "\n"
       << "nimbus.monitor.freq.secs: 1\n"
       << "nimbus.supervisor.timeout.secs: 10\n"
       << "nimbus.task.timeout.secs: 10\n"
       << "nimbus.task.launch.secs: 30\n"
       << "supervisor.heartbeat.frequency.secs: 1\n"
       << "supervisor.monitor.frequency.secs: 1\n"
       << "supervisor.worker.timeout.secs: 10\n"
       << "supervisor.worker.start.timeout.secs: 60\n";
  AppendSupervisorKeys(config, yaml);
  for (const std::string& line : config.extra_lines) yaml << line << "\n";
  return yaml.str();
}

absl::Status DevCluster::StartZooKeeper() {
  if (options_.zookeepers == 0) {
    RETURN_IF_ERROR(StartStandaloneZooKeeper());
  } else {
    coord::ZkEnsemble::Options zo;
    zo.size = options_.zookeepers;
    zo.tick_ms = options_.zk_tick_ms;
    zo.dir = options_.zk_dir;
    ASSIGN_OR_RETURN(ensemble_, coord::ZkEnsemble::Start(zo));
  }
  return WriteConfig();
}

absl::Status DevCluster::StartStandaloneZooKeeper() {
  coord::ZkServerConfig config;
  config.data_dir = options_.zk_dir;
  ASSIGN_OR_RETURN(config.client_port, os::FindFreeLoopbackPort());
  ASSIGN_OR_RETURN(server_, coord::ZkServer::Start(config));
  return server_->WaitServing(kZooKeeperStart);
}

std::string DevCluster::zk_connect() const {
  if (ensemble_ != nullptr) return ensemble_->ConnectString();
  return server_ != nullptr ? server_->connect_string() : "";
}

absl::Status DevCluster::WriteConfig() const {
  if (!options_.config.has_value()) return absl::OkStatus();
  std::ofstream yaml(options_.config_path);
  yaml << ClusterConfigYaml({zk_connect()}, *options_.config);
  if (!yaml) return absl::InternalError(absl::StrCat("cannot write ", options_.config_path));
  return absl::OkStatus();
}

absl::Status DevCluster::StartKafka(const std::vector<kafka::DevKafkaTopic>& topics) {
  ASSIGN_OR_RETURN(kafka_, kafka::DevKafkaCluster::Create(1, topics));
  bootstrap_servers_ = kafka_->bootstrap_servers();
  return absl::OkStatus();
}

absl::StatusOr<std::string> DevCluster::StartKafkaProcess() {
  ASSIGN_OR_RETURN(kafka_process_,
                   MakeDaemon("kafka", {"dev-kafka", "--zk", zk_connect()}, "bootstrap.servers="));
  absl::StatusOr<std::string> bootstrap = Launch(*kafka_process_);
  if (bootstrap.ok()) bootstrap_servers_ = *bootstrap;
  return bootstrap;
}

absl::StatusOr<std::string> DevCluster::AddNimbus(const std::string& name,
                                                  std::vector<std::string> args) {
  args.insert(args.begin(), "nimbus");
  ASSIGN_OR_RETURN(Daemon daemon, MakeDaemon(name, std::move(args), "nimbus="));
  nimbuses_.push_back(std::move(daemon));
  nimbus_addresses_.emplace_back();
  return RestartNimbus(nimbus_count() - 1);
}

absl::StatusOr<std::string> DevCluster::RestartNimbus(int i) {
  absl::StatusOr<std::string> address = Launch(nimbuses_.at(i));
  if (address.ok()) nimbus_addresses_.at(i) = *address;
  return address;
}

absl::StatusOr<std::string> DevCluster::AddSupervisor(const std::string& name,
                                                      const std::string& local_dir, int slots) {
  std::vector<int> ports;
  std::vector<std::string> port_texts;
  // A free port stays free until someone binds it, so two calls can give
  // the same one: ask again until every slot has its own.
  for (int attempt = 0; static_cast<int>(ports.size()) < slots; ++attempt) {
    ASSIGN_OR_RETURN(const int port, os::FindFreeLoopbackPort());
    if (std::find(ports.begin(), ports.end(), port) != ports.end()) {
      if (attempt > 100 * slots) return absl::ResourceExhaustedError("no distinct free ports");
      continue;
    }
    ports.push_back(port);
    port_texts.push_back(absl::StrCat(port));
  }
  std::vector<std::string> args = {
      "supervisor",
      "-c", absl::StrCat("storm.local.dir=", local_dir),
      "-c", absl::StrCat("supervisor.slots.ports=[", absl::StrJoin(port_texts, ","), "]"),
      "-c", absl::StrCat("tempest.supervisor.worker.slot.uid.base=", ProcessSlotUidBase())};
  // Without a config file the hostname comes from the command line too.
  if (!options_.config.has_value()) {
    args.insert(args.end(), {"-c", "storm.local.hostname=127.0.0.1"});
  }
  int metrics_port = 0;
  if (options_.supervisor_metrics) {
    absl::StatusOr<int> port = os::FindFreeLoopbackPort();
    for (int attempt = 0; port.ok() && std::find(ports.begin(), ports.end(), *port) != ports.end();
         ++attempt) {
      if (attempt > 100) return absl::ResourceExhaustedError("no distinct free ports");
      port = os::FindFreeLoopbackPort();
    }
    RETURN_IF_ERROR(port.status());
    metrics_port = *port;
    args.insert(args.end(), {"-c", absl::StrCat("tempest.supervisor.metrics.port=", *port)});
  }
  ASSIGN_OR_RETURN(Daemon daemon, MakeDaemon(name, std::move(args), "supervisor="));
  daemon.slot_ports = std::move(ports);
  daemon.metrics_port = metrics_port;
  supervisors_.push_back(std::move(daemon));
  return Launch(supervisors_.back());
}

absl::Status DevCluster::RestartSupervisor(int i) { return Launch(supervisors_.at(i)).status(); }

absl::StatusOr<std::vector<std::string>> DevCluster::DaemonArgv(
    std::vector<std::string> verb_and_args) {
  if (options_.binary.empty()) {
    std::error_code ec;
    options_.binary = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) return absl::InternalError(absl::StrCat("cannot find this binary: ", ec.message()));
  }
  std::vector<std::string> argv = {options_.binary};
  auto own = verb_and_args.begin();
  argv.push_back(*own++);
  if (options_.config.has_value()) argv.insert(argv.end(), {"--config", options_.config_path});
  argv.insert(argv.end(), own, verb_and_args.end());
  argv.insert(argv.end(), options_.daemon_args.begin(), options_.daemon_args.end());
  if (!options_.config.has_value()) {
    // One server goes as Storm spells it, host and port apart, so the
    // daemons' configuration pages show the real port rather than 2181.
    const std::string connect = zk_connect();
    const size_t colon = connect.find(':');
    if (connect.find(',') == std::string::npos && colon != std::string::npos &&
        connect.rfind(':') == colon) {
      const std::string host = connect.substr(0, colon);
      argv.insert(argv.end(), {"-c", absl::StrCat("storm.zookeeper.servers=[\"", host, "\"]"), "-c",
                               absl::StrCat("storm.zookeeper.port=", connect.substr(colon + 1))});
    } else {
      argv.insert(argv.end(), {"-c", absl::StrCat("storm.zookeeper.servers=[\"", connect, "\"]")});
    }
  }
  return argv;
}

absl::StatusOr<Daemon> DevCluster::MakeDaemon(const std::string& name,
                                              std::vector<std::string> verb_and_args,
                                              const std::string& ready_prefix) {
  ASSIGN_OR_RETURN(std::vector<std::string> argv, DaemonArgv(std::move(verb_and_args)));
  Daemon daemon;
  daemon.name = name;
  daemon.log =
      (std::filesystem::path(options_.log_dir) / (name + options_.log_suffix)).string();
  daemon.argv = std::move(argv);
  daemon.ready_prefix = ready_prefix;
  return daemon;
}

absl::StatusOr<std::string> StartDaemonProcess(const std::vector<std::string>& argv,
                                               const std::string& log,
                                               const std::string& ready_prefix,
                                               std::chrono::milliseconds timeout,
                                               const std::string& label,
                                               std::unique_ptr<os::ChildProcess>& process) {
  os::ChildProcess::Options o;
  o.argv = argv;
  o.stdout_path = log;
  o.stderr_path = "=stdout";
  ASSIGN_OR_RETURN(process, os::ChildProcess::Start(o));
  absl::StatusOr<std::string> line = os::AwaitLogLine(log, ready_prefix, *process, timeout);
  if (!line.ok()) {
    // The reason (a port in use, a bad setting) is in the log: show its end.
    std::string message = absl::StrCat(label, ": ", line.status().message());
    if (absl::IsFailedPrecondition(line.status())) {
      const std::optional<int> status = process->WaitFor(std::chrono::milliseconds(0));
      message = absl::StrCat(label, " ",
                             status ? os::DescribeWaitStatus(*status) : std::string("exited"),
                             " before it was ready; the end of its log ", log, ":");
    }
    for (const std::string& tail : LastLines(log, 5)) absl::StrAppend(&message, "\n  ", tail);
    return absl::Status(line.status().code(), message);
  }
  return line;
}

absl::StatusOr<std::string> DevCluster::Launch(Daemon& daemon) {
  std::error_code ec;
  if (options_.fresh_logs) {
    std::filesystem::remove(daemon.log, ec);
  } else if (std::filesystem::exists(daemon.log, ec)) {
    std::filesystem::rename(daemon.log, daemon.log + ".1", ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot move the old log ", daemon.log,
                                                    " aside: ", ec.message()));
  }
  return StartDaemonProcess(daemon.argv, daemon.log, daemon.ready_prefix, options_.start_timeout,
                            daemon.name, daemon.process);
}

std::vector<Daemon*> DevCluster::Daemons() {
  std::vector<Daemon*> out;
  if (kafka_process_.has_value()) out.push_back(&*kafka_process_);
  for (Daemon& d : nimbuses_) out.push_back(&d);
  for (Daemon& d : supervisors_) out.push_back(&d);
  return out;
}

void DevCluster::StopSupervisors(std::chrono::milliseconds grace) {
  for (Daemon& d : supervisors_) {
    if (d.process != nullptr) d.process->Stop(grace);
  }
}

void DevCluster::StopNimbuses(std::chrono::milliseconds grace) {
  for (Daemon& d : nimbuses_) {
    if (d.process != nullptr) d.process->Stop(grace);
  }
}

void DevCluster::StopAll(std::chrono::milliseconds grace) {
  std::vector<Daemon*> daemons = Daemons();
  for (auto it = daemons.rbegin(); it != daemons.rend(); ++it) {
    if ((*it)->process != nullptr) (void)(*it)->process->Stop(grace);
  }
  if (server_ != nullptr) server_->Stop();
  if (ensemble_ != nullptr) {
    for (int i = 0; i < ensemble_->size(); ++i) ensemble_->Stop(i);
  }
}

}  // namespace tempest::devcluster
