#ifndef TEMPEST_CLI_OFFSETS_OFFSET_CARRY_H_
#define TEMPEST_CLI_OFFSETS_OFFSET_CARRY_H_

// The carries of `tempest upgrade` beside ZooKeeper -> consumer group (which
// is `tempest migrate offsets`, offset_migration.h): a consumer group's
// commits into storm-kafka's partition nodes (a rollback to storm-kafka),
// partition nodes to another zkRoot/id, and commits to another group.id.
// Each refuses, writing nothing, while the source or the target has a live
// reader (a ZooKeeper owner node, a listed group member), writes through the
// existing writers (spout::SetStoredOffset, kafka::GroupOffsetsAdmin::Commit)
// and reads what it wrote back. They return how many offsets were written.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"
#include "common/kafka/group_offsets_admin.h"

namespace tempest::cli {

// Where a storm-kafka spout keeps its offsets, on an open session.
struct ZkOffsetsSite {
  coord::ZkSession* zk = nullptr;
  std::string zk_root;
  std::string spout_id;
};

// Where a storm-kafka-client spout keeps its offsets.
struct GroupOffsetsSite {
  kafka::GroupOffsetsAdmin* admin = nullptr;
  std::string bootstrap_servers;  // for the topics' partitions
  std::string group;
};

// FailedPrecondition naming the partition while a storm-kafka spout owns
// one under `site` (its owner nodes are listed, so a partition without an
// offset node yet counts too).
absl::Status CheckZkUnowned(const ZkOffsetsSite& site);

// The journal's and the commits' name for who wrote.
inline constexpr char kUpgradeActor[] = "tempest upgrade";

// storm-kafka-client commit metadata of a copy from another group:
// topologyId "carried-from-group:{group}", no deployment's (as
// MigrationCommitMetadata's), so UNCOMMITTED_* strategies resume from it.
std::string CarriedCommitMetadata(const std::string& from_group);

// Every committed offset of `topics` in `from` becomes a partition node
// under to.zk_root/to.spout_id in storm-kafka's JSON and paths (a {topic}/
// level when there are several topics), each with a journal entry. Refused
// while `to` holds a node of a partition the group never committed (NEW
// would resume from it).
absl::StatusOr<int> CarryGroupToZk(const GroupOffsetsSite& from, const ZkOffsetsSite& to,
                                   const std::vector<std::string>& topics);

// Every partition node of `topics` under `from` copied under `to`; refused,
// as CarryGroupToZk, while `to` holds a node of a partition `from` lacks.
absl::StatusOr<int> CarryZkToZk(const ZkOffsetsSite& from, const ZkOffsetsSite& to,
                                const std::vector<std::string>& topics);

// Every committed offset of `topics` in `from` committed to `to` (a simple
// commit, which a group with members refuses).
absl::StatusOr<int> CarryGroupToGroup(const GroupOffsetsSite& from, const GroupOffsetsSite& to,
                                      const std::vector<std::string>& topics);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_OFFSETS_OFFSET_CARRY_H_
