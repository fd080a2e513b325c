#ifndef TEMPEST_COMMON_KAFKA_GROUP_MEMBER_H_
#define TEMPEST_COMMON_KAFKA_GROUP_MEMBER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>  // std::once_flag
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/kafka/handles.h"
#include "common/kafka/topic_partition.h"

namespace tempest::kafka {

// A partition's offset in a consumer group: what the group has committed
// (at assignment), or what to commit. `offset` is the next offset to
// consume, as Kafka stores it; -1 when the group has none.
struct GroupOffset {
  TopicPartition partition;
  int64_t offset = -1;
  std::string metadata;  // the commit's metadata string (storm-kafka-client's JSON)
};

// Something the group did, in the order it happened.
struct GroupEvent {
  enum class Kind {
    kAssigned,      // the group gave us `offsets` (each with its committed offset)
    kRevoked,       // the group took `offsets` away (a rebalance, or we were fenced)
    kCommitted,     // `offsets` are durably committed (request `commit_id`)
    kCommitFailed,  // request `commit_id` was not committed (`status`)
  };
  Kind kind = Kind::kCommitFailed;
  std::vector<GroupOffset> offsets;
  uint64_t commit_id = 0;
  // kCommitFailed: FailedPrecondition when the group refused the commit
  // because this member's generation is over (it was fenced: a rebalance
  // happened without it, e.g. after it stalled past session.timeout.ms);
  // Unavailable for anything that may succeed if retried.
  absl::Status status;
};

struct GroupMemberOptions {
  std::string bootstrap_servers;
  std::string group_id;
  std::vector<std::string> topics;
  std::string client_id = "tempest";
  // Extra librdkafka properties (e.g. session.timeout.ms), applied last.
  std::map<std::string, std::string> properties;
};

// Membership of a Kafka consumer group, for offsets and fencing only: it
// joins `group_id` subscribed to `topics` (round-robin assignment), reports
// what the group assigns and revokes together with the committed offsets,
// and commits offsets under the member's current generation, so the group
// coordinator refuses a commit from a member that was fenced (rebalanced
// out). It never hands out records: the partitions it is given are paused
// at the log end; reading is the caller's business (KafkaReader).
//
// Its own thread serves librdkafka's group protocol and sends commits;
// every method is thread-safe, and answers come back through TakeEvents.
class KafkaGroupMember {
 public:
  static absl::StatusOr<std::unique_ptr<KafkaGroupMember>> Join(
      const GroupMemberOptions& options);
  ~KafkaGroupMember();  // Leave(5 s) if not done already
  KafkaGroupMember(const KafkaGroupMember&) = delete;
  KafkaGroupMember& operator=(const KafkaGroupMember&) = delete;

  // Queues a commit; its outcome arrives as a kCommitted or kCommitFailed
  // event with the returned id.
  uint64_t Commit(std::vector<GroupOffset> offsets);
  std::vector<GroupEvent> TakeEvents();
  bool HasEvents() const { return has_events_.load(std::memory_order_acquire); }

  // Sends the queued commits (waiting at most `timeout`), then leaves the
  // group. Idempotent.
  void Leave(std::chrono::milliseconds timeout);

  // Callbacks from librdkafka (on the member's thread); not for callers.
  void OnRebalance(int error_code, rd_kafka_topic_partition_list_t* partitions);
  void OnCommitted(int error_code, const rd_kafka_topic_partition_list_t* offsets);

 private:
  struct CommitRequest {
    uint64_t id = 0;
    std::vector<GroupOffset> offsets;
  };

  explicit KafkaGroupMember(GroupMemberOptions options) : options_(std::move(options)) {}
  void Run();
  void SendCommit(const CommitRequest& request);
  // Turns a commit's answer into kCommitted / kCommitFailed events.
  void OnCommittedRequest(const CommitRequest& request, int error_code,
                          const rd_kafka_topic_partition_list_t* offsets);
  void Push(GroupEvent event);
  // The group's committed offsets of `partitions`; retried until they come,
  // or nullopt once the member stops (a start position is never guessed).
  std::optional<std::vector<GroupOffset>> ReadCommitted(
      const rd_kafka_topic_partition_list_t& partitions);

  const GroupMemberOptions options_;
  ClientHandle rk_;
  QueueHandle consumer_queue_;  // to wake the thread's poll

  mutable absl::Mutex mu_;
  std::deque<CommitRequest> commits_ ABSL_GUARDED_BY(mu_);
  std::vector<GroupEvent> events_ ABSL_GUARDED_BY(mu_);
  uint64_t next_commit_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::atomic<bool> has_events_{false};
  std::atomic<bool> stopping_{false};
  std::chrono::steady_clock::time_point stop_deadline_ ABSL_GUARDED_BY(mu_) = {};

  // The member thread's own: the request whose outcome OnCommitted reports.
  const CommitRequest* sending_ = nullptr;

  std::thread thread_;
  std::once_flag left_;
};

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_GROUP_MEMBER_H_
