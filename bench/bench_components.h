#ifndef TEMPEST_BENCH_BENCH_COMPONENTS_H_
#define TEMPEST_BENCH_BENCH_COMPONENTS_H_

// The spout and bolt the engine and cluster benchmarks run (spout -> bolt,
// one bytes value per tuple, 100 bytes unless set; optionally a key before it
// for fields grouping; any number of executors), and small helpers they share.
// Benchmark code only: header-only, not part of any library.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "boost/lockfree/spsc_queue.hpp"
#include "common/api/bolt.h"
#include "common/api/spout.h"

namespace tempest::bench {

using BenchClock = std::chrono::steady_clock;

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The same-run yardstick: a plain lock-free SPSC hand-off of `n` 100-byte
// items between two threads (boost::lockfree::spsc_queue, one push/pop per
// item); items/s.
struct SpscItem {
  uint32_t seq = 0;  // 32 bits keep the struct at exactly 100 bytes
  char payload[96] = {};
};
static_assert(sizeof(SpscItem) == 100);

inline double BaselineSpsc(int64_t n) {
  auto queue =
      std::make_unique<boost::lockfree::spsc_queue<SpscItem, boost::lockfree::capacity<8192>>>();
  const auto start = BenchClock::now();
  std::thread consumer([&] {
    SpscItem item;
    uint32_t expect = 0;
    while (expect < static_cast<uint32_t>(n)) {
      if (queue->pop(item)) {
        if (item.seq != expect) std::abort();
        ++expect;
      }
    }
  });
  SpscItem item;
  for (int64_t i = 0; i < n; ++i) {
    item.seq = static_cast<uint32_t>(i);
    while (!queue->push(item)) {
    }
  }
  consumer.join();
  return static_cast<double>(n) / std::chrono::duration<double>(BenchClock::now() - start).count();
}

// Most spout or bolt executors a run may have: one counter slot each.
inline constexpr int kMaxExecutors = 16;

// One counter on a cache line of its own, so that executors publishing
// their counts never contend (nor with the main thread beyond its polls).
struct alignas(64) CounterSlot {
  std::atomic<int64_t> value{0};
};

// The counts every spout (acked trees) and bolt (tuples received) publishes,
// one slot per executor (its task index within its component). Plain atomics
// and no pointers: a block in a MAP_SHARED mapping works across fork(), so
// executors in several processes can publish into one (cluster_bench).
struct Counters {
  CounterSlot received[kMaxExecutors];
  CounterSlot acked[kMaxExecutors];
  // Spouts record tree latencies while set (latency runs).
  std::atomic<bool> measure{false};

  static int64_t Sum(const CounterSlot (&slots)[kMaxExecutors]) {
    int64_t sum = 0;
    for (const CounterSlot& s : slots) sum += s.value.load(std::memory_order_acquire);
    return sum;
  }
  int64_t Received() const { return Sum(received); }
  int64_t Acked() const { return Sum(acked); }
};

// What a run's spouts and bolts share with the benchmark's main thread.
struct Shared {
  Counters own_counters;
  Counters* counters = &own_counters;  // or a block shared across processes
  int64_t count = 0;       // tuples to emit in all, split evenly over `spouts` (-1: endless)
  double rate = 0;         // tuples/s in all, 0 = unlimited
  bool reliable = false;
  int spouts = 1;          // spout executors sharing `count` and `rate`
  int64_t payload_bytes = 100;
  // > 0: tuples are (key, payload) with key = sequence % keys, for fields
  // grouping on "key"; 0: (payload) alone.
  int64_t keys = 0;
  // A bolt publishes its count when (count & publish_mask) == 0: every 1024
  // tuples keeps shared writes off the hot path when one bolt gets a
  // multiple of 1024; with several bolts (uneven shares) every tuple.
  int64_t publish_mask = 1023;
  // Latency run: each spout times each tree itself (emit -> Ack) while
  // counters->measure is set, into latencies_ns[its task index]; written by
  // the spout threads, read after Kill().
  bool time_trees = false;
  std::vector<int64_t> latencies_ns[kMaxExecutors];

  // All recorded latencies, merged.
  std::vector<int64_t> AllLatencies() const {
    std::vector<int64_t> all;
    for (const std::vector<int64_t>& v : latencies_ns) all.insert(all.end(), v.begin(), v.end());
    return all;
  }
};

// Emits its share of `count` tuples with one `payload_bytes` bytes payload
// (after a key when `keys` > 0; plus a message id when reliable), optionally
// paced at its share of `rate` from its activation.
class BenchSpout final : public api::Spout {
 public:
  explicit BenchSpout(Shared* s)
      : s_(s), payload_(static_cast<size_t>(s->payload_bytes), 'x') {}
  absl::Status Open(const api::Config&, const api::TopologyContext& context,
                    api::SpoutOutputCollector& c) override {
    collector_ = &c;
    start_ = BenchClock::now();
    index_ = context.ThisTaskIndex();
    if (index_ < 0 || index_ >= kMaxExecutors) std::abort();
    const int spouts = std::max(s_->spouts, 1);
    limit_ = s_->count < 0 ? -1 : s_->count / spouts;
    rate_ = s_->rate / spouts;
    keys_ = s_->keys;
    first_key_ = static_cast<int64_t>(index_) * std::max<int64_t>(limit_, 0);
    return absl::OkStatus();
  }
  void Activate() override { start_ = BenchClock::now(); }
  void NextTuple() override {
    if (limit_ >= 0 && next_ >= limit_) return;
    if (rate_ > 0) {
      const double elapsed = std::chrono::duration<double>(BenchClock::now() - start_).count();
      if (static_cast<double>(next_) >= elapsed * rate_) return;
    }
    api::Values v;
    v.reserve(keys_ > 0 ? 2 : 1);
    if (keys_ > 0) v.push_back(api::Value((first_key_ + next_) % keys_));
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
    s_->counters->acked[index_].value.fetch_add(1, std::memory_order_relaxed);
    if (s_->time_trees && s_->counters->measure.load(std::memory_order_relaxed)) {
      s_->latencies_ns[index_].push_back(BenchClock::now().time_since_epoch().count() -
                                         emit_ns_[id.AsInt() & kRingMask]);
    }
  }
  void DeclareOutputFields(api::OutputFieldsDeclarer& d) const override {
    d.Declare(s_->keys > 0 ? api::Fields({"key", "payload"}) : api::Fields({"payload"}));
  }

 private:
  static constexpr int64_t kRingMask = (1 << 22) - 1;
  Shared* s_;
  // Emit times by message id; allocated in every run (as before the other
  // settings existed), so that default runs stay comparable with older builds.
  std::vector<int64_t> emit_ns_ = std::vector<int64_t>(kRingMask + 1);
  std::string payload_;
  api::SpoutOutputCollector* collector_ = nullptr;
  BenchClock::time_point start_ = BenchClock::now();
  int index_ = 0;
  int64_t limit_ = -1;
  double rate_ = 0;
  int64_t keys_ = 0;  // Shared::keys, on this spout's own cache lines
  int64_t first_key_ = 0;
  int64_t next_ = 0;
};

// Acks every tuple and checks its payload's size; publishes its count per
// Shared::publish_mask (exact at the end of a run with one bolt, since
// such runs are multiples of 1024).
class BenchBolt final : public api::Bolt {
 public:
  explicit BenchBolt(Shared* s)
      : s_(s), payload_index_(s->keys > 0 ? 1 : 0),
        payload_bytes_(static_cast<size_t>(s->payload_bytes)), mask_(s->publish_mask) {}
  absl::Status Prepare(const api::Config&, const api::TopologyContext& context,
                       api::OutputCollector& c) override {
    collector_ = &c;
    const int index = context.ThisTaskIndex();
    if (index < 0 || index >= kMaxExecutors) std::abort();
    slot_ = &s_->counters->received[index].value;
    return absl::OkStatus();
  }
  void Execute(const api::Tuple& input) override {
    if (input.IsTick()) return;
    if (input.GetBytes(payload_index_).size() != payload_bytes_) std::abort();
    collector_->Ack(input);
    if ((++local_ & mask_) == 0) slot_->store(local_, std::memory_order_release);
  }
  void Cleanup() override { slot_->store(local_, std::memory_order_release); }
  void DeclareOutputFields(api::OutputFieldsDeclarer&) const override {}

 private:
  Shared* s_;
  int payload_index_;
  size_t payload_bytes_;
  int64_t mask_;
  std::atomic<int64_t>* slot_ = nullptr;
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

// Parses a --sweep list "F1,F2,..." of positive fractions; prints why and
// exits with status 2 when it is not one.
inline std::vector<double> ParseFractions(const char* program, const char* list) {
  std::vector<double> out;
  for (const char* p = list; *p != '\0';) {
    char* end = nullptr;
    const double f = std::strtod(p, &end);
    if (end == p || f <= 0 || (*end != ',' && *end != '\0')) {
      std::fprintf(stderr, "%s: --sweep wants positive fractions F1,F2,...: %s\n", program, list);
      std::exit(2);
    }
    out.push_back(f);
    p = *end == ',' ? end + 1 : end;
  }
  return out;
}

}  // namespace tempest::bench

#endif  // TEMPEST_BENCH_BENCH_COMPONENTS_H_
