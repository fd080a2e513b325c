#ifndef TEMPEST_CLI_OFFSETS_OFFSET_MIGRATION_H_
#define TEMPEST_CLI_OFFSETS_OFFSET_MIGRATION_H_

// `tempest migrate offsets`: storm-kafka's offsets (ZooKeeper, read with
// ListStoredOffsets) into the Kafka consumer group of storm-kafka-client's
// spout, what Storm's storm-kafka-migration does, planned and checked first:
// nothing is written while a storm-kafka spout owns a partition, while the
// group has members, while a stored offset lies outside Kafka's log, or over
// a different commit of the group (unless told to); what is written is read
// back and compared with the plan.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"
#include "common/kafka/group_offsets_admin.h"

namespace tempest::cli {

struct OffsetMigrationRequest {
  std::string zk_root;
  std::string spout_id;
  std::string bootstrap_servers;
  std::string group;
  // Only these topics (empty: every topic with stored offsets). Their
  // partitions without a stored offset are listed too.
  std::vector<std::string> topics;
  bool overwrite = false;           // replace a different commit of the group
  bool allow_out_of_range = false;  // clamp a stored offset outside the log to its nearest end
  std::chrono::milliseconds timeout{10000};  // each Kafka lookup
};

enum class MigrationAction {
  kWrite,             // commit `write` to the group
  kAlreadyCommitted,  // the group has exactly that offset: nothing to do
  kNoStoredOffset,    // no ZooKeeper offset: nothing to migrate
  kRefused,           // see the plan's refusals
};
const char* MigrationActionName(MigrationAction action);

struct OffsetMigrationRow {
  std::string topic;
  int partition = 0;
  std::string zk_path;                  // "" when ZooKeeper has no node
  std::optional<int64_t> zk_offset;     // storm-kafka's resume point
  std::string zk_topology_id;           // who committed it last
  std::optional<int64_t> group_offset;  // the group's commit, if any
  std::string group_metadata;
  std::optional<int64_t> log_start_offset;
  std::optional<int64_t> log_end_offset;
  std::string owner;                 // a live storm-kafka owner (readable), if any
  std::optional<int64_t> write;      // what is (or would be) committed
  MigrationAction action = MigrationAction::kNoStoredOffset;
  std::string note;                  // clamped, replaced, why refused
  // After ExecuteOffsetMigration: what the group holds.
  std::optional<int64_t> read_back;
  std::string read_back_metadata;
};

struct OffsetMigrationPlan {
  OffsetMigrationRequest request;
  std::string metadata;  // of the commits (MigrationCommitMetadata)
  std::vector<OffsetMigrationRow> rows;  // sorted by (topic, partition)
  kafka::ConsumerGroupMembers members;
  // One line each; while there is any, nothing may be written.
  std::vector<std::string> refusals;

  int Writes() const;
};

// storm-kafka-client's commit metadata JSON, {"taskId":-1,"threadName":..,
// "topologyId":"migrated-from-zookeeper:{zk_root}/{spout_id}"}. Its
// topologyId is no deployment's, so only UNCOMMITTED_EARLIEST and
// UNCOMMITTED_LATEST resume from these commits; EARLIEST and LATEST ignore
// them, as they ignore any other deployment's.
std::string MigrationCommitMetadata(const std::string& zk_root, const std::string& spout_id);

// Reads everything and decides, writing nothing. NotFound when ZooKeeper
// has no storm-kafka offsets under {zk_root}/{spout_id}; other errors are
// ZooKeeper or Kafka failing.
absl::StatusOr<OffsetMigrationPlan> PlanOffsetMigration(coord::ZkSession& zk,
                                                        kafka::GroupOffsetsAdmin& group_admin,
                                                        const OffsetMigrationRequest& request);

// Commits the plan's writes (one simple commit with the plan's metadata),
// reads the group's offsets back and ZooKeeper's again, and returns one
// line per partition that differs from the plan (empty: verified); fills
// each row's read_back. FailedPrecondition, with nothing written, when the
// plan has refusals or a storm-kafka owner appeared since it was made; the
// commit's own error when the group refused it (members joined meanwhile).
absl::StatusOr<std::vector<std::string>> ExecuteOffsetMigration(
    coord::ZkSession& zk, kafka::GroupOffsetsAdmin& group_admin, OffsetMigrationPlan& plan);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_OFFSETS_OFFSET_MIGRATION_H_
