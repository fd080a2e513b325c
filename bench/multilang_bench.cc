// Multilang overhead: tuples/s through a Python pass-through bolt
// (bench/multilang/passthrough.py via ShellBolt) versus the same topology with
// a native C++ pass-through bolt, in one LocalCluster each, same process.
//
//   SequenceSpout (N tuples: seq, key, 100-byte payload; reliable)
//     -> pass-through (Python ShellBolt | native tempest.IdentityBolt)
//     -> acking sink
//
// Acking is on; throughput is N divided by the time from Start until every
// tuple tree is complete. Each rep runs both paths, alternating which goes
// first; the figures printed last are the medians over reps.
//
// Usage: multilang_bench [--reps R] [--tuples N] [--max-pending P]
//                        [--python-tuples M]   (default: N / 4 for Python)
//                        [--no-task-ids]       (the Python emit awaits no reply)
// By default every Python emit blocks until its task ids arrive, as with
// Storm's storm.py, so the figure includes one round trip per tuple.
// Run from the repository root (the Python script path is relative to it),
// or set TEMPEST_SOURCE_DIR.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bolts/builtin_bolts.h"
#include "common/api/component_registry.h"
#include "spdlog/spdlog.h"
#include "spout/builtin_spouts.h"
#include "worker/local_cluster.h"
#include "worker/testing/topology_builder.h"

namespace tempest {
namespace {

using SteadyClock = std::chrono::steady_clock;

class AckSink final : public api::Bolt {
 public:
  absl::Status Prepare(const api::Config&, const api::TopologyContext&,
                       api::OutputCollector& collector) override {
    collector_ = &collector;
    return absl::OkStatus();
  }
  void Execute(const api::Tuple& input) override { collector_->Ack(input); }
  void DeclareOutputFields(api::OutputFieldsDeclarer&) const override {}

 private:
  api::OutputCollector* collector_ = nullptr;
};

api::Value StringList(std::vector<std::string> items) {
  api::ValueList list;
  for (std::string& s : items) list.emplace_back(std::move(s));
  return api::Value(std::move(list));
}

// Returns tuples/s, or a negative number on failure.
double RunOnce(const api::ComponentRegistry& registry, bool python, int64_t tuples,
               int64_t max_pending, const std::string& source_dir, bool task_ids) {
  worker::testing::TopologyBuilder b(python ? "multilang-python" : "multilang-native");
  b.SetSpout("spout", "tempest.SequenceSpout");
  b.SetBolt("pass", python ? "tempest.ShellBolt" : "tempest.IdentityBolt").ShuffleGrouping("spout");
  b.SetBolt("sink", "bench.AckSink").ShuffleGrouping("pass");
  b.Config(api::kTopologyMaxSpoutPending, api::Value(max_pending));
  b.Config(api::kTopologyMessageTimeoutSecs, api::Value(300));
  core::TopologyDef def = b.Build();
  def.spouts[0].args.properties["count"] = api::Value(tuples);
  def.spouts[0].args.properties["payloadBytes"] = api::Value(100);
  if (python) {
    std::vector<std::string> command = {"python3",
                                        source_dir + "/bench/multilang/passthrough.py"};
    if (!task_ids) command.push_back("--no-task-ids");
    def.bolts[0].args.constructor_args = {StringList(std::move(command)),
                                          StringList({"seq", "key", "payload"})};
  }
  worker::LocalClusterOptions options;
  options.registry = &registry;
  auto cluster = worker::LocalCluster::Create(std::move(def), options);
  if (!cluster.ok()) {
    std::fprintf(stderr, "create: %s\n", cluster.status().ToString().c_str());
    return -1;
  }
  const SteadyClock::time_point start = SteadyClock::now();
  if (absl::Status s = (*cluster)->Start(); !s.ok()) {
    std::fprintf(stderr, "start: %s\n", s.ToString().c_str());
    return -1;
  }
  const bool finished = (*cluster)->WaitFinished(std::chrono::seconds(600));
  const double secs = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const worker::LocalClusterStats stats = (*cluster)->Stats();
  (void)(*cluster)->Kill(std::chrono::seconds(5));
  if (!finished || stats.acked < tuples) {
    std::fprintf(stderr, "%s run did not finish: acked %lld of %lld\n",
                 python ? "python" : "native", static_cast<long long>(stats.acked),
                 static_cast<long long>(tuples));
    return -1;
  }
  return static_cast<double>(tuples) / secs;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace
}  // namespace tempest

int main(int argc, char** argv) {
  using namespace tempest;
  int reps = 3;
  int64_t tuples = 400000;
  int64_t python_tuples = -1;
  int64_t max_pending = 5000;
  bool task_ids = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) std::exit(2);
      return argv[++i];
    };
    if (a == "--reps") {
      reps = std::atoi(next());
    } else if (a == "--tuples") {
      tuples = std::atoll(next());
    } else if (a == "--python-tuples") {
      python_tuples = std::atoll(next());
    } else if (a == "--max-pending") {
      max_pending = std::atoll(next());
    } else if (a == "--no-task-ids") {
      task_ids = false;
    } else {
      std::fprintf(stderr,
                   "usage: multilang_bench [--reps R] [--tuples N] [--python-tuples M] "
                   "[--max-pending P] [--no-task-ids]\n");
      return 2;
    }
  }
  if (python_tuples < 0) python_tuples = tuples / 4;
  const char* src = std::getenv("TEMPEST_SOURCE_DIR");
  const std::string source_dir = src != nullptr ? src : ".";
  spdlog::set_level(spdlog::level::warn);
  api::ComponentRegistry registry;
  (void)bolts::RegisterBuiltinBolts(registry);
  (void)spout::RegisterBuiltinSpouts(registry);
  (void)registry.RegisterBolt("bench.AckSink", &api::registry_internal::Make<api::Bolt, AckSink>);

  std::vector<double> native, python, ratio;
  for (int r = 0; r < reps; ++r) {
    double n = 0, p = 0;
    for (int k = 0; k < 2; ++k) {
      const bool run_python = (k == 0) == (r % 2 == 1);
      const double rate = RunOnce(registry, run_python, run_python ? python_tuples : tuples,
                                  max_pending, source_dir, task_ids);
      if (rate < 0) return 1;
      (run_python ? p : n) = rate;
    }
    native.push_back(n);
    python.push_back(p);
    ratio.push_back(p / n);
    std::printf("rep %d: native %.0f tuples/s, python %.0f tuples/s, python/native %.3f\n", r, n,
                p, p / n);
    std::fflush(stdout);
  }
  std::printf("median: native %.0f tuples/s, python %.0f tuples/s, python/native %.3f\n",
              Median(native), Median(python), Median(ratio));
  return 0;
}
