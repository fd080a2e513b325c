#ifndef TEMPEST_TESTS_UNIT_SPOUT_KAFKA_SPOUT_FAKES_H_
#define TEMPEST_TESTS_UNIT_SPOUT_KAFKA_SPOUT_FAKES_H_

// Scripted stand-ins for a KafkaSpout's OffsetStore, PartitionSource and
// DeadLetterSink: they record every request and answer only when the test
// pushes an answer, so the spout's state machine runs without servers.
// Single-threaded, like the executor thread that owns them.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "spout/kafka/kafka_spout_backends.h"
#include "spout/kafka/offsets/offset_store.h"
#include "spout/kafka/partition_source.h"

namespace tempest::spout::testing {

class FakeOffsetStore : public OffsetStore {
 public:
  void SetAssignment(std::vector<TopicPartition> partitions) override {
    std::string names;
    for (const TopicPartition& tp : partitions) names += " " + Describe(tp);
    calls.push_back("assign" + names);
    assignment = std::move(partitions);
  }
  void RequestCommit(std::vector<OffsetCommit> commits) override {
    for (OffsetCommit& c : commits) {
      calls.push_back(absl::StrCat("commit ", Describe(c.partition), "@", c.state.offset));
      requested.push_back(std::move(c));
    }
  }
  std::vector<OffsetStoreUpdate> TakeUpdates() override {
    std::vector<OffsetStoreUpdate> out;
    out.swap(updates);
    return out;
  }
  bool HasUpdates() const override { return !updates.empty(); }
  void Close(std::chrono::milliseconds) override { closed = true; }

  void Acquired(const TopicPartition& tp, uint64_t acquisition,
                std::optional<int64_t> stored_offset = std::nullopt) {
    OffsetStoreUpdate u;
    u.kind = OffsetStoreUpdate::Kind::kAcquired;
    u.partition = tp;
    u.acquisition = acquisition;
    if (stored_offset.has_value()) {
      StormKafkaOffset stored;
      stored.offset = *stored_offset;
      stored.topic = tp.topic;
      stored.partition = tp.partition;
      u.stored = stored;
    }
    updates.push_back(std::move(u));
  }
  void Push(OffsetStoreUpdate::Kind kind, const TopicPartition& tp, absl::Status status = {},
            int64_t offset = 0) {
    OffsetStoreUpdate u;
    u.kind = kind;
    u.partition = tp;
    u.status = std::move(status);
    u.offset = offset;
    updates.push_back(std::move(u));
  }

  std::vector<std::string> calls;  // in order: "assign events/0 ...", "commit events/0@12"
  std::vector<TopicPartition> assignment;
  std::vector<OffsetCommit> requested;
  std::vector<OffsetStoreUpdate> updates;
  bool closed = false;
};

// Each partition is a log of values at offsets 0..n-1; a started partition
// is read from its start offset to its log end, as the real reader does.
class FakePartitionSource : public PartitionSource {
 public:
  struct Request {
    TopicPartition tp;
    uint64_t tag = 0;
    int64_t offset = 0;  // Resolve: the stored offset or -1; Watermarks: the requested one
    std::chrono::milliseconds delay{0};
  };

  void Discover() override { ++discovers; }
  void Resolve(const TopicPartition& tp, uint64_t tag, std::optional<StormKafkaOffset> stored,
               std::chrono::milliseconds delay) override {
    resolves.push_back({tp, tag, stored.has_value() ? stored->offset : -1, delay});
  }
  void Watermarks(const TopicPartition& tp, uint64_t tag, int64_t requested,
                  std::chrono::milliseconds delay) override {
    watermarks.push_back({tp, tag, requested, delay});
  }
  std::vector<MetadataResult> TakeResults() override {
    std::vector<MetadataResult> out;
    out.swap(results);
    return out;
  }
  bool HasResults() const override { return !results.empty(); }
  absl::Status ConnectReader(const std::string& bootstrap_servers) override {
    bootstrap = bootstrap_servers;
    return absl::OkStatus();
  }
  bool reader_connected() const override { return !bootstrap.empty(); }
  absl::Status Start(const TopicPartition& tp, int64_t offset) override {
    position[tp] = offset;
    return absl::OkStatus();
  }
  absl::Status Stop(const TopicPartition& tp) override {
    position.erase(tp);
    ++stops;
    return absl::OkStatus();
  }
  std::vector<kafka::PartitionEvent> Poll(
      size_t max_records, std::chrono::milliseconds,
      const std::function<void(const kafka::KafkaRecord&)>& sink) override {
    for (auto& [tp, next] : position) {
      const std::vector<std::string>& values = log[tp];
      for (; next < static_cast<int64_t>(values.size()) && max_records > 0; ++next, --max_records) {
        kafka::KafkaRecord r;
        r.topic = tp.topic;
        r.partition = tp.partition;
        r.offset = next;
        r.value = values[next];
        r.has_value = true;
        sink(r);
      }
    }
    std::vector<kafka::PartitionEvent> out;
    out.swap(events);
    return out;
  }
  absl::StatusOr<std::pair<int64_t, int64_t>> CachedWatermarks(const TopicPartition& tp) override {
    return std::make_pair(int64_t{0}, static_cast<int64_t>(log[tp].size()));
  }
  void StopMetadata() override { metadata_stopped = true; }

  void Discovered(std::vector<TopicPartition> partitions) {
    MetadataResult r;
    r.kind = MetadataResult::Kind::kDiscovered;
    r.partitions = std::move(partitions);
    results.push_back(std::move(r));
  }
  // Answers a Resolve: start at `start` (committed floor `committed`).
  void Resolved(const TopicPartition& tp, uint64_t tag, int64_t committed, int64_t start) {
    MetadataResult r;
    r.kind = MetadataResult::Kind::kResolved;
    r.partition = tp;
    r.tag = tag;
    r.decision.committed = committed;
    r.decision.start = start;
    r.decision.reason = "test";
    r.low = 0;
    r.high = static_cast<int64_t>(log[tp].size());
    results.push_back(std::move(r));
  }
  void WatermarksAre(const TopicPartition& tp, uint64_t tag, int64_t requested, int64_t low,
                     int64_t high) {
    MetadataResult r;
    r.kind = MetadataResult::Kind::kWatermarks;
    r.partition = tp;
    r.tag = tag;
    r.requested = requested;
    r.low = low;
    r.high = high;
    results.push_back(std::move(r));
  }

  std::map<TopicPartition, std::vector<std::string>> log;
  std::map<TopicPartition, int64_t> position;  // started partitions: next offset to read
  std::vector<kafka::PartitionEvent> events;   // returned by the next Poll
  std::vector<MetadataResult> results;
  std::vector<Request> resolves, watermarks;
  std::string bootstrap;
  int discovers = 0;
  int stops = 0;
  bool metadata_stopped = false;
};

class FakeDeadLetterSink : public DeadLetterSink {
 public:
  struct Sent {
    TopicPartition source;
    std::string value;
    DeadLetterProducer::Ref ref;
  };
  explicit FakeDeadLetterSink(DeadLetterProducer::OutcomeCallback on_outcome)
      : on_outcome_(std::move(on_outcome)) {}
  bool Send(const TopicPartition& source, const RecordWindow::Record& record,
            const DeadLetterProducer::Ref& ref) override {
    if (refuse_sends > 0) {
      --refuse_sends;
      return false;
    }
    sent.push_back({source, record.value, ref});
    return true;
  }
  void Poll() override {}
  // Reports the outcome of sent[i] ("" = delivered), as Poll would.
  void Outcome(size_t i, std::string_view error = "") { on_outcome_(sent.at(i).ref, error); }

  std::vector<Sent> sent;
  int refuse_sends = 0;

 private:
  DeadLetterProducer::OutcomeCallback on_outcome_;
};

}  // namespace tempest::spout::testing

#endif  // TEMPEST_TESTS_UNIT_SPOUT_KAFKA_SPOUT_FAKES_H_
