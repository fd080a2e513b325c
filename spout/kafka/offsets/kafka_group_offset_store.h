#ifndef TEMPEST_SPOUT_KAFKA_GROUP_OFFSET_STORE_H_
#define TEMPEST_SPOUT_KAFKA_GROUP_OFFSET_STORE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/kafka/group_member.h"
#include "spout/kafka/offsets/offset_store.h"

namespace tempest::spout {

// storm-kafka-client's offset store: the offsets live in a Kafka consumer
// group (`group.id`), where kafka-consumer-groups, Burrow and the lag
// exporters read them. Each spout task is one member of the group; the
// group coordinator, not the spout, decides which partitions a task owns
// (round-robin over the members), and refuses the commits of a member whose
// generation is over, so a zombie task (stalled past session.timeout.ms and
// rebalanced out) cannot move an offset. Commits carry storm-kafka-client's
// metadata JSON ({"topologyId":..,"taskId":..,"threadName":..}), which the
// next deployment reads to apply firstPollOffsetStrategy.
//
// SetAssignment only says which partitions the spout would accept (it hands
// over every partition it discovered); acquisitions follow the group's
// assignments. The store joins the group at the first SetAssignment, not at
// Create: the spout sets its assignment only once it runs (its first
// NextTuple, which an executor calls only while the topology is active), so
// a topology submitted inactive is no member of the group yet. Otherwise
// its tasks would read the group's commits at their assignment, before an
// upgrade had carried the old topology's offsets in, and the group, having
// members, would refuse that carry (Kafka takes commits from outside a
// group only while it is empty). Owned and called by the spout's executor
// thread; the KafkaGroupMember does its work on its own thread.
class KafkaGroupOffsetStore : public OffsetStore {
 public:
  struct Options {
    kafka::GroupMemberOptions member;  // bootstrap, group id, topics, properties
    std::string topology_id;           // written into commit metadata
    int task_id = 0;                   // written into commit metadata
  };

  static absl::StatusOr<std::unique_ptr<KafkaGroupOffsetStore>> Create(Options options);
  ~KafkaGroupOffsetStore() override;

  void SetAssignment(std::vector<TopicPartition> partitions) override;
  void RequestCommit(std::vector<OffsetCommit> commits) override;
  std::vector<OffsetStoreUpdate> TakeUpdates() override;
  bool HasUpdates() const override;
  void Close(std::chrono::milliseconds timeout) override;

  // storm-kafka-client's commit metadata, and the topology id read back
  // from it (empty for metadata that is not that JSON).
  static std::string CommitMetadata(const std::string& topology_id, int task_id);
  static std::string TopologyOfMetadata(const std::string& metadata);

 private:
  struct SentCommit {
    TopicPartition partition;
    uint64_t acquisition = 0;
    int64_t offset = 0;
  };

  struct Owned {
    uint64_t acquisition = 0;
    std::optional<StormKafkaOffset> stored;  // the group's commit at assignment
    bool reported = false;  // kAcquired sent (only once the spout wants it)
  };

  explicit KafkaGroupOffsetStore(Options options) : options_(std::move(options)) {}
  void OnEvent(kafka::GroupEvent& event);
  // The steps of OnEvent, one per kind of group event.
  void OnAssigned(const kafka::GroupEvent& event);
  void OnRevoked(const kafka::GroupEvent& event);
  void OnCommitted(const kafka::GroupEvent& event, const std::vector<SentCommit>& sent);
  void OnCommitFailed(const absl::Status& status);
  void ReportAcquired(const TopicPartition& tp, Owned& owned);
  // Joins the group if the spout wants partitions and no member exists; a
  // failed join is reported as kReadFailed of each wanted partition and
  // tried again after kJoinRetry.
  void JoinIfWanted();
  static constexpr std::chrono::seconds kJoinRetry{2};

  const Options options_;
  const std::string metadata_ = CommitMetadata(options_.topology_id, options_.task_id);
  std::unique_ptr<kafka::KafkaGroupMember> member_;
  std::set<TopicPartition> wanted_;  // what the spout discovered
  std::map<TopicPartition, Owned> owned_;
  std::vector<OffsetStoreUpdate> updates_;
  uint64_t next_acquisition_ = 1;
  std::map<uint64_t, std::vector<SentCommit>> in_flight_;  // commit id -> what it carries
  bool closed_ = false;
  std::chrono::steady_clock::time_point next_join_{};  // after a failed join
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_GROUP_OFFSET_STORE_H_
