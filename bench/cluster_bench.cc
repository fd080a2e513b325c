// The worker data plane across processes (worker::Worker): spout -> bolt with
// the spout (and the acker) in one worker PROCESS and the bolt in another,
// talking over loopback TCP (common/net transport, worker::EnvelopeCodec),
// next to the same topology in one process (LocalCluster) as the baseline.
//
// The bench forks itself for every two-process measurement: the child runs
// worker B (the bolt) with a fixed plan, the parent runs worker A (spout and
// acker). No ZooKeeper, no supervisor. Tuples carry one 100-byte payload.
//
// Each run measures, in this order:
//   local unacked / local acked   LocalCluster, as bench/engine_bench.cc;
//   unacked   acking off: tuples/s delivered to the bolt in the other
//             process (timed by the bolt, from N/8 to N delivered);
//   acked     XOR acking, 1 acker next to the spout, message ids, the bolt
//             acks every tuple across the connection: trees completed/s
//             (timed from N/8 to N acked);
//   latency   the acked two-process topology with the spout paced at --load
//             (default 50%) of this run's acked rate: complete latency
//             (emit -> Ack, timed by the spout for every tree) p50/p99 over a
//             measured window after a warm-up window.
// Prints every run and the medians, with the two-process/local ratios.
//
// --hosts 1 (root, iproute2 and nftables; devcluster::NetnsHosts) also runs the
// unacked and acked two-process measurements with A and B on two hosts made
// of network namespaces, talking over veth pairs and a bridge (MTU 1500)
// instead of loopback: "2 hosts", with its ratio to the same run's loopback
// two-process figure.
//
// --workers W (1..16) measures how cost grows with processes instead: W
// forked worker processes on loopback, each with one spout and one bolt
// executor (the acker in the first), so shuffle sends (W-1)/W of the tuples
// to another process; per run the same-run SPSC baseline (as engine_bench's),
// the LocalCluster figures, then unacked, acked and latency at --load of the
// W processes (counts gathered in memory shared across the forks);
// --baseline-items N sets the SPSC baseline's length (default 20M).
// --payload B sets the payload's bytes (default 100) in every measurement.
// --sweep F1,F2,... after the runs paces the two-process acked topology at
// each fraction F of the median two-process acked rate (Storm's
// ThroughputVsLatency): one "sweep:" line per step, offered and achieved
// trees/s, p50, p99.
//
// Usage: cluster_bench [--runs N] [--tuples N] [--max-pending P] [--load F]
//                      [--latency-secs S] [--flush-us U] [--resume-us U]
//                      [--only unacked|acked] [--hosts 1] [--payload B]
//                      [--workers W] [--baseline-items N] [--sweep F1,F2,...]
// --only unacked|acked runs just that two-process measurement (profiling).
// --flush-us overrides WorkerOptions::flush_interval (the transport's
// coalescing delay), --resume-us WorkerOptions::resume_poll.
// Not a test: it aborts if a tuple is corrupted or a run stalls.

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_components.h"
#include "bench/bench_process.h"
#include "common/api/component_registry.h"
#include "devcluster/netns_hosts.h"
#include "spdlog/spdlog.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"
#include "worker/worker.h"

namespace {

using namespace tempest;  // NOLINT: a benchmark program
using SteadyClock = std::chrono::steady_clock;

struct Args {
  int runs = 3;
  int64_t tuples = 5'000'000;
  int64_t max_pending = 20000;
  double load = 0.5;
  double latency_secs = 3;
  // The latency run's topology.max.spout.pending. A paced spout that fell
  // behind (a descheduled thread) catches up with a burst of up to this many
  // trees, and the last of a burst waits for all before it: with the
  // throughput runs' 20000 at ~2M trees/s that alone is ~10 ms of p99.
  int64_t latency_max_pending = 1000;
  int64_t flush_us = -1;  // -1: WorkerOptions default
  int64_t resume_us = -1;  // -1: WorkerOptions default
  std::string only;       // "": everything; else one of unacked, acked (for profiling)
  bool hosts = false;     // also measure across two network-namespace hosts
  int64_t payload = 100;
  int workers = 0;        // > 0: the W-process measurements instead of the default ones
  int64_t baseline_items = 20'000'000;  // --workers: the SPSC baseline's items
  std::vector<double> sweep;  // fractions of the two-process acked rate; empty: none
};
Args g_args;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "cluster_bench: %s\n", what.c_str());
  std::exit(1);
}

using bench::BaselineSpsc;
using bench::BenchBolt;
using bench::Counters;
using bench::BenchSpout;
using bench::FreePort;
using bench::Median;
using bench::ReadAll;
using bench::TimedRate;
using bench::WriteAll;
using bench::ParseFlags;
using bench::Shared;

Shared* g_shared = nullptr;
// Hosts "a" (worker A) and "b" (worker B) with --hosts.
devcluster::NetnsHosts* g_hosts = nullptr;

const api::ComponentRegistry* Registry() {
  static api::ComponentRegistry* registry = [] {
    auto* r = new api::ComponentRegistry();
    (void)r->RegisterSpout(
        "bench.Spout", [](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::Spout>> {
          return std::unique_ptr<api::Spout>(std::make_unique<BenchSpout>(g_shared));
        });
    (void)r->RegisterBolt(
        "bench.Bolt", [](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::Bolt>> {
          return std::unique_ptr<api::Bolt>(std::make_unique<BenchBolt>(g_shared));
        });
    return r;
  }();
  return registry;
}

core::TopologyDef Topology(bool acking, int64_t max_pending) {
  worker::testing::TopologyBuilder b(acking ? "cluster-acked" : "cluster-unacked");
  b.Config(api::kTopologyAckerExecutors, acking ? 1 : 0);
  if (acking && max_pending > 0) b.Config(api::kTopologyMaxSpoutPending, max_pending);
  b.SetSpout("spout", "bench.Spout");
  b.SetBolt("bolt", "bench.Bolt").ShuffleGrouping("spout");
  return b.Build();
}

// A new run's Shared: the payload every measurement uses.
void Configure(Shared& shared) { shared.payload_bytes = g_args.payload; }

// ---- in-process baseline ----

double LocalThroughput(bool acking, int64_t n, int64_t max_pending) {
  Shared shared;
  Configure(shared);
  shared.count = n;
  shared.reliable = acking;
  g_shared = &shared;
  worker::LocalClusterOptions options;
  options.registry = Registry();
  auto cluster = worker::LocalCluster::Create(Topology(acking, max_pending), options);
  if (!cluster.ok()) Die(cluster.status().ToString());
  if (!(*cluster)->Start().ok()) Die("local start");
  const Counters& c = *shared.counters;
  const double rate = TimedRate([&] { return acking ? c.Acked() : c.Received(); }, n,
                                std::chrono::seconds(300));
  (void)(*cluster)->Kill(std::chrono::milliseconds(0));
  g_shared = nullptr;
  return rate;
}

// ---- two processes ----

// Where the two workers run: both on loopback, or A on host a and B on host b.
struct Placement {
  bool across_hosts = false;
  std::string host_a = "127.0.0.1";
  std::string host_b = "127.0.0.1";
  int port_a = 0;
  int port_b = 0;
};

Placement Place(bool across_hosts) {
  Placement p;
  if (!across_hosts) {
    p.port_a = FreePort();
    p.port_b = FreePort();
    return p;
  }
  // Fresh namespaces: any port is free; a new pair per run steps past
  // connections of the previous run still closing.
  static int next = 7000;
  p.across_hosts = true;
  p.host_a = g_hosts->host(0).address;
  p.host_b = g_hosts->host(1).address;
  p.port_a = next++;
  p.port_b = next++;
  return p;
}

// Worker A's side of a run across hosts: the calling thread (and the worker
// threads it starts) on host a until the run ends.
class OnHostA {
 public:
  explicit OnHostA(const Placement& p) : active_(p.across_hosts) {
    if (active_ && !g_hosts->EnterHost(0).ok()) Die("cannot enter host a");
  }
  ~OnHostA() {
    if (active_ && !g_hosts->LeaveHost().ok()) Die("cannot leave host a");
  }

 private:
  bool active_;
};

// A: spout + acker; B: bolt.
std::pair<worker::WorkerPlan, worker::WorkerPlan> Plans(const core::TopologyDef& def,
                                                        const Placement& where) {
  auto layout = core::TaskLayout::Create(def, core::TaskLayout::AckerExecutors(def.config));
  if (!layout.ok()) Die(layout.status().ToString());
  std::vector<std::pair<int32_t, int32_t>> a;
  std::vector<std::pair<int32_t, int32_t>> b;
  for (const core::ExecutorInfo& e : layout->executors()) {
    (e.component.value() == "bolt" ? b : a).emplace_back(e.start.value(), e.end.value());
  }
  worker::WorkerPlan pa;
  pa.topology_id = def.name + "-1-1";
  pa.def = def;
  pa.local_executors = a;
  pa.remote_workers = {worker::RemoteWorker{where.host_b, where.port_b, b}};
  pa.bind_host = where.host_a;
  pa.port = where.port_a;
  pa.secret = "cluster-bench-secret";
  worker::WorkerPlan pb = pa;
  pb.local_executors = b;
  pb.remote_workers = {worker::RemoteWorker{where.host_a, where.port_a, a}};
  pb.bind_host = where.host_b;
  pb.port = where.port_b;
  return {std::move(pa), std::move(pb)};
}

std::unique_ptr<worker::Worker> MakeWorker(worker::WorkerPlan plan) {
  worker::WorkerOptions options;
  options.registry = Registry();
  if (g_args.resume_us >= 0) options.resume_poll = std::chrono::microseconds(g_args.resume_us);
  if (g_args.flush_us >= 0) options.flush_interval = std::chrono::microseconds(g_args.flush_us);
  auto w = worker::Worker::Create(std::move(plan), options);
  if (!w.ok()) Die(w.status().ToString());
  return std::move(*w);
}

// The child: worker B. Signals readiness, reports the bolt's delivery rate
// when `time_delivery` (acking off), and stops when the parent closes `stop`.
[[noreturn]] void ChildMain(const worker::WorkerPlan& plan, int64_t n, bool time_delivery,
                            int report_fd, int stop_fd) {
  Shared shared;
  Configure(shared);
  g_shared = &shared;
  std::unique_ptr<worker::Worker> w = MakeWorker(plan);
  if (!w->Start().ok()) Die("child start");
  const char ready = 'R';
  WriteAll(report_fd, &ready, 1);
  if (time_delivery) {
    const double rate = TimedRate([&] { return shared.counters->Received(); }, n,
                                  std::chrono::seconds(300));
    WriteAll(report_fd, &rate, sizeof(rate));
  }
  char c;
  while (::read(stop_fd, &c, 1) > 0) {
  }
  (void)w->Kill(std::chrono::milliseconds(0));
  std::fflush(stdout);
  ::_exit(0);
}

struct Remote {
  pid_t pid = -1;
  int report_fd = -1;
  int stop_fd = -1;
};

// Forks worker B; returns once it is running.
Remote ForkB(const worker::WorkerPlan& plan_b, int64_t n, bool time_delivery,
             bool across_hosts = false) {
  int report[2];
  int stop[2];
  if (::pipe(report) != 0 || ::pipe(stop) != 0) Die("pipe");
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid < 0) Die("fork");
  if (pid == 0) {
    ::close(report[0]);
    ::close(stop[1]);
    if (across_hosts && !g_hosts->EnterHost(1).ok()) Die("cannot enter host b");
    ChildMain(plan_b, n, time_delivery, report[1], stop[0]);
  }
  ::close(report[1]);
  ::close(stop[0]);
  Remote r{pid, report[0], stop[1]};
  char ready = 0;
  ReadAll(r.report_fd, &ready, 1);
  return r;
}

void Reap(Remote& r) {
  ::close(r.stop_fd);
  int status = 0;
  ::waitpid(r.pid, &status, 0);
  ::close(r.report_fd);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("worker B process failed");
}

double RemoteUnacked(int64_t n, bool across_hosts = false) {
  const core::TopologyDef def = Topology(false, 0);
  const Placement where = Place(across_hosts);
  auto [pa, pb] = Plans(def, where);
  Remote child = ForkB(pb, n, /*time_delivery=*/true, across_hosts);
  OnHostA on_a(where);
  Shared shared;
  Configure(shared);
  shared.count = n;
  g_shared = &shared;
  std::unique_ptr<worker::Worker> a = MakeWorker(pa);
  if (!a->Start(/*activate=*/false).ok()) Die("A start");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // connected
  a->Activate();
  double rate = 0;
  ReadAll(child.report_fd, &rate, sizeof(rate));
  (void)a->Kill(std::chrono::milliseconds(0));
  Reap(child);
  g_shared = nullptr;
  return rate;
}

double RemoteAcked(int64_t n, int64_t max_pending, bool across_hosts = false) {
  const core::TopologyDef def = Topology(true, max_pending);
  const Placement where = Place(across_hosts);
  auto [pa, pb] = Plans(def, where);
  Remote child = ForkB(pb, n, false, across_hosts);
  OnHostA on_a(where);
  Shared shared;
  Configure(shared);
  shared.count = n;
  shared.reliable = true;
  g_shared = &shared;
  std::unique_ptr<worker::Worker> a = MakeWorker(pa);
  if (!a->Start(false).ok()) Die("A start");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  a->Activate();
  const double rate = TimedRate([&] { return shared.counters->Acked(); }, n,
                                std::chrono::seconds(300));
  (void)a->Kill(std::chrono::milliseconds(0));
  Reap(child);
  g_shared = nullptr;
  return rate;
}

struct Latency {
  double rate = 0;
  int64_t p50_us = 0;
  int64_t p99_us = 0;
};

Latency RemoteLatency(double rate, double secs, int64_t max_pending) {
  const core::TopologyDef def = Topology(true, max_pending);
  auto [pa, pb] = Plans(def, Place(false));
  Remote child = ForkB(pb, 0, false);
  Shared shared;
  Configure(shared);
  shared.count = -1;
  shared.reliable = true;
  shared.rate = rate;
  shared.time_trees = true;
  shared.latencies_ns[0].reserve(static_cast<size_t>(rate * secs * 1.5) + 1024);
  g_shared = &shared;
  std::unique_ptr<worker::Worker> a = MakeWorker(pa);
  if (!a->Start(false).ok()) Die("A start");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  a->Activate();
  const auto window = std::chrono::milliseconds(static_cast<int64_t>(secs * 1000));
  std::this_thread::sleep_for(window);  // warm-up
  const int64_t acked0 = shared.counters->Acked();
  shared.counters->measure = true;
  std::this_thread::sleep_for(window);
  shared.counters->measure = false;
  const int64_t acked = shared.counters->Acked() - acked0;
  (void)a->Kill(std::chrono::milliseconds(0));
  Reap(child);
  g_shared = nullptr;
  Latency l;
  std::vector<int64_t> latencies = shared.AllLatencies();
  const bench::LatencyPercentiles p = bench::Percentiles(latencies);
  l.p50_us = p.p50_us;
  l.p99_us = p.p99_us;
  l.rate = static_cast<double>(acked) / secs;
  return l;
}

// ---- W worker processes, each with one spout and one bolt executor ----

// Counters every forked worker publishes into: a MAP_SHARED mapping made
// before the forks, reset (constructed anew) for every run.
Counters* FreshSharedCounters() {
  static void* block = [] {
    void* p = ::mmap(nullptr, sizeof(Counters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                     -1, 0);
    if (p == MAP_FAILED) Die("mmap");
    return p;
  }();
  return new (block) Counters();
}

// Spout and bolt with W executors each; W-th executors go to worker W, the
// acker to the first.
core::TopologyDef SpreadTopology(int workers, bool acking, int64_t max_pending) {
  worker::testing::TopologyBuilder b(acking ? "spread-acked" : "spread-unacked");
  b.Config(api::kTopologyAckerExecutors, acking ? 1 : 0);
  if (acking && max_pending > 0) b.Config(api::kTopologyMaxSpoutPending, max_pending);
  b.SetSpout("spout", "bench.Spout", workers);
  b.SetBolt("bolt", "bench.Bolt", workers).ShuffleGrouping("spout");
  return b.Build();
}

std::vector<worker::WorkerPlan> SpreadPlans(const core::TopologyDef& def, int workers) {
  auto layout = core::TaskLayout::Create(def, core::TaskLayout::AckerExecutors(def.config));
  if (!layout.ok()) Die(layout.status().ToString());
  std::vector<std::vector<std::pair<int32_t, int32_t>>> ranges(workers);
  std::map<std::string, int> next;  // per component: the worker of its next executor
  for (const core::ExecutorInfo& e : layout->executors()) {
    const std::string& component = e.component.value();
    const int w = component == "spout" || component == "bolt" ? next[component]++ % workers : 0;
    ranges[w].emplace_back(e.start.value(), e.end.value());
  }
  std::vector<int> ports;
  for (int i = 0; i < workers; ++i) ports.push_back(FreePort());
  std::vector<worker::WorkerPlan> plans(workers);
  for (int i = 0; i < workers; ++i) {
    worker::WorkerPlan& p = plans[i];
    p.topology_id = def.name + "-1-1";
    p.def = def;
    p.local_executors = ranges[i];
    for (int j = 0; j < workers; ++j) {
      if (j != i) p.remote_workers.push_back(worker::RemoteWorker{"127.0.0.1", ports[j], ranges[j]});
    }
    p.bind_host = "127.0.0.1";
    p.port = ports[i];
    p.secret = "cluster-bench-secret";
  }
  return plans;
}

// What each worker's spouts do in a W-process run.
struct SpreadSpec {
  int workers = 1;
  int64_t count = 0;  // in all
  double rate = 0;    // in all
  bool acking = false;
  bool time_trees = false;
  double secs = 0;    // latency runs: the measured window
};

// A forked worker: runs `plan`, activates on the parent's first byte on
// `go_fd`, stops when the parent closes it, then (latency runs) sends its
// spout's latencies (a count, then the values) on `report_fd`.
[[noreturn]] void SpreadChild(const worker::WorkerPlan& plan, const SpreadSpec& spec,
                              Counters* counters, int report_fd, int go_fd) {
  Shared shared;
  Configure(shared);
  shared.counters = counters;
  shared.spouts = spec.workers;
  shared.count = spec.count;
  shared.rate = spec.rate;
  shared.reliable = spec.acking;
  shared.time_trees = spec.time_trees;
  shared.publish_mask = spec.workers > 1 ? 0 : 1023;
  if (spec.time_trees) {
    // This process's spout has one of the first `workers` task indexes.
    for (int i = 0; i < spec.workers; ++i) {
      shared.latencies_ns[i].reserve(
          static_cast<size_t>(spec.rate * spec.secs * 1.5 / spec.workers) + 1024);
    }
  }
  g_shared = &shared;
  std::unique_ptr<worker::Worker> w = MakeWorker(plan);
  if (!w->Start(/*activate=*/false).ok()) Die("spread worker start");
  const char ready = 'R';
  WriteAll(report_fd, &ready, 1);
  char c;
  if (::read(go_fd, &c, 1) == 1) w->Activate();
  while (::read(go_fd, &c, 1) > 0) {
  }
  (void)w->Kill(std::chrono::milliseconds(0));
  const std::vector<int64_t> latencies = shared.AllLatencies();
  const int64_t n = static_cast<int64_t>(latencies.size());
  WriteAll(report_fd, &n, sizeof(n));
  if (n > 0) WriteAll(report_fd, latencies.data(), latencies.size() * sizeof(int64_t));
  std::fflush(stdout);
  ::_exit(0);
}

// Forks one worker process per plan; each waits for the parent's go byte.
std::vector<Remote> ForkSpread(const std::vector<worker::WorkerPlan>& plans,
                               const SpreadSpec& spec, Counters* counters) {
  std::vector<Remote> children;
  for (const worker::WorkerPlan& plan : plans) {
    int report[2];
    int go[2];
    if (::pipe(report) != 0 || ::pipe(go) != 0) Die("pipe");
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid < 0) Die("fork");
    if (pid == 0) {
      ::close(report[0]);
      ::close(go[1]);
      for (const Remote& r : children) ::close(r.stop_fd);  // siblings' pipes
      SpreadChild(plan, spec, counters, report[1], go[0]);
    }
    ::close(report[1]);
    ::close(go[0]);
    children.push_back(Remote{pid, report[0], go[1]});
  }
  return children;
}

struct SpreadResult {
  double rate = 0;
  int64_t p50_us = 0;
  int64_t p99_us = 0;
};

// One W-process run: throughput to spec.count (timed from count/8), or with
// time_trees a warm-up and a measured window of `secs` each.
SpreadResult Spread(const SpreadSpec& spec) {
  const double secs = spec.secs;
  const core::TopologyDef def = SpreadTopology(spec.workers, spec.acking,
                                               spec.time_trees ? g_args.latency_max_pending
                                                               : g_args.max_pending);
  Counters* counters = FreshSharedCounters();
  std::vector<Remote> children = ForkSpread(SpreadPlans(def, spec.workers), spec, counters);
  for (Remote& r : children) {
    char ready = 0;
    ReadAll(r.report_fd, &ready, 1);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // connected
  for (Remote& r : children) WriteAll(r.stop_fd, "G", 1);
  SpreadResult result;
  if (spec.time_trees) {
    const auto window = std::chrono::milliseconds(static_cast<int64_t>(secs * 1000));
    std::this_thread::sleep_for(window);  // warm-up
    const int64_t acked0 = counters->Acked();
    counters->measure = true;
    std::this_thread::sleep_for(window);
    counters->measure = false;
    result.rate = static_cast<double>(counters->Acked() - acked0) / secs;
  } else {
    result.rate = TimedRate([&] { return spec.acking ? counters->Acked() : counters->Received(); },
                            spec.count, std::chrono::seconds(300));
  }
  for (Remote& r : children) ::close(r.stop_fd);  // all stop at once
  std::vector<int64_t> latencies;
  for (Remote& r : children) {
    int64_t n = 0;
    ReadAll(r.report_fd, &n, sizeof(n));
    const size_t old = latencies.size();
    latencies.resize(old + static_cast<size_t>(n));
    if (n > 0) ReadAll(r.report_fd, latencies.data() + old, static_cast<size_t>(n) * 8);
    ::close(r.report_fd);
    int status = 0;
    ::waitpid(r.pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) Die("a worker process failed");
  }
  const bench::LatencyPercentiles p = bench::Percentiles(latencies);
  result.p50_us = p.p50_us;
  result.p99_us = p.p99_us;
  return result;
}

// The --workers measurements: per run the SPSC baseline, the LocalCluster
// figures and the W-process ones; then the medians.
void RunWorkers(const Args& args) {
  std::vector<double> base, lu, la, wu, wa, lat_rate, p50, p99;
  const int w = args.workers;
  for (int run = 0; run < args.runs; ++run) {
    const double b = BaselineSpsc(args.baseline_items);
    const double local_unacked = LocalThroughput(false, args.tuples, 0);
    const double local_acked = LocalThroughput(true, args.tuples / 2, args.max_pending);
    const SpreadResult u = Spread({w, args.tuples, 0, false, false, 0});
    const SpreadResult a = Spread({w, args.tuples / 2, 0, true, false, 0});
    const SpreadResult l = Spread({w, -1, a.rate * args.load, true, true, args.latency_secs});
    std::printf(
        "run %d: baseline %.3fM/s | local unacked %.3fM/s acked %.3fM/s | %d workers unacked "
        "%.3fM/s (%.2fx) acked %.3fM/s (%.2fx) | latency @%.1fk/s: p50 %lldus p99 %lldus\n",
        run, b / 1e6, local_unacked / 1e6, local_acked / 1e6, w, u.rate / 1e6,
        u.rate / local_unacked, a.rate / 1e6, a.rate / local_acked, l.rate / 1e3,
        static_cast<long long>(l.p50_us), static_cast<long long>(l.p99_us));
    std::fflush(stdout);
    base.push_back(b);
    lu.push_back(local_unacked);
    la.push_back(local_acked);
    wu.push_back(u.rate);
    wa.push_back(a.rate);
    lat_rate.push_back(l.rate);
    p50.push_back(static_cast<double>(l.p50_us));
    p99.push_back(static_cast<double>(l.p99_us));
  }
  std::printf(
      "median: baseline %.2fM/s | local unacked %.2fM/s acked %.2fM/s | %d workers unacked "
      "%.2fM/s (%.2fx) acked %.2fM/s (%.2fx) | latency @%.0fk/s: p50 %.0fus p99 %.0fus\n",
      Median(base) / 1e6, Median(lu) / 1e6, Median(la) / 1e6, w, Median(wu) / 1e6,
      Median(wu) / Median(lu), Median(wa) / 1e6, Median(wa) / Median(la), Median(lat_rate) / 1e3,
      Median(p50), Median(p99));
}

// The paced two-process acked topology at each fraction of `acked_rate`.
void Sweep(const Args& args, double acked_rate) {
  for (const double f : args.sweep) {
    const Latency l = RemoteLatency(acked_rate * f, args.latency_secs, args.latency_max_pending);
    std::printf("sweep: load %.2f offered %.0f/s achieved %.0f/s p50 %lldus p99 %lldus\n", f,
                acked_rate * f, l.rate, static_cast<long long>(l.p50_us),
                static_cast<long long>(l.p99_us));
    std::fflush(stdout);
  }
}

Args ParseArgs(int argc, char** argv) {
  Args args;
  ParseFlags(argc, argv,
             "usage: cluster_bench [--runs N] [--tuples N] [--max-pending P] [--load F] "
             "[--latency-secs S] [--latency-max-pending P] [--flush-us U] [--resume-us U] "
             "[--only unacked|acked] [--hosts 1] [--payload B] [--workers W] [--baseline-items N] "
             "[--sweep F1,F2,...]",
             [&](const std::string& flag, const char* value) {
               if (flag == "--runs") {
                 args.runs = std::atoi(value);
               } else if (flag == "--tuples") {
                 args.tuples = std::atoll(value);
               } else if (flag == "--max-pending") {
                 args.max_pending = std::atoll(value);
               } else if (flag == "--load") {
                 args.load = std::atof(value);
               } else if (flag == "--latency-max-pending") {
                 args.latency_max_pending = std::atoll(value);
               } else if (flag == "--latency-secs") {
                 args.latency_secs = std::atof(value);
               } else if (flag == "--resume-us") {
                 args.resume_us = std::atoll(value);
               } else if (flag == "--only") {
                 args.only = value;
               } else if (flag == "--flush-us") {
                 args.flush_us = std::atoll(value);
               } else if (flag == "--hosts") {
                 args.hosts = std::string(value) != "0";
               } else if (flag == "--payload") {
                 args.payload = std::atoll(value);
               } else if (flag == "--workers") {
                 args.workers = std::atoi(value);
               } else if (flag == "--baseline-items") {
                 args.baseline_items = std::atoll(value);
               } else if (flag == "--sweep") {
                 args.sweep = bench::ParseFractions("cluster_bench", value);
               } else {
                 return false;
               }
               return true;
             });
  if (args.payload < 0 || args.workers < 0 || args.workers > bench::kMaxExecutors) {
    Die("bad --payload or --workers (1.." + std::to_string(bench::kMaxExecutors) + ")");
  }
  // The bolt publishes its count every 1024 tuples; W spouts split the count evenly.
  const int64_t unit = 2048 * std::max(args.workers, 1);
  args.tuples = std::max<int64_t>(args.tuples / unit * unit, unit);
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = ParseArgs(argc, argv);
  g_args = args;
  std::unique_ptr<devcluster::NetnsHosts> hosts;
  if (args.hosts) {
    (void)devcluster::NetnsHosts::RemoveStale();
    devcluster::NetnsHosts::Options o;
    o.names = {"a", "b"};
    absl::StatusOr<std::unique_ptr<devcluster::NetnsHosts>> made = devcluster::NetnsHosts::Create(o);
    if (!made.ok()) Die(std::string(made.status().message()));
    hosts = *std::move(made);
    g_hosts = hosts.get();
  }
  // Connection warnings when a run's workers stop are expected.
  spdlog::set_level(spdlog::level::err);
  std::printf(
      "cluster_bench: runs=%d tuples=%lld max_pending=%lld load=%.2f latency_secs=%.1f "
      "latency_max_pending=%lld\n",
      args.runs, static_cast<long long>(args.tuples), static_cast<long long>(args.max_pending),
      args.load, args.latency_secs, static_cast<long long>(args.latency_max_pending));
  if (args.payload != 100 || args.workers > 0) {
    std::printf("cluster_bench: payload=%lld workers=%d\n", static_cast<long long>(args.payload),
                args.workers);
  }
  if (args.workers > 0) {
    RunWorkers(args);
    return 0;
  }
  std::vector<double> lu, la, ru, ra, hu, ha, lat_rate, p50, p99;
  if (!args.only.empty()) {
    // One two-process measurement alone, e.g. under `perf record -g`.
    for (int run = 0; run < args.runs; ++run) {
      const double r = args.only == "acked" ? RemoteAcked(args.tuples / 2, args.max_pending)
                                            : RemoteUnacked(args.tuples);
      std::printf("run %d: 2 processes %s %.2fM/s\n", run, args.only.c_str(), r / 1e6);
    }
    return 0;
  }
  for (int run = 0; run < args.runs; ++run) {
    const double local_unacked = LocalThroughput(false, args.tuples, 0);
    const double local_acked = LocalThroughput(true, args.tuples / 2, args.max_pending);
    const double remote_unacked = RemoteUnacked(args.tuples);
    const double remote_acked = RemoteAcked(args.tuples / 2, args.max_pending);
    const Latency l =
        RemoteLatency(remote_acked * args.load, args.latency_secs, args.latency_max_pending);
    double hosts_unacked = 0;
    double hosts_acked = 0;
    if (args.hosts) {
      hosts_unacked = RemoteUnacked(args.tuples, /*across_hosts=*/true);
      hosts_acked = RemoteAcked(args.tuples / 2, args.max_pending, /*across_hosts=*/true);
      hu.push_back(hosts_unacked);
      ha.push_back(hosts_acked);
    }
    std::printf(
        "run %d: local unacked %.2fM/s acked %.2fM/s | 2 processes unacked %.2fM/s (%.2fx) "
        "acked %.2fM/s (%.2fx) | latency @%.0fk/s: p50 %lldus p99 %lldus\n",
        run, local_unacked / 1e6, local_acked / 1e6, remote_unacked / 1e6,
        remote_unacked / local_unacked, remote_acked / 1e6, remote_acked / local_acked,
        l.rate / 1e3, static_cast<long long>(l.p50_us), static_cast<long long>(l.p99_us));
    if (args.hosts) {
      std::printf("run %d: 2 hosts unacked %.2fM/s (%.2fx of 2 processes) acked %.2fM/s (%.2fx)\n",
                  run, hosts_unacked / 1e6, hosts_unacked / remote_unacked, hosts_acked / 1e6,
                  hosts_acked / remote_acked);
    }
    std::fflush(stdout);
    lu.push_back(local_unacked);
    la.push_back(local_acked);
    ru.push_back(remote_unacked);
    ra.push_back(remote_acked);
    lat_rate.push_back(l.rate);
    p50.push_back(static_cast<double>(l.p50_us));
    p99.push_back(static_cast<double>(l.p99_us));
  }
  std::printf(
      "median: local unacked %.2fM/s acked %.2fM/s | 2 processes unacked %.2fM/s (%.2fx) "
      "acked %.2fM/s (%.2fx) | latency @%.0fk/s: p50 %.0fus p99 %.0fus\n",
      Median(lu) / 1e6, Median(la) / 1e6, Median(ru) / 1e6, Median(ru) / Median(lu),
      Median(ra) / 1e6, Median(ra) / Median(la), Median(lat_rate) / 1e3, Median(p50),
      Median(p99));
  if (args.hosts) {
    std::printf("median: 2 hosts unacked %.2fM/s (%.2fx of 2 processes) acked %.2fM/s (%.2fx)\n",
                Median(hu) / 1e6, Median(hu) / Median(ru), Median(ha) / 1e6,
                Median(ha) / Median(ra));
  }
  if (!args.sweep.empty()) Sweep(args, Median(ra));
  return 0;
}
