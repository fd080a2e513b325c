#include "tests/system/multihost/multihost_world.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/os/loopback.h"
#include "devcluster/dev_cluster.h"
#include "tests/support/eventually.h"
#include "tests/support/run_command.h"

namespace tempest::testing {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

const std::vector<std::string> kHostNames = {"zk1",  "zk2",  "zk3",  "nimbus1", "nimbus2",
                                             "sup1", "sup2", "sup3", "kafka",   "client"};

std::string Tail(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MultiHostWorld>> MultiHostWorld::Start(const std::string& dir,
                                                                      const std::string& binary) {
  auto world = std::unique_ptr<MultiHostWorld>(new MultiHostWorld(dir, binary));
  // Namespaces a crashed earlier run left behind.
  if (absl::StatusOr<int> removed = devcluster::NetnsHosts::RemoveStale(); !removed.ok()) {
    return removed.status();
  }
  devcluster::NetnsHosts::Options o;
  o.names = kHostNames;
  absl::StatusOr<std::unique_ptr<devcluster::NetnsHosts>> hosts =
      devcluster::NetnsHosts::Create(o);
  if (!hosts.ok()) return hosts.status();
  world->hosts_ = *std::move(hosts);
  // From here on this thread (and every client it opens) is on "client".
  if (absl::Status s = world->hosts_->EnterHost(world->HostIndex("client")); !s.ok()) return s;
  if (absl::Status s = world->StartAll(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(s.message(), "\n", world->LogTails()));
  }
  return world;
}

MultiHostWorld::~MultiHostWorld() {
  // Supervisors first (they stop their workers), then the nimbuses.
  for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) {
    if (it->process != nullptr) it->process->Stop(milliseconds(3000));
  }
  daemons_.clear();
  zk_.reset();
  if (hosts_ != nullptr) (void)hosts_->Teardown();
}

std::string MultiHostWorld::ConfigFor(const std::string& host) const {
  std::vector<std::string> zk;
  for (const char* name : {"zk1", "zk2", "zk3"}) zk.push_back(absl::StrCat("\"", Address(name), "\""));
  std::ostringstream yaml;
  // No ui.host and no tempest.supervisor.metrics.host: both follow
  // storm.local.hostname.
  yaml << "storm.zookeeper.servers: [" << absl::StrJoin(zk, ", ") << "]\n"
       << "storm.zookeeper.port: 2181\n"
       << "storm.zookeeper.root: \"/tempest\"\n"
       << "storm.zookeeper.session.timeout: 6000\n"
       << "storm.zookeeper.connection.timeout: 4000\n"
       << "storm.local.hostname: " << Address(host) << "\n"
       << "nimbus.seeds: [\"" << Address("nimbus1") << "\", \"" << Address("nimbus2") << "\"]\n"
       << "ui.port: " << kUiPort << "\n"
       << "tempest.log.dir: " << devcluster::YamlQuoted(dir_ + "/logs") << "\n"
       << "nimbus.monitor.freq.secs: 1\n"
       << "nimbus.supervisor.timeout.secs: 10\n"
       << "nimbus.task.timeout.secs: 10\n"
       << "nimbus.task.launch.secs: 30\n"
       << "supervisor.heartbeat.frequency.secs: 1\n"
       << "supervisor.monitor.frequency.secs: 1\n"
       << "supervisor.worker.timeout.secs: 10\n"
       << "supervisor.worker.start.timeout.secs: 60\n"
       << "supervisor.slots.ports: [6700, 6701]\n"
       << "tempest.supervisor.metrics.port: 9100\n"
       << "storm.local.dir: " << devcluster::YamlQuoted(dir_ + "/" + host + "-local") << "\n";
  return yaml.str();
}

absl::StatusOr<std::string> MultiHostWorld::StartDaemon(const std::string& host,
                                                        const std::string& verb,
                                                        const std::string& ready_prefix,
                                                        const std::vector<std::string>& args) {
  const std::string config = dir_ + "/" + host + ".yaml";
  std::ofstream(config) << ConfigFor(host);
  Daemon d;
  d.host = host;
  d.log = dir_ + "/" + host + "-" + verb + ".log";
  os::ChildProcess::Options o;
  std::vector<std::string> argv = {binary_, verb, "--config", config};
  argv.insert(argv.end(), args.begin(), args.end());
  o.argv = hosts_->Command(HostIndex(host), argv);
  o.stdout_path = d.log;
  o.stderr_path = "=stdout";
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> child = os::ChildProcess::Start(o);
  if (!child.ok()) return child.status();
  d.process = *std::move(child);
  daemons_.push_back(std::move(d));
  Daemon& started = daemons_.back();
  absl::StatusOr<std::string> line =
      os::AwaitLogLine(started.log, ready_prefix, *started.process, seconds(60));
  if (!line.ok()) {
    return absl::Status(line.status().code(),
                        absl::StrCat(host, " ", verb, ": ", line.status().message()));
  }
  return line;
}

absl::Status MultiHostWorld::StartAll() {
  std::filesystem::create_directories(dir_ + "/logs");
  coord::ZkEnsemble::Options zo;
  zo.size = 3;
  zo.tick_ms = 500;
  zo.dir = dir_ + "/zk";
  for (const char* name : {"zk1", "zk2", "zk3"}) {
    zo.hosts.push_back(Address(name));
    zo.command_prefixes.push_back(hosts_->Command(HostIndex(name), {}));
  }
  absl::StatusOr<std::unique_ptr<coord::ZkEnsemble>> zk = coord::ZkEnsemble::Start(zo);
  if (!zk.ok()) return zk.status();
  zk_ = *std::move(zk);

  if (absl::Status s = StartKafka(); !s.ok()) return s;
  for (const char* name : {"nimbus1", "nimbus2"}) {
    absl::StatusOr<std::string> address = StartDaemon(name, "nimbus", "nimbus=");
    if (!address.ok()) return address.status();
    nimbus_addresses_.push_back(*address);
  }
  for (int i = 0; i < kSupervisors; ++i) {
    supervisor_dirs_.push_back(dir_ + "/" + SupervisorHost(i) + "-local");
    absl::StatusOr<std::string> id = StartDaemon(SupervisorHost(i), "supervisor", "supervisor=");
    if (!id.ok()) return id.status();
  }
  json summary;
  if (!Eventually(seconds(60), [&] {
        summary = RestGet("/api/v1/supervisor/summary");
        return summary.is_object() && summary.contains("supervisors") &&
               static_cast<int>(summary["supervisors"].size()) == kSupervisors;
      }, milliseconds(250))) {
    return absl::DeadlineExceededError(
        absl::StrCat("the supervisors did not all register: ", summary.dump()));
  }
  return absl::OkStatus();
}

absl::Status MultiHostWorld::StartKafka() {
  std::vector<std::string> args = {"--zk", ZkConnect()};
  for (const char* topic : kKafkaTopics) {
    args.insert(args.end(), {"--topic", absl::StrCat(topic, ":3")});
  }
  absl::StatusOr<std::string> bootstrap =
      StartDaemon("kafka", "dev-kafka", "bootstrap.servers=", args);
  if (!bootstrap.ok()) return bootstrap.status();
  kafka_bootstrap_ = *bootstrap;
  for (absl::string_view broker : absl::StrSplit(kafka_bootstrap_, ',', absl::SkipEmpty())) {
    int port = 0;
    const size_t colon = broker.rfind(':');
    if (colon == absl::string_view::npos || !absl::SimpleAtoi(broker.substr(colon + 1), &port)) {
      return absl::InternalError(absl::StrCat("dev-kafka printed '", kafka_bootstrap_, "'"));
    }
    if (absl::Status s = hosts_->ShareLoopbackPort(HostIndex("kafka"), port); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string MultiHostWorld::ZkConnect() const {
  std::vector<std::string> members;
  for (const char* name : {"zk1", "zk2", "zk3"}) members.push_back(Address(name) + ":2181");
  return absl::StrJoin(members, ",");
}

std::vector<std::string> MultiHostWorld::NimbusAddresses() const { return nimbus_addresses_; }

json MultiHostWorld::RestGet(const std::string& path, const std::string& only) const {
  const std::vector<std::string> addresses =
      only.empty() ? nimbus_addresses_ : std::vector<std::string>{only};
  for (const std::string& address : addresses) {
    const size_t colon = address.rfind(':');
    if (colon == std::string::npos) continue;
    const std::string host = address.substr(0, colon);
    const int port = std::stoi(address.substr(colon + 1));
    absl::StatusOr<std::string> response = os::TcpRequest(
        host, port,
        absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", address, "\r\nConnection: close\r\n\r\n"),
        milliseconds(5000));
    if (!response.ok()) continue;
    const size_t body = response->find("\r\n\r\n");
    if (body == std::string::npos) continue;
    json j = json::parse(response->substr(body + 4), nullptr, false);
    if (!j.is_discarded()) return j;
  }
  return json();
}

std::string MultiHostWorld::Leader(const std::string& address) const {
  json summary = RestGet("/api/v1/nimbus/summary", address);
  if (!summary.is_object() || !summary.contains("nimbuses")) return "";
  for (const json& n : summary["nimbuses"]) {
    if (n.value("status", "") == "Leader") {
      return absl::StrCat(n.value("host", ""), ":", n.value("port", 0));
    }
  }
  return "";
}

std::vector<std::string> MultiHostWorld::WorkerHosts(const std::string& topology_id) const {
  std::vector<std::string> out;
  json t = RestGet("/api/v1/topology/" + topology_id);
  if (!t.is_object() || !t.contains("workers") || !t["workers"].is_array()) return out;
  for (const json& w : t["workers"]) {
    if (w.is_object() && w.contains("host") && w["host"].is_string()) {
      out.push_back(w["host"].get<std::string>());
    }
  }
  return out;
}

absl::StatusOr<std::string> MultiHostWorld::Tempest(const std::vector<std::string>& args,
                                                    std::chrono::milliseconds timeout,
                                                    const std::string& nimbus) const {
  std::vector<std::string> argv = {binary_};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--nimbus", nimbus.empty() ? nimbus_addresses_.at(0) : nimbus});
  static int runs = 0;
  CommandRun r = RunCommand(hosts_->Command(HostIndex("client"), argv),
                            absl::StrCat(dir_, "/cmd-", ++runs), timeout);
  if (!r.finished || r.exit_code != 0) {
    return absl::InternalError(absl::StrCat("`tempest ", absl::StrJoin(args, " "), "` ",
                                            r.finished ? "failed" : "did not finish", ": ", r.out,
                                            r.err));
  }
  return r.out;
}

absl::StatusOr<std::string> MultiHostWorld::TempestWithSeeds(
    const std::vector<std::string>& args, const std::vector<std::string>& seeds,
    std::chrono::milliseconds timeout) const {
  static int configs = 0;
  const std::string config = absl::StrCat(dir_, "/client-", ++configs, ".yaml");
  std::vector<std::string> quoted;
  for (const std::string& seed : seeds) quoted.push_back(absl::StrCat("\"", seed, "\""));
  std::ofstream(config) << "nimbus.seeds: [" << absl::StrJoin(quoted, ", ") << "]\n"
                        << "ui.port: " << kUiPort << "\n";
  std::vector<std::string> argv = {binary_};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--config", config});
  CommandRun r = RunCommand(hosts_->Command(HostIndex("client"), argv),
                            absl::StrCat(dir_, "/seeds-cmd-", configs), timeout);
  if (!r.finished || r.exit_code != 0) {
    return absl::InternalError(absl::StrCat("`tempest ", absl::StrJoin(args, " "), "` ",
                                            r.finished ? "failed" : "did not finish", ": ", r.out,
                                            r.err));
  }
  return r.out;
}

std::string MultiHostWorld::LogTails() const {
  std::string out;
  for (const Daemon& d : daemons_) {
    absl::StrAppend(&out, "--- ", d.log, " (tail)\n", Tail(d.log, 1500), "\n");
  }
  if (zk_ != nullptr) {
    for (int i = 1; i <= 3; ++i) {
      const std::string log = absl::StrCat(dir_, "/zk/zk", i, "/server.log");
      absl::StrAppend(&out, "--- ", log, " (tail)\n", Tail(log, 800), "\n");
    }
  }
  return out;
}

}  // namespace tempest::testing
