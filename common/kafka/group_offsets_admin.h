#ifndef TEMPEST_COMMON_KAFKA_GROUP_OFFSETS_ADMIN_H_
#define TEMPEST_COMMON_KAFKA_GROUP_OFFSETS_ADMIN_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/handles.h"
#include "common/kafka/topic_partition.h"

namespace tempest::kafka {

// A partition's committed offset in a consumer group: the next offset to
// consume, as Kafka stores it (-1: the group has none), and the commit's
// metadata string.
struct CommittedGroupOffset {
  TopicPartition partition;
  int64_t offset = -1;
  std::string metadata;
};

struct ConsumerGroupMember {
  std::string member_id;
  std::string client_id;
  std::string client_host;
};

// Who is in a consumer group.
struct ConsumerGroupMembers {
  // True when the group coordinator listed the group (ListGroups /
  // DescribeGroups). Brokers without those requests (librdkafka's mock
  // cluster, `tempest dev-kafka`) cannot say who is in a group; then
  // `refuses_outside_commits` says whether the group refused a probe commit
  // from outside it (generation -1) of a partition that cannot exist, which
  // such a broker does once any member has joined the group.
  bool listed = false;
  std::string state;  // the coordinator's ("Stable", "Empty", "Dead", ...); "" if not listed
  std::vector<ConsumerGroupMember> members;
  bool refuses_outside_commits = false;

  // Members run (listed), or the group would refuse a commit from outside it.
  bool InUse() const { return listed ? !members.empty() : refuses_outside_commits; }
};

struct GroupOffsetsAdminOptions {
  std::string bootstrap_servers;
  std::string client_id = "tempest-group-admin";
  // The bound of each call (a broker that does not answer fails the call).
  std::chrono::milliseconds timeout{10000};
};

// Reads and writes a consumer group's committed offsets from outside the
// group, as kafka-consumer-groups does: it never joins the group. Commit is
// a simple commit (generation -1, no member id), which Kafka accepts only
// while the group has no members; a group with members refuses it, so it
// never races a running consumer. For tools on one thread (e.g. `tempest
// migrate offsets`); not thread-safe. Each call blocks for at most the
// configured timeout (Members: twice that when it has to probe).
class GroupOffsetsAdmin {
 public:
  static absl::StatusOr<std::unique_ptr<GroupOffsetsAdmin>> Create(
      GroupOffsetsAdminOptions options);
  ~GroupOffsetsAdmin();
  GroupOffsetsAdmin(const GroupOffsetsAdmin&) = delete;
  GroupOffsetsAdmin& operator=(const GroupOffsetsAdmin&) = delete;

  // The group's committed offsets of `partitions`, in that order (offset -1
  // where it has none). A partition Kafka does not have is NotFound.
  absl::StatusOr<std::vector<CommittedGroupOffset>> ReadCommitted(
      const std::string& group, const std::vector<TopicPartition>& partitions);

  // Commits every offset with `metadata`, as a simple (non-member) commit.
  // FailedPrecondition when the group refused it because it has members
  // (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS);
  // Unavailable / DeadlineExceeded for anything a retry may fix. A partial
  // failure names every partition that was not committed.
  absl::Status Commit(const std::string& group, const std::map<TopicPartition, int64_t>& offsets,
                      const std::string& metadata);

  // The group's members (see ConsumerGroupMembers for brokers that cannot
  // list them). A group the coordinator does not know has none.
  absl::StatusOr<ConsumerGroupMembers> Members(const std::string& group);

 private:
  explicit GroupOffsetsAdmin(GroupOffsetsAdminOptions options) : options_(std::move(options)) {}
  // A consumer handle whose group.id is `group` (made on first use; it never
  // subscribes, so it never joins).
  absl::StatusOr<rd_kafka_t*> ClientFor(const std::string& group);
  // Sends a simple commit and waits for the answer: per-partition errors
  // (librdkafka codes) of what was sent, or a whole-request failure.
  absl::StatusOr<std::map<TopicPartition, int>> SendCommit(
      const std::string& group, const std::map<TopicPartition, int64_t>& offsets,
      const std::string& metadata);

  const GroupOffsetsAdminOptions options_;
  std::map<std::string, ClientHandle> clients_;  // by group id
};

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_GROUP_OFFSETS_ADMIN_H_
