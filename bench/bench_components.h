#ifndef TEMPEST_BENCH_BENCH_COMPONENTS_H_
#define TEMPEST_BENCH_BENCH_COMPONENTS_H_

// The spout and bolt the engine and cluster benchmarks run (spout -> bolt,
// one 100-byte bytes value per tuple), and small helpers they share.
// Benchmark code only: header-only, not part of any library.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/api/bolt.h"
#include "common/api/spout.h"

namespace tempest::bench {

using BenchClock = std::chrono::steady_clock;

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// What a run's spout and bolt share with the benchmark's main thread.
struct Shared {
  std::atomic<int64_t> received{0};
  std::atomic<int64_t> acked{0};
  int64_t count = 0;       // tuples to emit (-1: endless)
  double rate = 0;         // tuples/s, 0 = unlimited
  bool reliable = false;
  // Latency run: the spout times each tree itself (emit -> Ack) while
  // `measure` is set; written by the spout thread, read after Kill().
  bool time_trees = false;
  std::atomic<bool> measure{false};
  std::vector<int64_t> latencies_ns;
};

// Emits `count` tuples with one 100-byte bytes payload (plus a message id
// when reliable), optionally paced at `rate` from its activation.
class BenchSpout final : public api::Spout {
 public:
  explicit BenchSpout(Shared* s) : s_(s), payload_(100, 'x') {}
  absl::Status Open(const api::Config&, const api::TopologyContext&,
                    api::SpoutOutputCollector& c) override {
    collector_ = &c;
    start_ = BenchClock::now();
    return absl::OkStatus();
  }
  void Activate() override { start_ = BenchClock::now(); }
  void NextTuple() override {
    if (s_->count >= 0 && next_ >= s_->count) return;
    if (s_->rate > 0) {
      const double elapsed = std::chrono::duration<double>(BenchClock::now() - start_).count();
      if (static_cast<double>(next_) >= elapsed * s_->rate) return;
    }
    api::Values v;
    v.reserve(1);
    v.push_back(api::Value::OfBytes(payload_));
    if (s_->time_trees) {
      emit_ns_[next_ & kRingMask] = BenchClock::now().time_since_epoch().count();
    }
    if (s_->reliable) {
      collector_->Emit(std::move(v), api::MessageId(next_));
    } else {
      collector_->Emit(std::move(v));
    }
    ++next_;
  }
  void Ack(const api::MessageId& id) override {
    s_->acked.fetch_add(1, std::memory_order_relaxed);
    if (s_->time_trees && s_->measure.load(std::memory_order_relaxed)) {
      s_->latencies_ns.push_back(BenchClock::now().time_since_epoch().count() -
                                 emit_ns_[id.AsInt() & kRingMask]);
    }
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer& d) const override {
    d.Declare(api::Fields({"payload"}));
  }

 private:
  static constexpr int64_t kRingMask = (1 << 22) - 1;
  Shared* s_;
  std::vector<int64_t> emit_ns_ = std::vector<int64_t>(kRingMask + 1);
  std::string payload_;
  api::SpoutOutputCollector* collector_ = nullptr;
  BenchClock::time_point start_ = BenchClock::now();
  int64_t next_ = 0;
};

// Acks every tuple; publishes its count every 1024 tuples (exact at the
// end, since runs are multiples of 1024) to keep shared writes off the hot
// path.
class BenchBolt final : public api::Bolt {
 public:
  explicit BenchBolt(Shared* s) : s_(s) {}
  absl::Status Prepare(const api::Config&, const api::TopologyContext&,
                       api::OutputCollector& c) override {
    collector_ = &c;
    return absl::OkStatus();
  }
  void Execute(const api::Tuple& input) override {
    if (input.IsTick()) return;
    if (input.GetBytes(0).size() != 100) std::abort();
    collector_->Ack(input);
    if ((++local_ & 1023) == 0) s_->received.store(local_, std::memory_order_release);
  }
  void Cleanup() override { s_->received.store(local_, std::memory_order_release); }
  void DeclareOutputFields(api::OutputFieldsDeclarer&) const override {}

 private:
  Shared* s_;
  api::OutputCollector* collector_ = nullptr;
  int64_t local_ = 0;
};

// The median and 99th percentile of latencies in nanoseconds, in
// microseconds; sorts `ns`. Zeros when there are none.
struct LatencyPercentiles {
  int64_t p50_us = 0;
  int64_t p99_us = 0;
};
inline LatencyPercentiles Percentiles(std::vector<int64_t>& ns) {
  LatencyPercentiles p;
  if (ns.empty()) return p;
  std::sort(ns.begin(), ns.end());
  p.p50_us = ns[ns.size() / 2] / 1000;
  p.p99_us = ns[std::min(ns.size() - 1, ns.size() * 99 / 100)] / 1000;
  return p;
}

// Reads "--flag value" pairs from argv. `on_flag` applies one and returns
// false for a flag it does not know; then, or when a value is missing, the
// usage line is printed and the program exits with status 2.
inline void ParseFlags(int argc, char** argv, const char* usage,
                       const std::function<bool(const std::string&, const char*)>& on_flag) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc || !on_flag(flag, argv[i + 1])) {
      std::fprintf(stderr, "%s\n", usage);
      std::exit(2);
    }
    ++i;
  }
}

}  // namespace tempest::bench

#endif  // TEMPEST_BENCH_BENCH_COMPONENTS_H_
