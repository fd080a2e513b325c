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
#include "spout/kafka/kafka_spout_backends.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/kafka_spout_partition.h"
#include "spout/kafka/offsets/offset_rewind.h"
#include "spout/kafka/offsets/offset_store.h"
#include "spout/kafka/offsets/partition_assignment.h"
#include "spout/kafka/partition_source.h"
#include "spout/kafka/record_window.h"

namespace tempest::spout {

class ZkOffsetStore;

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
// final commit, and Deactivate under AT_MOST_ONCE for a commit in flight.
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
    // AT_MOST_ONCE: how long Deactivate waits for a commit in flight, whose
    // records it then emits (see EmitBeforeDeactivating).
    std::chrono::milliseconds deactivate_commit_wait{2000};
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
  using PartitionStats = KafkaSpoutPartitionStats;
  std::map<TopicPartition, PartitionStats> Stats() const;
  // Lines written so far about tuples failing repeatedly (at most one per
  // 10 s per task; see RepeatedFailureReporter). Executor thread.
  int64_t repeated_failure_reports() const { return failure_reporter_.reports(); }
  // The ZooKeeper offset store (tests reach its session); nullptr before Open,
  // when the offsets live in Kafka, or when Hooks::backends built the store.
  ZkOffsetStore* offset_store() const { return zk_store_; }

  // A dead-letter outcome (inside DeadLetterProducer::Poll on the executor
  // thread); `error` is empty when the record was delivered.
  void OnDeadLetterReport(const DeadLetterProducer::Ref& ref, std::string_view error);

 private:
  using Partition = KafkaSpoutPartition;

  // Opening (kafka_spout.cc).
  void BindTask(const api::TopologyContext& context, api::SpoutOutputCollector& collector);
  KafkaSpoutSite MakeSite(const api::TopologyContext& context, const std::string& connect,
                          coord::ZkClientConfig zk_config) const;
  // The offset store (and, for ZooKeeper offsets, the rewind watcher on its session).
  absl::Status OpenStore(const KafkaSpoutSite& site);
  void LogOpened(const api::TopologyContext& context, const std::string& connect) const;
  absl::Status StartReader(const std::string& bootstrap);

  Partition& SlotFor(const TopicPartition& tp);
  Partition* Find(const TopicPartition& tp);
  // The partition of an ack's or fail's id, if it is of its current epoch.
  Partition* PartitionOfId(const api::MessageId& id, int64_t* offset);
  // The line and component error for an offset past retryLimit with no
  // dead-letter topic: written once for that offset.
  void ReportStall(const Partition& p, int64_t offset);

  // The mailboxes of the store and the partition source
  // (kafka_spout_partitions.cc).
  void Drain(core::Clock::TimePoint now);
  void OnStoreUpdate(OffsetStoreUpdate& u, core::Clock::TimePoint now);
  void OnAcquired(Partition* p, const OffsetStoreUpdate& u);
  void OnCommitFailed(const OffsetStoreUpdate& u, core::Clock::TimePoint now);
  void OnReadFailed(Partition* p, const OffsetStoreUpdate& u);
  void OnMetadata(MetadataResult& r, core::Clock::TimePoint now);
  void OnDiscovered(MetadataResult& r, core::Clock::TimePoint now);
  void OnResolved(const MetadataResult& r);
  void OnWatermarks(const MetadataResult& r);
  // Assignment, ownership, commits and housekeeping (kafka_spout_partitions.cc).
  void ApplyAssignment(const std::vector<TopicPartition>& all);
  void DropOwnership(Partition& p, const std::string& why);
  void Housekeeping(core::Clock::TimePoint now);
  // Log end, lag, commit position and commit-blocked gauges (and warning).
  void UpdatePartitionGauges(Partition& p, core::Clock::TimePoint now);
  void CommitNow();
  std::optional<OffsetCommit> MakeCommit(Partition& p);
  void RequestAtMostOnceCommits(core::Clock::TimePoint now);
  void ReportRepeatedFailures(core::Clock::TimePoint now);

  // Fetching and emitting (kafka_spout_fetch.cc).
  void PollKafka(core::Clock::TimePoint now);
  // A reader event (out of range, end of partition, error) of a partition.
  void OnPartitionEvent(const kafka::PartitionEvent& e);
  bool AwaitingAtMostOnceCommit() const;
  bool AnyCommitInFlight() const;
  void EmitBeforeDeactivating();
  int EmitSome(core::Clock::TimePoint now, int budget);
  // Due retries first (AT_LEAST_ONCE): they hold back the commit point.
  int EmitRetries(core::Clock::TimePoint now, int budget);
  int EmitWaiting(Partition& p, int budget);
  // `take_payload`: move the key and value into the tuple (nothing retains
  // them) instead of copying.
  void EmitRecord(const Partition& p, RecordWindow::Record& r, bool take_payload);
  void UpdateFetching(Partition& p);
  void StopFetching(const TopicPartition& tp);
  void SendToDeadLetter(Partition& p, int64_t offset);
  void ResendDeadLetters();

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
  ZkOffsetStore* zk_store_ = nullptr;  // store_, when Open built a ZkOffsetStore
  std::unique_ptr<PartitionSource> source_;
  std::unique_ptr<DeadLetterSink> dead_letter_;
  std::unique_ptr<RewindWatcher> rewind_watcher_;           // with a ZkOffsetStore only
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
