#include "devcluster/netns_cluster.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/core/status_macros.h"
#include "devcluster/dev_cluster.h"

namespace tempest::devcluster {
namespace {

using std::chrono::milliseconds;

std::string Tail(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  return text.size() > bytes ? text.substr(text.size() - bytes) : text;
}

std::string Numbered(const char* base, int i) { return absl::StrCat(base, i + 1); }

}  // namespace

absl::StatusOr<std::unique_ptr<NetnsCluster>> NetnsCluster::Start(Options options) {
  if (options.zookeepers != 1 && options.zookeepers != 3) {
    return absl::InvalidArgumentError("NetnsCluster: 1 or 3 ZooKeepers");
  }
  if (options.nimbuses < 1 || options.supervisors < 1 || options.slots_per_supervisor < 1) {
    return absl::InvalidArgumentError("NetnsCluster: at least one nimbus, supervisor and slot");
  }
  auto cluster = std::unique_ptr<NetnsCluster>(new NetnsCluster(std::move(options)));
  // Hosts a crashed earlier run left behind.
  if (absl::StatusOr<int> removed = NetnsHosts::RemoveStale(); !removed.ok()) {
    return removed.status();
  }
  NetnsHosts::Options ho;
  const Options& o = cluster->options_;
  for (int i = 0; i < o.zookeepers; ++i) ho.names.push_back(Numbered("zk", i));
  for (int i = 0; i < o.nimbuses; ++i) ho.names.push_back(NimbusHost(i));
  for (int i = 0; i < o.supervisors; ++i) ho.names.push_back(SupervisorHost(i));
  if (!o.kafka_topics.empty()) ho.names.push_back("kafka");
  ho.names.push_back("client");
  ASSIGN_OR_RETURN(cluster->hosts_, NetnsHosts::Create(ho));
  // From here on this thread (and every client it opens) is on "client".
  RETURN_IF_ERROR(cluster->hosts_->EnterHost(cluster->HostIndex("client")));
  if (absl::Status s = cluster->StartAll(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(s.message(), "\n", cluster->LogTails()));
  }
  return cluster;
}

NetnsCluster::~NetnsCluster() {
  // Supervisors first (they stop their workers), then the nimbuses, Kafka.
  for (auto it = daemons_.rbegin(); it != daemons_.rend(); ++it) {
    if (it->process != nullptr) it->process->Stop(milliseconds(3000));
  }
  daemons_.clear();
  zk_.reset();
  // A destructor has no one to tell; Teardown has done what it could.
  if (hosts_ != nullptr) (void)hosts_->Teardown();
}

const std::string& NetnsCluster::Address(const std::string& name) const {
  return hosts_->host(hosts_->Find(name)).address;
}

std::string NetnsCluster::ZkConnect() const {
  std::vector<std::string> members;
  for (int i = 0; i < options_.zookeepers; ++i) {
    members.push_back(Address(Numbered("zk", i)) + ":2181");
  }
  return absl::StrJoin(members, ",");
}

std::string NetnsCluster::SupervisorLocalDir(int i) const {
  return options_.dir + "/" + SupervisorHost(i) + "-local";
}

std::string NetnsCluster::ConfigFor(const std::string& host) const {
  std::vector<std::string> zk;
  for (int i = 0; i < options_.zookeepers; ++i) zk.push_back(Address(Numbered("zk", i)));
  ClusterConfig config;
  config.zk_root = "/tempest";
  config.zk_session_timeout_ms = options_.zk_session_timeout_ms;
  config.zk_port = 2181;
  config.hostname = Address(host);
  for (int i = 0; i < options_.nimbuses; ++i) config.nimbus_seeds.push_back(Address(NimbusHost(i)));
  config.log_dir = options_.dir + "/logs";
  // No ui.host and no tempest.supervisor.metrics.host: both follow
  // storm.local.hostname.
  config.ui_host = "";
  config.ui_port = kUiPort;
  for (int s = 0; s < options_.slots_per_supervisor; ++s) {
    config.slot_ports.push_back(kFirstSlotPort + s);
  }
  config.supervisor_metrics_port = 9100;
  config.local_dir = options_.dir + "/" + host + "-local";
  // The hosts share one kernel and the same slot ports: each supervisor needs
  // slot uids of its own, or one host's clean-up of a slot's uid would kill
  // the other hosts' workers on that port.
  for (int i = 0; i < options_.supervisors; ++i) {
    if (SupervisorHost(i) == host) config.slot_uid_base = 1900000000 + 70000 * i;
  }
  config.extra_lines = options_.extra_config;
  return ClusterConfigYaml(zk, config);
}

absl::StatusOr<std::string> NetnsCluster::WriteConfig(const std::string& host) const {
  const std::string config = options_.dir + "/" + host + ".yaml";
  std::ofstream out(config);
  out << ConfigFor(host);
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", config));
  return config;
}

absl::StatusOr<std::string> NetnsCluster::StartDaemon(const std::string& host,
                                                      const std::string& verb,
                                                      const std::string& ready_prefix,
                                                      const std::vector<std::string>& args) {
  ASSIGN_OR_RETURN(const std::string config, WriteConfig(host));
  Daemon d;
  d.host = host;
  d.log = DaemonLogPath(host, verb);
  d.ready_prefix = ready_prefix;
  std::vector<std::string> argv = {options_.binary, verb, "--config", config};
  argv.insert(argv.end(), args.begin(), args.end());
  d.argv = hosts_->Command(HostIndex(host), argv);
  daemons_.push_back(std::move(d));
  return Launch(daemons_.back());
}

absl::StatusOr<std::string> NetnsCluster::Launch(Daemon& daemon) {
  std::error_code ec;
  std::filesystem::remove(daemon.log, ec);  // only the new ready line counts
  return StartDaemonProcess(daemon.argv, daemon.log, daemon.ready_prefix, options_.start_timeout,
                            daemon.host, daemon.process);
}

absl::Status NetnsCluster::StartAll() {
  std::error_code ec;
  std::filesystem::create_directories(options_.dir + "/logs", ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", options_.dir, "/logs"));
  coord::ZkEnsemble::Options zo;
  zo.size = options_.zookeepers;
  zo.tick_ms = options_.zk_tick_ms;
  zo.dir = options_.dir + "/zk";
  for (int i = 0; i < options_.zookeepers; ++i) {
    const std::string name = Numbered("zk", i);
    zo.hosts.push_back(Address(name));
    zo.command_prefixes.push_back(hosts_->Command(HostIndex(name), {}));
  }
  ASSIGN_OR_RETURN(zk_, coord::ZkEnsemble::Start(zo));

  if (!options_.kafka_topics.empty()) {
    RETURN_IF_ERROR(StartKafka());
  }
  for (int i = 0; i < options_.nimbuses; ++i) {
    ASSIGN_OR_RETURN(std::string address, StartDaemon(NimbusHost(i), "nimbus", "nimbus="));
    nimbus_addresses_.push_back(std::move(address));
  }
  for (int i = 0; i < options_.supervisors; ++i) {
    RETURN_IF_ERROR(StartDaemon(SupervisorHost(i), "supervisor", "supervisor="));
  }
  return absl::OkStatus();
}

absl::Status NetnsCluster::StartKafka() {
  std::vector<std::string> args = {"--zk", ZkConnect()};
  for (const std::string& topic : options_.kafka_topics) {
    args.insert(args.end(), {"--topic", topic});
  }
  ASSIGN_OR_RETURN(kafka_bootstrap_, StartDaemon("kafka", "dev-kafka", "bootstrap.servers=", args));
  for (absl::string_view broker : absl::StrSplit(kafka_bootstrap_, ',', absl::SkipEmpty())) {
    int port = 0;
    const size_t colon = broker.rfind(':');
    if (colon == absl::string_view::npos || !absl::SimpleAtoi(broker.substr(colon + 1), &port)) {
      return absl::InternalError(absl::StrCat("dev-kafka printed '", kafka_bootstrap_, "'"));
    }
    RETURN_IF_ERROR(hosts_->ShareLoopbackPort(HostIndex("kafka"), port));
  }
  return absl::OkStatus();
}

NetnsCluster::Daemon* NetnsCluster::Find(const std::string& host) {
  for (Daemon& d : daemons_) {
    if (d.host == host) return &d;
  }
  return nullptr;
}

absl::Status NetnsCluster::KillDaemon(const std::string& host) {
  Daemon* d = Find(host);
  if (d == nullptr) return absl::NotFoundError(absl::StrCat("no daemon on host ", host));
  if (d->process != nullptr) d->process->Kill();
  return absl::OkStatus();
}

absl::Status NetnsCluster::RestartDaemon(const std::string& host) {
  Daemon* d = Find(host);
  if (d == nullptr) return absl::NotFoundError(absl::StrCat("no daemon on host ", host));
  if (d->process != nullptr) d->process->Kill();
  return Launch(*d).status();
}

std::string NetnsCluster::LogTails() const {
  std::string out;
  for (const Daemon& d : daemons_) {
    absl::StrAppend(&out, "--- ", d.log, " (tail)\n", Tail(d.log, 1500), "\n");
  }
  for (int i = 1; i <= options_.zookeepers; ++i) {
    const std::string log = absl::StrCat(options_.dir, "/zk/zk", i, "/server.log");
    absl::StrAppend(&out, "--- ", log, " (tail)\n", Tail(log, 800), "\n");
  }
  return out;
}

}  // namespace tempest::devcluster
