// Execution-engine benchmarks (worker/): whole topologies in a LocalCluster.
//
// Each repetition measures, in this order:
//   baseline  a plain lock-free SPSC hand-off of 100-byte items between two
//             threads (boost::lockfree::spsc_queue, one push/pop per item);
//   unacked   spout -> bolt, acking off (topology.acker.executors 0), 100-byte
//             payloads, no message ids: tuples/s delivered to the bolt;
//   acked     spout -> bolt with XOR acking and 1 acker, message ids, the bolt
//             acks every tuple: trees completed/s (topology.max.spout.pending
//             per --max-pending);
//   latency   the acked topology with a rate-limited spout at --load (default
//             50%) of this repetition's acked rate: complete-latency p50/p99
//             (sampled 1 in 16, log-linear buckets, +-12.5%);
// plus context switches (getrusage ru_nvcsw + ru_nivcsw of the process) per
// 1000 tuples for each engine run. Prints every repetition and the medians.
//
// How cost grows (defaults in brackets; the default run is the one above):
//   --payload B          payload bytes per tuple [100]; the baseline stays at
//                        100-byte items, a fixed yardstick for the machine;
//   --grouping fields    the bolt subscribes with fields grouping on a key
//                        field (tuples become key, payload) taking --keys
//                        distinct int values [1000000]; [shuffle];
//   --executors E        E spout and E bolt executors (E <= 16) [1];
//   --sweep F1,F2,...    after the repetitions, Storm's ThroughputVsLatency:
//                        the paced acked topology at each fraction F of the
//                        median acked rate, one "sweep:" line per step
//                        (offered and achieved trees/s, p50, p99).
//   --baseline-items N   the SPSC baseline's length [20000000] (smoke runs).
// Settings other than the defaults are echoed on a second header line, and
// each repetition on a second, unrounded "exact:" line.
//
// Usage: engine_bench [--reps R] [--tuples N] [--max-pending P] [--load F]
//                     [--latency-secs S] [--payload B] [--grouping shuffle|fields]
//                     [--keys K] [--executors E] [--baseline-items N] [--sweep F1,F2,...]
// Not a test: it checks only that every tuple arrived (and aborts otherwise,
// or when a run has not finished within 300 s).

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_components.h"
#include "common/api/component_registry.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"

namespace {

using namespace tempest;  // NOLINT: a benchmark program
using SteadyClock = std::chrono::steady_clock;

struct Args {
  int reps = 5;
  int64_t tuples = 5'000'000;
  int64_t max_pending = 5000;
  double load = 0.5;
  double latency_secs = 3;
  int64_t payload = 100;
  std::string grouping = "shuffle";
  int64_t keys = 1'000'000;
  int executors = 1;
  std::vector<double> sweep;  // fractions of the acked rate; empty: no sweep
  int64_t baseline_items = 20'000'000;
};
Args g_args;

// Every run's topology and components follow these settings.
void Configure(bench::Shared& shared) {
  shared.payload_bytes = g_args.payload;
  shared.keys = g_args.grouping == "fields" ? g_args.keys : 0;
  shared.spouts = g_args.executors;
  shared.publish_mask = g_args.executors > 1 ? 0 : 1023;
}

// How long a throughput run may take before the benchmark gives up.
constexpr auto kRunLimit = std::chrono::seconds(300);

int64_t ContextSwitches() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_nvcsw + ru.ru_nivcsw;
}

using bench::BaselineSpsc;
using bench::BenchBolt;
using bench::BenchSpout;
using bench::Counters;
using bench::Median;
using bench::ParseFlags;
using bench::Shared;

struct Result {
  double tuples_per_sec = 0;
  double csw_per_1000 = 0;
  int64_t p50_us = 0;
  int64_t p99_us = 0;
};

std::unique_ptr<worker::LocalCluster> Build(Shared* shared, bool acking, int64_t max_pending) {
  static api::ComponentRegistry* registry = [] {
    auto* r = new api::ComponentRegistry();
    return r;
  }();
  static Shared* current = nullptr;
  current = shared;
  static bool registered = false;
  if (!registered) {
    registered = true;
    (void)registry->RegisterSpout(
        "bench.Spout", [](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::Spout>> {
          return std::unique_ptr<api::Spout>(std::make_unique<BenchSpout>(current));
        });
    (void)registry->RegisterBolt(
        "bench.Bolt", [](const api::ComponentArgs&) -> absl::StatusOr<std::unique_ptr<api::Bolt>> {
          return std::unique_ptr<api::Bolt>(std::make_unique<BenchBolt>(current));
        });
  }
  worker::testing::TopologyBuilder b(acking ? "bench-acked" : "bench-unacked");
  b.Config(api::kTopologyAckerExecutors, acking ? 1 : 0);
  if (acking && max_pending > 0) b.Config(api::kTopologyMaxSpoutPending, max_pending);
  b.SetSpout("spout", "bench.Spout", g_args.executors);
  auto bolt = b.SetBolt("bolt", "bench.Bolt", g_args.executors);
  if (g_args.grouping == "fields") {
    bolt.FieldsGrouping("spout", {"key"});
  } else {
    bolt.ShuffleGrouping("spout");
  }
  worker::LocalClusterOptions options;
  options.registry = registry;
  auto cluster = worker::LocalCluster::Create(b.Build(), options);
  if (!cluster.ok()) {
    std::fprintf(stderr, "engine_bench: %s\n", cluster.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*cluster);
}

// Runs `n` tuples to completion; throughput = n / time to the last delivery
// (acking off) or the last ack (acking on).
Result Throughput(bool acking, int64_t n, int64_t max_pending) {
  Shared shared;
  Configure(shared);
  shared.count = n;
  shared.reliable = acking;
  auto cluster = Build(&shared, acking, max_pending);
  const int64_t csw0 = ContextSwitches();
  const auto start = SteadyClock::now();
  if (!cluster->Start().ok()) std::exit(1);
  const Counters& c = *shared.counters;
  while ((acking ? c.Acked() : c.Received()) < n) {
    if (SteadyClock::now() - start > kRunLimit) {
      std::fprintf(stderr, "engine_bench: run not finished within %llds\n",
                   static_cast<long long>(kRunLimit.count()));
      std::exit(1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const double secs = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const int64_t csw = ContextSwitches() - csw0;
  (void)cluster->Kill(std::chrono::milliseconds(0));
  Result r;
  r.tuples_per_sec = static_cast<double>(n) / secs;
  r.csw_per_1000 = static_cast<double>(csw) * 1000.0 / static_cast<double>(n);
  return r;
}

Result Latency(double rate, double secs, int64_t max_pending) {
  Shared shared;
  Configure(shared);
  shared.count = -1;
  shared.reliable = true;
  shared.rate = rate;
  shared.time_trees = true;
  for (int i = 0; i < g_args.executors; ++i) {
    shared.latencies_ns[i].reserve(static_cast<size_t>(rate * secs * 1.5 / g_args.executors) +
                                   1024);
  }
  auto cluster = Build(&shared, true, max_pending);
  if (!cluster->Start().ok()) std::exit(1);
  // Warm up for one window, then measure the next one.
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(secs * 1000)));
  const int64_t csw0 = ContextSwitches();
  const int64_t acked0 = shared.counters->Acked();
  shared.counters->measure = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(secs * 1000)));
  shared.counters->measure = false;
  const int64_t csw = ContextSwitches() - csw0;
  const int64_t acked = shared.counters->Acked() - acked0;
  (void)cluster->Kill(std::chrono::milliseconds(0));
  Result r;
  std::vector<int64_t> latencies = shared.AllLatencies();
  const bench::LatencyPercentiles p = bench::Percentiles(latencies);
  r.p50_us = p.p50_us;
  r.p99_us = p.p99_us;
  r.tuples_per_sec = static_cast<double>(acked) / secs;
  r.csw_per_1000 = acked > 0 ? static_cast<double>(csw) * 1000.0 / static_cast<double>(acked) : 0;
  return r;
}

Args ParseArgs(int argc, char** argv) {
  Args args;
  ParseFlags(argc, argv,
             "usage: engine_bench [--reps R] [--tuples N] [--max-pending P] [--load F] "
             "[--latency-secs S] [--payload B] [--grouping shuffle|fields] [--keys K] "
             "[--executors E] [--baseline-items N] [--sweep F1,F2,...]",
             [&](const std::string& flag, const char* value) {
               if (flag == "--reps") {
                 args.reps = std::atoi(value);
               } else if (flag == "--tuples") {
                 args.tuples = std::atoll(value);
               } else if (flag == "--max-pending") {
                 args.max_pending = std::atoll(value);
               } else if (flag == "--load") {
                 args.load = std::atof(value);
               } else if (flag == "--latency-secs") {
                 args.latency_secs = std::atof(value);
               } else if (flag == "--payload") {
                 args.payload = std::atoll(value);
               } else if (flag == "--grouping") {
                 args.grouping = value;
               } else if (flag == "--keys") {
                 args.keys = std::atoll(value);
               } else if (flag == "--executors") {
                 args.executors = std::atoi(value);
               } else if (flag == "--baseline-items") {
                 args.baseline_items = std::atoll(value);
               } else if (flag == "--sweep") {
                 args.sweep = bench::ParseFractions("engine_bench", value);
               } else {
                 return false;
               }
               return true;
             });
  if (args.payload < 0 || args.keys < 1 || args.executors < 1 ||
      args.executors > bench::kMaxExecutors ||
      (args.grouping != "shuffle" && args.grouping != "fields")) {
    std::fprintf(stderr, "engine_bench: bad --payload, --keys, --executors (1..%d) or --grouping\n",
                 bench::kMaxExecutors);
    std::exit(2);
  }
  // One bolt publishes its count every 1024 tuples; several spouts split the
  // count evenly.
  const int64_t unit = 2048 * args.executors;
  args.tuples = std::max<int64_t>(args.tuples / unit * unit, unit);
  return args;
}

// The paced acked topology at each fraction of `acked_rate`.
void Sweep(const Args& args, double acked_rate) {
  for (const double f : args.sweep) {
    const Result l = Latency(acked_rate * f, args.latency_secs, args.max_pending);
    std::printf("sweep: load %.2f offered %.0f/s achieved %.0f/s p50 %lldus p99 %lldus\n", f,
                acked_rate * f, l.tuples_per_sec, static_cast<long long>(l.p50_us),
                static_cast<long long>(l.p99_us));
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  g_args = ParseArgs(argc, argv);
  const Args& args = g_args;
  std::printf("engine_bench: reps=%d tuples=%lld max_pending=%lld load=%.2f latency_secs=%.1f\n",
              args.reps, static_cast<long long>(args.tuples),
              static_cast<long long>(args.max_pending), args.load, args.latency_secs);
  const bool non_default = args.payload != 100 || args.grouping != "shuffle" ||
                           args.executors != 1 || !args.sweep.empty();
  if (non_default) {
    std::printf("engine_bench: payload=%lld grouping=%s keys=%lld executors=%d\n",
                static_cast<long long>(args.payload), args.grouping.c_str(),
                static_cast<long long>(args.grouping == "fields" ? args.keys : 0),
                args.executors);
  }
  std::vector<double> base, unacked, acked, lat_rate, p50, p99, csw_un, csw_ack, csw_lat;
  for (int rep = 0; rep < args.reps; ++rep) {
    const double b = BaselineSpsc(args.baseline_items);
    const Result u = Throughput(false, args.tuples, 0);
    const Result a = Throughput(true, args.tuples / 2, args.max_pending);
    const Result l = Latency(a.tuples_per_sec * args.load, args.latency_secs, args.max_pending);
    std::printf(
        "rep %d: baseline %.2fM/s | unacked %.2fM/s (%.2f csw/1k) | acked %.2fM/s (%.2f csw/1k) | "
        "latency @%.0fk/s: p50 %lldus p99 %lldus (%.2f csw/1k)\n",
        rep, b / 1e6, u.tuples_per_sec / 1e6, u.csw_per_1000, a.tuples_per_sec / 1e6,
        a.csw_per_1000, l.tuples_per_sec / 1e3, static_cast<long long>(l.p50_us),
        static_cast<long long>(l.p99_us), l.csw_per_1000);
    if (non_default) {
      // Unrounded, for scripts: a 10 KB payload's rate is a few hundredths of M/s.
      std::printf("rep %d exact: baseline %.0f/s unacked %.0f/s acked %.0f/s latency @%.0f/s\n",
                  rep, b, u.tuples_per_sec, a.tuples_per_sec, l.tuples_per_sec);
    }
    std::fflush(stdout);
    base.push_back(b);
    unacked.push_back(u.tuples_per_sec);
    acked.push_back(a.tuples_per_sec);
    lat_rate.push_back(l.tuples_per_sec);
    p50.push_back(static_cast<double>(l.p50_us));
    p99.push_back(static_cast<double>(l.p99_us));
    csw_un.push_back(u.csw_per_1000);
    csw_ack.push_back(a.csw_per_1000);
    csw_lat.push_back(l.csw_per_1000);
  }
  std::printf(
      "median: baseline %.2fM/s | unacked %.2fM/s (%.2f csw/1k) | acked %.2fM/s (%.2f csw/1k) | "
      "latency @%.0fk/s: p50 %.0fus p99 %.0fus (%.2f csw/1k)\n",
      Median(base) / 1e6, Median(unacked) / 1e6, Median(csw_un), Median(acked) / 1e6,
      Median(csw_ack), Median(lat_rate) / 1e3, Median(p50), Median(p99), Median(csw_lat));
  if (!args.sweep.empty()) Sweep(args, Median(acked));
  return 0;
}
