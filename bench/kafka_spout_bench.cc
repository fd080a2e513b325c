// KafkaSpout throughput vs a bare librdkafka consumer on the same DevKafka
// partitions, in the same process and run. The spout runs AT_LEAST_ONCE,
// every tuple is acked right after NextTuple returns (a fake collector
// stands in for the executor), and offsets are committed to a standalone
// ZooKeeper. Prints per-run figures, medians, and the ZooKeeper multis sent
// per commit interval.
//
//   kafka_spout_bench [--partitions 16] [--records-per-partition 30000]
//                     [--value-bytes 100] [--runs 5] [--interval-ms 200]
//                     [--journal-max-entries N (0: journal off)]
//
// The baseline includes librdkafka directly (the only place outside spout/
// and bolts/ that does): it is the thing being compared against.
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api/spout_output_collector.h"
#include "common/api/topology_context.h"
#include "spdlog/spdlog.h"
#include "common/kafka/dev_kafka_cluster.h"
#include "spout/kafka/kafka_spout.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/offset_journal.h"
#include "spout/kafka/offsets/zk_offset_store.h"
#include "tests/support/zk_ensemble.h"

namespace {

using SteadyClock = std::chrono::steady_clock;

// CPU time of the calling thread (the "executor"), to compare per-record cost
// independently of how busy the machine is.
double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
using tempest::spout::KafkaSpout;

struct Args {
  int partitions = 16;
  int records = 30'000;  // per partition; DevKafka keeps ~5 MiB per partition
  int value_bytes = 100;
  int runs = 5;
  int interval_ms = 200;
  // -1: the spout's default bound; 0 turns the journal off, for a same-run
  // baseline of what the journal costs on the commit path.
  int journal_max_entries = -1;
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (k == "--partitions") a.partitions = v;
    if (k == "--records-per-partition") a.records = v;
    if (k == "--value-bytes") a.value_bytes = v;
    if (k == "--runs") a.runs = v;
    if (k == "--interval-ms") a.interval_ms = v;
    if (k == "--journal-max-entries") a.journal_max_entries = v;
  }
  return a;
}

bool Produce(const std::string& bootstrap, const Args& a) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof(err));
  rd_kafka_conf_set(conf, "linger.ms", "20", err, sizeof(err));
  rd_kafka_conf_set(conf, "queue.buffering.max.messages", "1000000", err, sizeof(err));
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (rk == nullptr) return false;
  const std::string value(a.value_bytes, 'v');
  for (int p = 0; p < a.partitions; ++p) {
    for (int i = 0; i < a.records; ++i) {
      const std::string key = absl::StrCat(i);
      while (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("bench"), RD_KAFKA_V_PARTITION(p),
                               RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                               RD_KAFKA_V_KEY(key.data(), key.size()),
                               RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                               RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk, 10);
      }
    }
  }
  const bool ok = rd_kafka_flush(rk, 120'000) == RD_KAFKA_RESP_ERR_NO_ERROR;
  rd_kafka_destroy(rk);
  return ok;
}

// The baseline: librdkafka's partition consumer over one queue, the same
// fetch settings the spout's reader uses, touching every record.
struct Rates {
  double cpu_ns = 0;  // consuming thread's CPU per record
  double total = 0;   // records / (start .. last record)
  double steady = 0;  // records / (first record .. last record)
};

Rates BareConsumer(const std::string& bootstrap, const Args& a) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::vector<std::pair<const char*, const char*>> props = {
      {"queued.max.messages.kbytes", "65536"},
      {"queued.min.messages", "1000000"},
      {"fetch.wait.max.ms", "100"},
      {"log_level", "3"}};
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), err, sizeof(err));
  for (auto [k, v] : props) rd_kafka_conf_set(conf, k, v, err, sizeof(err));
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, "bench", nullptr);
  const int64_t total = int64_t{a.partitions} * a.records;
  const auto start = SteadyClock::now();
  const double cpu0 = ThreadCpuSeconds();
  for (int p = 0; p < a.partitions; ++p) rd_kafka_consume_start_queue(rkt, p, 0, q);
  int64_t got = 0;
  uint64_t checksum = 0;
  SteadyClock::time_point first{};
  rd_kafka_message_t* batch[2048];
  while (got < total) {
    ssize_t n = rd_kafka_consume_batch_queue(q, 100, batch, 2048);
    for (ssize_t i = 0; i < n; ++i) {
      if (batch[i]->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (got++ == 0) first = SteadyClock::now();
        checksum += batch[i]->len + static_cast<uint64_t>(batch[i]->offset);
      }
      rd_kafka_message_destroy(batch[i]);
    }
  }
  const auto end = SteadyClock::now();
  const double secs = std::chrono::duration<double>(end - start).count();
  const double steady = std::chrono::duration<double>(end - first).count();
  for (int p = 0; p < a.partitions; ++p) rd_kafka_consume_stop(rkt, p);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
  if (checksum == 0) std::printf("(empty)\n");
  return {(ThreadCpuSeconds() - cpu0) * 1e9 / static_cast<double>(total),
          static_cast<double>(total) / secs, static_cast<double>(total) / steady};
}

// Acks every tracked tuple right after NextTuple, like an instant topology.
class AckingCollector final : public tempest::api::SpoutOutputCollector {
 public:
  std::vector<tempest::api::MessageId> ids;
  int64_t emitted = 0;
  void ReportError(const absl::Status& e) override {
    std::fprintf(stderr, "spout error: %s\n", e.ToString().c_str());
  }
  int64_t PendingCount() const override { return static_cast<int64_t>(ids.size()); }

 protected:
  void DoEmit(const tempest::api::StreamId&, tempest::api::Values, tempest::api::MessageId id,
              std::vector<tempest::api::TaskId>*) override {
    ++emitted;
    ids.push_back(std::move(id));
  }
  void DoEmitDirect(tempest::api::TaskId, const tempest::api::StreamId&, tempest::api::Values,
                    tempest::api::MessageId) override {}
};

struct SpoutRun {
  double cpu_ns = 0;
  double rate = 0;
  double steady = 0;
  int64_t multis = 0;
  int64_t journal_entries = 0;  // offset journal nodes left after the run (all partitions)
  int64_t trims = 0;            // journal trim passes (off the commit path)
  double seconds = 0;
  double first = 0;  // seconds from Open to the first tuple
};

// How many offset journal entries the spout left under `root` (read after the
// run, outside the measured time).
int64_t JournalEntries(const std::string& zk, const std::string& root, int partitions) {
  tempest::coord::ZkSession::Options o;
  o.connect_string = zk;
  o.create_chroot = false;
  auto session = tempest::coord::ZkSession::Create(o);
  if (!session.ok() || !(*session)->WaitConnected(std::chrono::seconds(10)).ok()) return -1;
  int64_t n = 0;
  for (int p = 0; p < partitions; ++p) {
    auto children = (*session)->Children(
        tempest::spout::JournalDirPath(root, "spout", "bench", p, false));
    if (children.ok()) n += static_cast<int64_t>(children->size());
  }
  return n;
}

SpoutRun SpoutConsumer(const std::string& bootstrap, const std::string& zk, const Args& a,
                       int run) {
  tempest::api::ComponentArgs args;
  args.class_name = "tempest.KafkaSpout";
  args.id = tempest::api::ComponentId("kafka");
  args.properties = {{"bootstrap.servers", bootstrap},
                     {"topics", "bench"},
                     {"zkRoot", absl::StrCat("/bench-", run)},
                     {"id", "spout"},
                     {"zkServers", zk},
                     {"stateUpdateIntervalMs", a.interval_ms},
                     {"stopAtEnd", true}};
  auto config = tempest::spout::ParseKafkaSpoutArgs(args);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().ToString().c_str());
    std::exit(1);
  }
  auto info = std::make_shared<tempest::api::TopologyInfo>();
  info->topology_id = "bench-1-1";
  info->topology_name = "bench";
  if (a.journal_max_entries >= 0) {
    info->config.Set(tempest::spout::kJournalMaxEntriesKey, int64_t{a.journal_max_entries});
  }
  const tempest::api::ComponentId comp("kafka");
  info->task_to_component[tempest::api::TaskId(1)] = comp;
  info->component_tasks[comp] = {tempest::api::TaskId(1)};
  tempest::api::TopologyContext ctx(info, tempest::api::TaskId(1));
  KafkaSpout spout(std::move(*config));
  AckingCollector collector;
  const int64_t total = int64_t{a.partitions} * a.records;
  const auto start = SteadyClock::now();
  const double cpu0 = ThreadCpuSeconds();
  if (absl::Status s = spout.Open(ctx.config(), ctx, collector); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    std::exit(1);
  }
  double secs = 0, first = 0;
  while (!spout.IsExhausted()) {
    spout.NextTuple();
    for (const auto& id : collector.ids) spout.Ack(id);
    collector.ids.clear();
    if (first == 0 && collector.emitted > 0) {
      first = std::chrono::duration<double>(SteadyClock::now() - start).count();
    }
    if (secs == 0 && collector.emitted >= total) {
      secs = std::chrono::duration<double>(SteadyClock::now() - start).count();
    }
    if (SteadyClock::now() - start > std::chrono::seconds(300)) {
      std::fprintf(stderr, "spout run timed out at %ld tuples\n",
                   static_cast<long>(collector.emitted));
      std::exit(1);
    }
  }
  const double total_secs = std::chrono::duration<double>(SteadyClock::now() - start).count();
  SpoutRun r;
  r.cpu_ns = (ThreadCpuSeconds() - cpu0) * 1e9 / static_cast<double>(total);
  r.rate = static_cast<double>(total) / secs;
  r.steady = static_cast<double>(total) / (secs - first);
  r.multis = spout.offset_store()->multi_count();
  r.trims = spout.offset_store()->journal_trim_count();
  r.seconds = total_secs;
  r.first = first;
  spout.Close();
  r.journal_entries = JournalEntries(zk, absl::StrCat("/bench-", run), a.partitions);
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  spdlog::set_level(spdlog::level::warn);
  auto zk = tempest::testing::ZkEnsemble::Start();
  if (!zk.ok()) {
    std::fprintf(stderr, "zookeeper: %s\n", zk.status().ToString().c_str());
    return 1;
  }
  auto kafka = tempest::kafka::DevKafkaCluster::Create(1, {{"bench", a.partitions}});
  if (!kafka.ok()) {
    std::fprintf(stderr, "kafka: %s\n", kafka.status().ToString().c_str());
    return 1;
  }
  const std::string bootstrap = (*kafka)->bootstrap_servers();
  if (!Produce(bootstrap, a)) {
    std::fprintf(stderr, "produce failed\n");
    return 1;
  }
  const int64_t total = int64_t{a.partitions} * a.records;
  std::printf("kafka_spout_bench: %d partitions x %d records of %d B = %ld records\n", a.partitions,
              a.records, a.value_bytes, static_cast<long>(total));
  std::vector<double> bare, spout, bare_steady, spout_steady, ratio, ratio_steady, per_interval;
  for (int run = 0; run < a.runs; ++run) {
    const Rates b = BareConsumer(bootstrap, a);
    const SpoutRun s = SpoutConsumer(bootstrap, (*zk)->ConnectString(), a, run);
    bare.push_back(b.total);
    spout.push_back(s.rate);
    bare_steady.push_back(b.steady);
    spout_steady.push_back(s.steady);
    ratio.push_back(s.rate / b.total);
    ratio_steady.push_back(s.steady / b.steady);
    const double intervals = s.seconds * 1000.0 / a.interval_ms;
    per_interval.push_back(s.multis / std::max(1.0, intervals));
    std::printf(
        "run %d: from start: bare %.0f rec/s, spout %.0f rec/s (%.2fx); first to last "
        "record: bare %.0f, spout %.0f (%.2fx); spout first tuple after %.0f ms; "
        "ZooKeeper multis %ld over %.1f s = %.2f per %d ms interval (incl. the final "
        "commit); executor CPU per record: bare %.0f ns, spout %.0f ns\n",
        run, b.total, s.rate, s.rate / b.total, b.steady, s.steady, s.steady / b.steady,
        s.first * 1000, static_cast<long>(s.multis), s.seconds, s.multis / std::max(1.0, intervals),
        a.interval_ms, b.cpu_ns, s.cpu_ns);
    std::printf("run %d: offset journal: %ld entries left (one per acquisition, in the owner "
                "node's create, and one per partition per commit, in the commit multi), %ld "
                "trim passes\n",
                run, static_cast<long>(s.journal_entries), static_cast<long>(s.trims));
  }
  std::printf("median ZooKeeper multis per %d ms commit interval: %.2f\n", a.interval_ms,
              Median(per_interval));
  std::printf(
      "median from start: bare %.0f rec/s, spout %.0f rec/s, ratio %.2f (median of "
      "per-run ratios %.2f; target >= 0.80)\n",
      Median(bare), Median(spout), Median(spout) / Median(bare), Median(ratio));
  std::printf(
      "median first-to-last record: bare %.0f rec/s, spout %.0f rec/s, ratio %.2f "
      "(median of per-run ratios %.2f)\n",
      Median(bare_steady), Median(spout_steady), Median(spout_steady) / Median(bare_steady),
      Median(ratio_steady));
  return 0;
}
