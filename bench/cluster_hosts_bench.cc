// A whole cluster's throughput across hosts next to the same cluster on
// loopback, in the same run: ZooKeeper, one nimbus and S supervisors (one
// worker each) as real processes, either all on 127.0.0.1
// (devcluster::DevCluster) or each on a network-namespace host of its own
// (devcluster::NetnsCluster: veth pairs and a bridge between hosts). The
// topology is tempest.SequenceSpout (one task, unpaced) -> tempest.IdentityBolt
// (S tasks, shuffle), S workers, submitted with `tempest submit`:
//   unacked   reliable: false, no ackers, N tuples; tuples/s executed by the bolt;
//   acked     reliable: true, S ackers, max.spout.pending P, N/3 trees; trees/s acked.
// Rates are read from nimbus's REST API (the workers' heartbeats, about once
// a second) between N/8 and 7N/8 of the count.
//
// Usage: cluster_hosts_bench [--runs R] [--tuples N] [--supervisors S]
//                            [--max-pending P]
// Needs root, iproute2 and nftables (the hosts), and the tempest binary
// (TEMPEST_BINARY, else build/release/cli/tempest). Not a test: it exits
// non-zero when a cluster cannot start or a run stalls.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_components.h"
#include "common/os/child_process.h"
#include "common/os/loopback.h"
#include "devcluster/dev_cluster.h"
#include "devcluster/netns_cluster.h"
#include "nlohmann/json.hpp"

namespace {

using namespace tempest;  // NOLINT: a benchmark program
using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

struct Args {
  int runs = 3;
  int64_t tuples = 30'000'000;  // unacked; acked runs use a third
  int supervisors = 3;
  int64_t max_pending = 5000;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "cluster_hosts_bench: %s\n", what.c_str());
  std::exit(1);
}

std::string Binary() {
  const char* b = std::getenv("TEMPEST_BINARY");
  return b != nullptr ? b : "build/release/cli/tempest";
}

json RestGet(const std::string& address, const std::string& path) {
  const size_t colon = address.rfind(':');
  absl::StatusOr<std::string> response = os::TcpRequest(
      address.substr(0, colon), std::stoi(address.substr(colon + 1)),
      absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", address, "\r\nConnection: close\r\n\r\n"),
      milliseconds(5000));
  if (!response.ok()) return json();
  const size_t body = response->find("\r\n\r\n");
  if (body == std::string::npos) return json();
  json j = json::parse(response->substr(body + 4), nullptr, false);
  return j.is_discarded() ? json() : j;
}

// Runs `argv` to completion (60 s at most); false if it failed.
bool Run(const std::vector<std::string>& argv, const std::string& log) {
  os::ChildProcess::Options o;
  o.argv = argv;
  o.stdout_path = log;
  o.stderr_path = "=stdout";
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> child = os::ChildProcess::Start(o);
  if (!child.ok()) return false;
  std::optional<int> status = (*child)->WaitFor(seconds(60));
  return status.has_value() && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
}

int64_t CountOf(bool acked, const Args& a) { return acked ? a.tuples / 3 : a.tuples; }

std::string TopologyYaml(const std::string& name, bool acked, const Args& a) {
  return absl::StrCat(
      "name: ", name, "\n",
      "config:\n"
      "  topology.workers: ", a.supervisors, "\n",
      "  topology.acker.executors: ", acked ? a.supervisors : 0, "\n",
      acked ? absl::StrCat("  topology.max.spout.pending: ", a.max_pending, "\n") : "",
      "spouts:\n"
      "  - id: spout\n"
      "    className: tempest.SequenceSpout\n"
      "    parallelism: 1\n"
      "    properties:\n"
      "      - name: count\n"
      "        value: ", CountOf(acked, a), "\n",
      "      - name: rate\n"
      "        value: 0\n"
      "      - name: payloadBytes\n"
      "        value: 100\n"
      "      - name: reliable\n"
      "        value: ", acked ? "true" : "false", "\n",
      "bolts:\n"
      "  - id: sink\n"
      "    className: tempest.IdentityBolt\n"
      "    parallelism: ", a.supervisors, "\n",
      "streams:\n"
      "  - from: spout\n"
      "    to: sink\n"
      "    grouping:\n"
      "      type: SHUFFLE\n");
}

// The count that measures progress: trees acked by the spout, or tuples
// executed by the sink; -1 when nimbus does not answer.
int64_t Progress(const std::string& nimbus, const std::string& id, bool acked) {
  json t = RestGet(nimbus, "/api/v1/topology/" + id + "?window=:all-time");
  if (!t.is_object()) return -1;
  if (acked) {
    for (const json& s : t.value("spouts", json::array())) return s.value("acked", int64_t{0});
    return 0;
  }
  for (const json& b : t.value("bolts", json::array())) {
    if (b.value("boltId", "") == "sink") return b.value("executed", int64_t{0});
  }
  return 0;
}

// Submits the topology, measures its rate between N/8 and 7N/8, kills it and
// waits until it is gone.
double Measure(const std::string& dir, const std::vector<std::string>& client_prefix,
               const std::string& nimbus, bool acked, const Args& a, int run) {
  const std::string name = absl::StrCat(acked ? "acked-" : "unacked-", run, "-", ::getpid());
  const std::string path = absl::StrCat(dir, "/", name, ".yaml");
  std::ofstream(path) << TopologyYaml(name, acked, a);
  auto command = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = client_prefix;
    argv.push_back(Binary());
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--nimbus", nimbus});
    return argv;
  };
  if (!Run(command({"submit", path}), dir + "/" + name + ".submit")) Die("submit failed: " + name);
  std::string id;
  for (int i = 0; i < 100 && id.empty(); ++i) {
    for (const json& t : RestGet(nimbus, "/api/v1/topology/summary").value("topologies",
                                                                           json::array())) {
      if (t.value("name", "") == name) id = t.value("id", "");
    }
    if (id.empty()) std::this_thread::sleep_for(milliseconds(100));
  }
  if (id.empty()) Die("no id for " + name);
  const int64_t from = CountOf(acked, a) / 8;
  const int64_t to = CountOf(acked, a) * 7 / 8;
  const auto deadline = SteadyClock::now() + seconds(600);
  int64_t c0 = -1;
  SteadyClock::time_point t0;
  double rate = 0;
  while (SteadyClock::now() < deadline) {
    const int64_t c = Progress(nimbus, id, acked);
    const auto now = SteadyClock::now();
    if (c0 < 0 && c >= from) {
      if (c >= to) Die(absl::StrCat("the run ended within one stats interval (", c, " of ", CountOf(acked, a), "): raise --tuples"));
      c0 = c;
      t0 = now;
    } else if (c0 >= 0 && c >= to) {
      rate = static_cast<double>(c - c0) / std::chrono::duration<double>(now - t0).count();
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  if (rate == 0) Die("stalled: " + name);
  if (!Run(command({"kill", name, "-w", "0"}), dir + "/" + name + ".kill")) Die("kill failed");
  for (int i = 0; i < 300; ++i) {
    bool gone = true;
    for (const json& t : RestGet(nimbus, "/api/v1/topology/summary").value("topologies",
                                                                           json::array())) {
      if (t.value("name", "") == name) gone = false;
    }
    if (gone) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  return rate;
}

struct Figures {
  std::vector<double> unacked;
  std::vector<double> acked;
};

Figures OnLoopback(const std::string& dir, const Args& a) {
  devcluster::DevCluster::Options o;
  o.binary = Binary();
  o.log_dir = dir;
  o.log_suffix = "-loopback.log";
  o.zookeepers = 1;
  o.zk_dir = dir + "/zk-loopback";
  devcluster::ClusterConfig config;
  config.zk_root = "/tempest";
  o.config = config;
  o.config_path = dir + "/loopback.yaml";
  devcluster::DevCluster cluster(o);
  if (absl::Status s = cluster.StartZooKeeper(); !s.ok()) Die(std::string(s.message()));
  absl::StatusOr<std::string> nimbus = cluster.AddNimbus("nimbus");
  if (!nimbus.ok()) Die(std::string(nimbus.status().message()));
  for (int i = 0; i < a.supervisors; ++i) {
    absl::StatusOr<std::string> s =
        cluster.AddSupervisor(absl::StrCat("sup", i + 1), absl::StrCat(dir, "/lo-sup", i + 1), 1);
    if (!s.ok()) Die(std::string(s.status().message()));
  }
  Figures f;
  for (int run = 0; run < a.runs; ++run) {
    f.unacked.push_back(Measure(dir, {}, *nimbus, false, a, run));
    f.acked.push_back(Measure(dir, {}, *nimbus, true, a, run));
    std::printf("loopback run %d: unacked %.0fk/s acked %.0fk/s\n", run, f.unacked.back() / 1e3,
                f.acked.back() / 1e3);
    std::fflush(stdout);
  }
  // The supervisors stop their workers on SIGTERM; give them the time tempest dev
  // gives, or the workers outlive the run.
  cluster.StopAll(std::chrono::seconds(10));
  return f;
}

Figures OnHosts(const std::string& dir, const Args& a) {
  devcluster::NetnsCluster::Options o;
  o.dir = dir + "/hosts";
  std::filesystem::create_directories(o.dir);
  o.binary = Binary();
  o.zookeepers = 1;
  o.nimbuses = 1;
  o.supervisors = a.supervisors;
  o.slots_per_supervisor = 1;
  absl::StatusOr<std::unique_ptr<devcluster::NetnsCluster>> cluster =
      devcluster::NetnsCluster::Start(o);
  if (!cluster.ok()) Die(std::string(cluster.status().message()));
  const std::string nimbus = (*cluster)->NimbusAddresses().at(0);
  // Every supervisor registered before the first submit.
  for (int i = 0; i < 600; ++i) {
    if (static_cast<int>(RestGet(nimbus, "/api/v1/supervisor/summary")
                             .value("supervisors", json::array())
                             .size()) == a.supervisors) {
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  Figures f;
  for (int run = 0; run < a.runs; ++run) {
    f.unacked.push_back(Measure(o.dir, {}, nimbus, false, a, run));
    f.acked.push_back(Measure(o.dir, {}, nimbus, true, a, run));
    std::printf("hosts run %d: unacked %.0fk/s acked %.0fk/s\n", run, f.unacked.back() / 1e3,
                f.acked.back() / 1e3);
    std::fflush(stdout);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  bench::ParseFlags(argc, argv,
                    "usage: cluster_hosts_bench [--runs R] [--tuples N] [--supervisors S] "
                    "[--max-pending P]",
                    [&](const std::string& flag, const char* value) {
                      if (flag == "--runs") {
                        a.runs = std::atoi(value);
                      } else if (flag == "--tuples") {
                        a.tuples = std::atoll(value);
                      } else if (flag == "--supervisors") {
                        a.supervisors = std::atoi(value);
                      } else if (flag == "--max-pending") {
                        a.max_pending = std::atoll(value);
                      } else {
                        return false;
                      }
                      return true;
                    });
  if (a.runs < 1 || a.tuples < 1000 || a.supervisors < 1) Die("bad arguments");
  char dir_template[] = "/tmp/tempest-cluster-hosts-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) Die("mkdtemp");
  const std::string dir = dir_template;
  // Workers run as an unprivileged user and write under here.
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  std::printf("cluster_hosts_bench: runs=%d tuples=%lld supervisors=%d max_pending=%lld\n",
              a.runs, static_cast<long long>(a.tuples), a.supervisors,
              static_cast<long long>(a.max_pending));
  // Loopback first: NetnsCluster moves this thread onto its client host
  // until it is torn down.
  const Figures lo = OnLoopback(dir, a);
  const Figures hosts = OnHosts(dir, a);
  using bench::Median;
  std::printf(
      "median (%d supervisors): loopback unacked %.0fk/s acked %.0fk/s | hosts unacked %.0fk/s "
      "(%.2fx) acked %.0fk/s (%.2fx)\n",
      a.supervisors, Median(lo.unacked) / 1e3, Median(lo.acked) / 1e3,
      Median(hosts.unacked) / 1e3, Median(hosts.unacked) / Median(lo.unacked),
      Median(hosts.acked) / 1e3, Median(hosts.acked) / Median(lo.acked));
  if (std::getenv("TEMPEST_KEEP_TEST_DIRS") == nullptr) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return 0;
}
