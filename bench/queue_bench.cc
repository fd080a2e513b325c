// Queue and ack-ledger micro-benchmarks (worker/, common/core/).
//
// Prints, per repetition and as medians:
//   (a) a plain lock-free SPSC hand-off of 100-byte items (boost::lockfree::
//       spsc_queue, one push and one pop per item): the baseline;
//   (b) worker::SpscRing with batch push/pop;
//   (c) worker::ReceiveQueue with 1 and 2 producers (blocking, spin→yield→park),
//       with parks/wakes and context switches per 1000 items;
//   (d) core::AckLedger init + 2 acks (+ erase on completion) per tree with
//       100k trees in flight, next to ledgers on core::RotatingMap (3 absl
//       maps), a plain absl::flat_hash_map and std::unordered_map doing the
//       same work.
//
// Usage: queue_bench [--items N] [--reps R] [--pin] [--only queues|ledger]
// Not a test: it asserts only that every item arrived (and aborts otherwise).

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "boost/lockfree/spsc_queue.hpp"
#include "common/core/ack_ledger.h"
#include "common/core/rotating_map.h"
#include "worker/receive_queue.h"
#include "worker/spsc_ring.h"
#include "worker/wait_strategy.h"

namespace {

using SteadyClock = std::chrono::steady_clock;

// A tuple-sized item: a 64-bit sequence number (as two 32-bit halves, so the
// struct stays exactly 100 bytes) plus 92 bytes of payload.
struct Item {
  uint32_t seq_lo = 0;
  uint32_t seq_hi = 0;
  char payload[92] = {};

  uint64_t seq() const { return (uint64_t{seq_hi} << 32) | seq_lo; }
  void set_seq(uint64_t s) {
    seq_lo = static_cast<uint32_t>(s);
    seq_hi = static_cast<uint32_t>(s >> 32);
  }
};
static_assert(sizeof(Item) == 100);

bool g_pin = false;

void PinTo(int cpu) {
  if (!g_pin) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu % std::max(1u, std::thread::hardware_concurrency()), &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int64_t ContextSwitches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw + usage.ru_nivcsw;
}

// Busy-wait used by the spinning baselines (a) and (b): pause, and give the
// core away every 64 failed polls so a spinning thread cannot burn a whole
// time slice while the thread it waits for sits on the same (shared) core.
class Backoff {
 public:
  void Pause() {
    if (++polls_ < 64) {
      tempest::worker::CpuRelax();
    } else {
      polls_ = 0;
      std::this_thread::yield();
    }
  }

 private:
  int polls_ = 0;
};

double Seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

struct QueueResult {
  double items_per_sec = 0;
  double consumer_parks_per_k = 0;
  double consumer_wakes_per_k = 0;
  double producer_parks_per_k = 0;
  double producer_wakes_per_k = 0;
  double ctx_switches_per_k = 0;
};

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "queue_bench: %s\n", what);
  std::abort();
}

// Checks the consumer saw each producer's sequence in order with none missing.
void CheckSum(uint64_t sum, uint64_t items_per_producer, int producers) {
  const uint64_t expected = producers * (items_per_producer * (items_per_producer - 1) / 2);
  if (sum != expected) Die("checksum mismatch: items lost or duplicated");
}

// (a) Baseline: one push and one pop per item, both sides busy-poll.
QueueResult BenchBoostSpsc(uint64_t items) {
  auto queue =
      std::make_unique<boost::lockfree::spsc_queue<Item, boost::lockfree::capacity<4096>>>();
  const int64_t cs0 = ContextSwitches();
  const auto start = SteadyClock::now();
  std::thread producer([&] {
    PinTo(0);
    Item item;
    Backoff backoff;
    for (uint64_t i = 0; i < items; ++i) {
      item.set_seq(i);
      while (!queue->push(item)) backoff.Pause();
    }
  });
  PinTo(1);
  uint64_t sum = 0;
  Item item;
  Backoff backoff;
  for (uint64_t got = 0; got < items;) {
    if (queue->pop(item)) {
      sum += item.seq();
      ++got;
    } else {
      backoff.Pause();
    }
  }
  producer.join();
  const double secs = Seconds(SteadyClock::now() - start);
  CheckSum(sum, items, 1);
  QueueResult r;
  r.items_per_sec = items / secs;
  r.ctx_switches_per_k = 1000.0 * (ContextSwitches() - cs0) / items;
  return r;
}

// (b) SpscRing, producer pushes batches of 128, consumer pops up to 256.
QueueResult BenchSpscRingBatched(uint64_t items) {
  constexpr size_t kBatch = 128;
  tempest::worker::SpscRing<Item> ring(4096);
  const int64_t cs0 = ContextSwitches();
  const auto start = SteadyClock::now();
  std::thread producer([&] {
    PinTo(0);
    std::vector<Item> batch(kBatch);
    Backoff backoff;
    for (uint64_t next = 0; next < items;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(kBatch, items - next));
      for (size_t i = 0; i < n; ++i) batch[i].set_seq(next + i);
      size_t done = 0;
      while (done < n) {
        const size_t pushed = ring.TryPushBatch(batch.data() + done, n - done);
        if (pushed == 0) backoff.Pause();
        done += pushed;
      }
      next += n;
    }
  });
  PinTo(1);
  uint64_t sum = 0;
  Backoff backoff;
  for (uint64_t got = 0; got < items;) {
    const size_t n = ring.ConsumeBatch(256, [&sum](Item& item) { sum += item.seq(); });
    if (n == 0) backoff.Pause();
    got += n;
  }
  producer.join();
  const double secs = Seconds(SteadyClock::now() - start);
  CheckSum(sum, items, 1);
  QueueResult r;
  r.items_per_sec = items / secs;
  r.ctx_switches_per_k = 1000.0 * (ContextSwitches() - cs0) / items;
  return r;
}

// (c) ReceiveQueue with `producers` producer threads pushing one item at a
// time (batch 128 in place), consumer draining up to 256 with the blocking
// Drain (spin → yield → park).
QueueResult BenchReceiveQueue(uint64_t items, int producers) {
  tempest::worker::ReceiveQueueOptions options;
  options.ring_capacity = 4096;
  options.batch_size = 128;
  options.max_producers = static_cast<size_t>(producers);
  auto queue = *tempest::worker::ReceiveQueue<Item>::Create(options);
  std::vector<tempest::worker::ReceiveQueue<Item>::Producer*> handles;
  for (int p = 0; p < producers; ++p) handles.push_back(*queue->RegisterProducer());
  const uint64_t per_producer = items / producers;
  const uint64_t total = per_producer * producers;
  const int64_t cs0 = ContextSwitches();
  const auto start = SteadyClock::now();
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      PinTo(p);
      Item item;
      for (uint64_t i = 0; i < per_producer; ++i) {
        item.set_seq(i);
        if (!handles[p]->Push(item).ok()) Die("push failed");
      }
      if (!handles[p]->Flush().ok()) Die("flush failed");
    });
  }
  PinTo(1);
  uint64_t sum = 0;
  for (uint64_t got = 0; got < total;) {
    const size_t n = queue->Drain(
        256, [&sum](Item& item) { sum += item.seq(); }, std::nullopt);
    if (n == 0) Die("queue closed unexpectedly");
    got += n;
  }
  for (auto& t : threads) t.join();
  const double secs = Seconds(SteadyClock::now() - start);
  CheckSum(sum, per_producer, producers);
  const auto stats = queue->Stats();
  QueueResult r;
  r.items_per_sec = total / secs;
  r.consumer_parks_per_k = 1000.0 * stats.consumer_parks / total;
  r.consumer_wakes_per_k = 1000.0 * stats.consumer_wakes / total;
  r.producer_parks_per_k = 1000.0 * stats.producer_parks / total;
  r.producer_wakes_per_k = 1000.0 * stats.producer_wakes / total;
  r.ctx_switches_per_k = 1000.0 * (ContextSwitches() - cs0) / total;
  return r;
}

// splitmix64: cheap, well-mixed stand-in for the random 64-bit ids.
uint64_t NextId(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// (d) Sliding window of `in_flight` trees: start tree i (init with e1^e2),
// then ack both edges of tree i - in_flight, which completes and erases it.
// `rotate_every` > 0 also ticks the ledger, so lookups hit older buckets too.
template <typename Ledger>
double BenchLedger(uint64_t trees, size_t in_flight, uint64_t rotate_every) {
  struct Tree {
    uint64_t root, e1, e2;
  };
  std::vector<Tree> window(in_flight);
  Ledger ledger;
  uint64_t rng = 42;
  uint64_t completed = 0;
  const auto start = SteadyClock::now();
  for (uint64_t i = 0; i < trees + in_flight; ++i) {
    Tree& slot = window[i % in_flight];
    if (i >= in_flight) {
      ledger.Ack(slot.root, slot.e1);
      completed += ledger.Ack(slot.root, slot.e2);
    }
    if (i < trees) {
      slot = {NextId(rng), NextId(rng), NextId(rng)};
      ledger.Init(slot.root, slot.e1 ^ slot.e2, 7);
    }
    if (rotate_every != 0 && i % rotate_every == rotate_every - 1) ledger.Rotate();
  }
  const double secs = Seconds(SteadyClock::now() - start);
  if (completed != trees) Die("ledger lost or duplicated a tree");
  return secs * 1e9 / trees;
}

// Adapters giving the three ledgers one interface; Ack returns 1 on completion.
struct AckLedgerAdapter {
  tempest::core::AckLedger ledger;
  void Init(uint64_t root, uint64_t value, int32_t task) { ledger.Init(root, value, task); }
  int Ack(uint64_t root, uint64_t value) {
    return ledger.Ack(root, value).outcome == tempest::core::AckOutcome::kCompleted ? 1 : 0;
  }
  void Rotate() {
    if (!ledger.Rotate().empty()) Die("tree expired in benchmark");
  }
};

struct PlainEntry {
  uint64_t value = 0;
  int32_t task = -1;
};

template <typename Map>
struct PlainMapLedger {
  using Entry = PlainEntry;
  Map map;
  void Init(uint64_t root, uint64_t value, int32_t task) {
    Entry& e = map[root];
    e.value ^= value;
    e.task = task;
    if (e.value == 0) map.erase(root);
  }
  int Ack(uint64_t root, uint64_t value) {
    auto it = map.find(root);
    if (it == map.end()) it = map.emplace(root, Entry{}).first;
    it->second.value ^= value;
    if (it->second.value == 0 && it->second.task >= 0) {
      map.erase(it);
      return 1;
    }
    return 0;
  }
  void Rotate() {}
};

// The same ledger on core::RotatingMap (3 absl maps, Storm's layout): what
// AckLedger would cost without its single open-addressing table.
struct RotatingMapLedger {
  tempest::core::RotatingMap<uint64_t, PlainEntry> map{3};
  void Init(uint64_t root, uint64_t value, int32_t task) {
    map.Upsert(root, [&](PlainEntry& e) {
      e.value ^= value;
      e.task = task;
      return e.value == 0;
    });
  }
  int Ack(uint64_t root, uint64_t value) {
    return map.Upsert(root, [&](PlainEntry& e) {
      e.value ^= value;
      return e.value == 0 && e.task >= 0;
    });
  }
  void Rotate() {
    if (!map.Rotate().empty()) Die("tree expired in benchmark");
  }
};

using AbslLedger = PlainMapLedger<absl::flat_hash_map<uint64_t, PlainEntry>>;
using StdLedger = PlainMapLedger<std::unordered_map<uint64_t, PlainEntry>>;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void PrintQueue(const char* name, const std::vector<QueueResult>& runs, bool waits) {
  std::vector<double> rate, cp, cw, pp, pw, cs;
  for (const auto& r : runs) {
    rate.push_back(r.items_per_sec);
    cp.push_back(r.consumer_parks_per_k);
    cw.push_back(r.consumer_wakes_per_k);
    pp.push_back(r.producer_parks_per_k);
    pw.push_back(r.producer_wakes_per_k);
    cs.push_back(r.ctx_switches_per_k);
  }
  std::printf("%-34s median %7.2f M items/s  (runs:", name, Median(rate) / 1e6);
  for (double x : rate) std::printf(" %.2f", x / 1e6);
  std::printf(")\n");
  if (waits) {
    std::printf(
        "%-34s per 1000 items: consumer parks %.3f wakes %.3f, producer parks %.3f wakes %.3f\n",
        "", Median(cp), Median(cw), Median(pp), Median(pw));
  }
  std::printf("%-34s context switches per 1000 items: %.3f\n", "", Median(cs));
}

void PrintLedger(const char* name, const std::vector<double>& ns) {
  std::printf("%-34s median %6.1f ns/tree (%5.1f M trees/s)  (runs:", name, Median(ns),
              1e3 / Median(ns));
  for (double x : ns) std::printf(" %.1f", x);
  std::printf(")\n");
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t items = 20'000'000;
  int reps = 5;
  std::string only;  // "queues" or "ledger" to run one half
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--items" && i + 1 < argc) {
      items = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--pin") {
      g_pin = true;
    } else {
      std::fprintf(stderr, "usage: %s [--items N] [--reps R] [--pin] [--only queues|ledger]\n",
                   argv[0]);
      return 2;
    }
  }
  std::printf("queue_bench: %llu items of %zu bytes per measurement, %d reps, %s\n",
              static_cast<unsigned long long>(items), sizeof(Item), reps,
              g_pin ? "threads pinned (producer cpu0, consumer cpu1)" : "threads not pinned");

  std::vector<QueueResult> boost_runs, ring_runs, rq1_runs, rq2_runs;
  std::vector<double> ledger_runs, ledger_rot_runs, rotmap_runs, absl_runs, std_runs;
  constexpr size_t kInFlight = 100'000;
  const uint64_t trees = 10'000'000;
  // Interleave the cases so slow phases of the shared machine hit all alike.
  const bool queues = only.empty() || only == "queues";
  const bool ledgers = only.empty() || only == "ledger";
  for (int rep = 0; rep < reps; ++rep) {
    if (queues) {
      boost_runs.push_back(BenchBoostSpsc(items));
      ring_runs.push_back(BenchSpscRingBatched(items));
      rq1_runs.push_back(BenchReceiveQueue(items, 1));
      rq2_runs.push_back(BenchReceiveQueue(items, 2));
    }
    if (ledgers) {
      ledger_runs.push_back(BenchLedger<AckLedgerAdapter>(trees, kInFlight, 0));
      ledger_rot_runs.push_back(BenchLedger<AckLedgerAdapter>(trees, kInFlight, kInFlight / 2));
      rotmap_runs.push_back(BenchLedger<RotatingMapLedger>(trees, kInFlight, 0));
      absl_runs.push_back(BenchLedger<AbslLedger>(trees, kInFlight, 0));
      std_runs.push_back(BenchLedger<StdLedger>(trees, kInFlight, 0));
    }
    std::fprintf(stderr, "rep %d done\n", rep + 1);
  }
  if (queues) {
    std::printf("\n");
    PrintQueue("(a) boost spsc_queue, per item", boost_runs, false);
    PrintQueue("(b) SpscRing, batch 128/256", ring_runs, false);
    PrintQueue("(c) ReceiveQueue, 1 producer", rq1_runs, true);
    PrintQueue("(c) ReceiveQueue, 2 producers", rq2_runs, true);
  }
  if (ledgers) {
    std::printf("\n(d) ack ledger, init + 2 acks + erase, %zu trees in flight, %llu trees\n",
                kInFlight, static_cast<unsigned long long>(trees));
    PrintLedger("AckLedger (open addressing)", ledger_runs);
    PrintLedger("AckLedger, rotate every 50k trees", ledger_rot_runs);
    PrintLedger("RotatingMap<absl> ledger, 3 buckets", rotmap_runs);
    PrintLedger("plain absl::flat_hash_map", absl_runs);
    PrintLedger("plain std::unordered_map", std_runs);
  }
  return 0;
}
