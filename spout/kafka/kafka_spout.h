#ifndef TEMPEST_SPOUT_KAFKA_SPOUT_H_
#define TEMPEST_SPOUT_KAFKA_SPOUT_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/spout.h"
#include "common/core/clock.h"
#include "common/core/metrics_registry.h"
#include "common/core/rate_limited_log.h"
#include "spout/kafka/dead_letter_producer.h"
#include "spout/kafka/kafka_partition_state.h"
#include "spout/kafka/kafka_spout_backends.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/kafka_spout_metrics.h"
#include "spout/kafka/offsets/offset_rewind.h"
#include "spout/kafka/offsets/offset_store.h"
#include "spout/kafka/offsets/partition_assignment.h"
#include "spout/kafka/partition_source.h"
#include "spout/kafka/record_window.h"
#include "spout/kafka/offsets/zk_offset_store.h"

namespace tempest::spout {

// Reads Kafka partitions with librdkafka and keeps each partition's offset
// in ZooKeeper exactly where legacy storm-kafka keeps it
// ({zkRoot}/{id}/[{topic}/]partition_{N}, storm-kafka's JSON), with
// per-partition ownership nodes and fenced, atomic commits (see
// docs/adr/0004-kafka-spout-offsets.md). Flux classes `tempest.KafkaSpout`
// and `org.apache.storm.kafka.KafkaSpout` (with SpoutConfig / ZkHosts).
//
// Threads: every Spout method runs on the task's executor thread and never
// blocks on ZooKeeper or on Kafka metadata. The spout owns
//   - an OffsetStore (ZkOffsetStore: its own thread + ZkSession: ownership,
//     reads, commits),
//   - a PartitionSource (KafkaPartitionSource: a KafkaReader fetching on the
//     executor thread, and a KafkaMetadataWorker on its own thread for
//     discovery, start offsets and watermarks),
//   - optionally a DeadLetterSink (DeadLetterProducer; delivery outcomes
//     polled on the executor thread without waiting).
// Answers of the store and the metadata side come back through mailboxes
// drained at the start of NextTuple. Only Close waits (bounded) for the
// final commit.
//
// Construction parses the configuration only (no I/O), as the validator
// requires; Open builds the store, the source and the dead-letter sink
// (Hooks::backends, the real ones by default) and starts everything.
class KafkaSpout : public api::Spout {
 public:
  // Test and benchmark hooks; the defaults suit production.
  struct Hooks {
    core::Clock* clock = nullptr;              // nullptr: the real clock
    core::MetricsRegistry* metrics = nullptr;  // nullptr: the global registry
    std::chrono::milliseconds close_timeout{5000};
    // Most tuples emitted per NextTuple call (Storm emits one; batching a few
    // keeps per-call overhead off the hot path).
    int max_emit_per_call = 64;
    // Builders of the offset store and partition source; empty: the real ones.
    KafkaSpoutBackends backends;
  };

  // The registry's factory: the real backends.
  static absl::StatusOr<std::unique_ptr<KafkaSpout>> Create(const api::ComponentArgs& args);
  static absl::StatusOr<std::unique_ptr<KafkaSpout>> Create(const api::ComponentArgs& args,
                                                            Hooks hooks);
  explicit KafkaSpout(KafkaSpoutConfig config);
  KafkaSpout(KafkaSpoutConfig config, Hooks hooks);
  ~KafkaSpout() override;

  absl::Status Open(const api::Config& config, const api::TopologyContext& context,
                    api::SpoutOutputCollector& collector) override;
  void NextTuple() override;
  void Ack(const api::MessageId& message_id) override;
  void Fail(const api::MessageId& message_id) override;
  void Activate() override;
  void Deactivate() override;
  void Close() override;
  bool IsExhausted() const override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  const KafkaSpoutConfig& config() const { return config_; }

  // Per-partition view for tests, benchmarks and tools (executor thread).
  struct PartitionStats {
    bool owned = false;   // acquired and fetching (or paused)
    bool paused = false;  // stopped at the uncommitted limit
    bool failed = false;  // stopped by outOfRangePolicy=fail
    int64_t committed = -1;
    int64_t emitted_to = -1;
    int64_t pending = 0;
    int64_t lost = 0;  // offsets skipped by out-of-range repositioning
    int64_t dropped_pending = 0;
    int64_t dead_lettered = 0;
    int64_t acquisitions = 0;  // how often ownership was (re)acquired
    int64_t rewinds = 0;       // fenced moves applied on request (tempest offsets set)
    int64_t stored_out_of_range = 0;  // stored offsets found outside the log
  };
  std::map<TopicPartition, PartitionStats> Stats() const;
  // Lines written so far about tuples failing repeatedly (at most one per
  // 10 s per task; see RepeatedFailureReporter). Executor thread.
  int64_t repeated_failure_reports() const { return failure_reporter_.reports(); }
  // The ZooKeeper offset store (tests reach its session); nullptr before Open
  // or when Hooks::backends built another kind of store.
  ZkOffsetStore* offset_store() const { return dynamic_cast<ZkOffsetStore*>(store_.get()); }

  // A dead-letter outcome (inside DeadLetterProducer::Poll on the executor
  // thread); `error` is empty when the record was delivered.
  void OnDeadLetterReport(const DeadLetterProducer::Ref& ref, std::string_view error);

 private:
  enum class Phase { kUnowned, kResolving, kActive, kFailed };
  // A fenced move requested by `tempest offsets set` (kafka_spout_rewind.cc):
  // the owner's write, then a release and re-acquisition that re-reads the
  // moved offset.
  enum class RewindStage { kNone, kWriting, kReleasing, kReacquiring };
  struct Rewind {
    RewindStage stage = RewindStage::kNone;
    int64_t target = -1;  // -1: not applied, accept any re-acquisition
    int cycles = 0;
    core::Clock::TimePoint since{};
  };
  struct Partition {
    Partition(TopicPartition tp_in, int slot_in, KafkaPartitionMetrics metrics_in,
              const core::Clock& clock)
        : tp(std::move(tp_in)),
          slot(slot_in),
          blocked_log(1, std::chrono::seconds(60), clock),
          read_error_log(1, std::chrono::seconds(30), clock),
          metrics(metrics_in) {}
    TopicPartition tp;
    int slot = 0;
    uint32_t epoch = 0;
    bool assigned = false;
    Phase phase = Phase::kUnowned;
    uint64_t acquisition = 0;
    std::optional<StormKafkaOffset> stored;  // as read at acquisition
    std::optional<KafkaPartitionState> state;
    // Fetched records not yet emitted, then (AT_LEAST_ONCE) the payloads of
    // emitted ones until acked or dead-lettered, for retries.
    RecordWindow window;
    bool fetching = false;
    bool paused = false;
    bool repositioning = false;
    int64_t end_offset = -1;  // log end at acquisition (stopAtEnd)
    int64_t log_end = -1;
    // The next time the gauges ask the leader for the log end (fetches
    // only update it while the partition is fetched), and whether an
    // answer is still due.
    core::Clock::TimePoint next_log_end_query{};
    bool log_end_query_due = false;
    int64_t newest_timestamp_ms = -1;  // of the newest record fetched (lag in time)
    std::pair<std::string, int> leader{"", 0};
    bool commit_in_flight = false;
    int64_t requested_commit = -1;
    // Journal entries (resets, dead letters) sent with the next commit.
    std::vector<JournalEntry> journal;
    core::Clock::TimePoint amo_retry_at{};
    int64_t blocked_offset = -1;
    core::Clock::TimePoint blocked_since{};
    core::RateLimitedLog blocked_log;     // "commit blocked by offset", while it lasts
    core::RateLimitedLog read_error_log;  // a stored offset that cannot be used
    Rewind rewind;
    PartitionStats totals;
    KafkaPartitionMetrics metrics;
  };

  Partition& SlotFor(const TopicPartition& tp);
  Partition* Find(const TopicPartition& tp);
  void Drain(core::Clock::TimePoint now);
  void OnStoreUpdate(OffsetStoreUpdate& u, core::Clock::TimePoint now);
  void OnMetadata(MetadataResult& r, core::Clock::TimePoint now);
  void OnDiscovered(MetadataResult& r, core::Clock::TimePoint now);
  void OnResolved(const MetadataResult& r);
  void OnWatermarks(const MetadataResult& r);
  void ApplyAssignment(const std::vector<TopicPartition>& all);
  void DropOwnership(Partition& p, const std::string& why);
  void Housekeeping(core::Clock::TimePoint now);
  // Log end, lag, commit position and commit-blocked gauges (and warning).
  void UpdatePartitionGauges(Partition& p, core::Clock::TimePoint now);
  // Lag in time of a partition: the newest fetched record's timestamp minus
  // the first uncommitted record's; 0 when caught up, -1 unknown.
  static int64_t LagMillis(Partition& p);
  void CommitNow(bool final_commit);
  std::optional<OffsetCommit> MakeCommit(Partition& p);
  void PollKafka(core::Clock::TimePoint now);
  bool AwaitingAtMostOnceCommit() const;
  int EmitSome(core::Clock::TimePoint now, int budget);
  // `take_payload`: move the key and value into the tuple (nothing retains
  // them) instead of copying.
  void EmitRecord(const Partition& p, RecordWindow::Record& r, bool take_payload);
  void RequestAtMostOnceCommits(core::Clock::TimePoint now);
  void UpdateFetching(Partition& p);
  void SendToDeadLetter(Partition& p, int64_t offset);
  void ReportRepeatedFailures(core::Clock::TimePoint now);
  // The partition of an ack's or fail's id, if it is of its current epoch.
  Partition* PartitionOfId(const api::MessageId& id, int64_t* offset);
  absl::Status StartReader(const std::string& bootstrap);
  // Fenced rewinds (kafka_spout_rewind.cc).
  absl::Status StartRewindWatcher(const std::string& owner_description);
  void DrainRewinds(core::Clock::TimePoint now);
  void OnRewindRequest(const RewindWatcher::Pending& request, core::Clock::TimePoint now);
  void OnRewindOutcome(const RewindWatcher::Outcome& outcome, core::Clock::TimePoint now);
  // True when a rewind in progress consumes this store update.
  bool RewindTakes(Partition& p, const OffsetStoreUpdate& u);
  // A stored offset past the log end, handled under outOfRangePolicy: the
  // position to start from now, or nullopt (stopped, or being moved in the
  // store first).
  std::optional<int64_t> StoredBeyondLogEnd(Partition& p, const MetadataResult& r);
  // The assignment handed to the store: ours minus partitions being released
  // for a rewind.
  std::vector<TopicPartition> StoreAssignment();

  KafkaSpoutConfig config_;
  Hooks hooks_;
  core::Clock* clock_ = nullptr;
  core::MetricsRegistry* metrics_ = nullptr;
  api::SpoutOutputCollector* collector_ = nullptr;
  std::string topology_id_, topology_name_;
  int task_index_ = 0, task_count_ = 1;
  core::MetricLabels labels_;
  api::StreamId stream_;
  bool active_ = true;
  bool opened_ = false;
  bool closed_ = false;
  bool discovered_ = false;

  std::unique_ptr<OffsetStore> store_;
  std::unique_ptr<PartitionSource> source_;
  std::unique_ptr<DeadLetterSink> dead_letter_;
  std::unique_ptr<RewindWatcher> rewind_watcher_;  // with a ZkOffsetStore only
  std::vector<std::pair<int, int64_t>> dead_letter_retry_;  // (slot, offset) to resend

  std::vector<std::unique_ptr<Partition>> partitions_;  // by slot, never shrinks
  std::map<TopicPartition, int> slot_of_;
  std::vector<TopicPartition> assignment_;
  std::vector<int> assigned_slots_;  // slots of assignment_, for the hot loop
  size_t round_robin_ = 0;

  core::Clock::TimePoint next_commit_{};
  core::Clock::TimePoint next_refresh_{};
  core::Clock::TimePoint next_housekeeping_{};
  // Fetch errors and commit failures can repeat every poll while a broker
  // or ZooKeeper is away: one line per 10 s each, with the count held back.
  core::RateLimitedLog fetch_errors_;
  core::RateLimitedLog commit_errors_;
  int64_t commit_failures_ = 0;
  RepeatedFailureReporter failure_reporter_;
  bool poll_idle_ = false;

  friend struct KafkaSpoutTestPeer;
};

// Registers tempest.KafkaSpout and org.apache.storm.kafka.KafkaSpout into
// `registry`, skipping names already held (so calling it twice is harmless).
// The same names are also registered into ComponentRegistry::Global() at
// static initialization, if the linker keeps kafka_spout.o: binaries should
// call this (or LinkKafkaSpout) once. Thread-safe.
absl::Status RegisterKafkaSpout(api::ComponentRegistry& registry);
void LinkKafkaSpout();

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_SPOUT_H_
