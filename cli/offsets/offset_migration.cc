#include "cli/offsets/offset_migration.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/status_macros.h"
#include "spout/kafka/offsets/offset_admin.h"
#include "spout/kafka/offsets/offset_layout.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"

namespace tempest::cli {

// The spout's own reads of what it stored (spout/kafka/offsets/).
using spout::AddKafkaLag;
using spout::CheckOwnsTopic;
using spout::ListStoredOffsets;
using spout::OffsetNodePath;
using spout::OwnerNodePath;
using spout::ReadSpoutLayout;
using spout::SpoutLayout;
using spout::StoredPartitionOffset;
namespace {

std::string Name(const std::string& topic, int partition) {
  return absl::StrCat(topic, "/", partition);
}

std::string Root(const std::string& zk_root) {
  std::string root = zk_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root == "/" ? "" : root;
}

// A live owner node of the partition in either layout (flat, {topic}/).
StoredPartitionOffset OwnerOf(coord::ZkSession& zk, const OffsetMigrationRequest& r,
                              const std::string& topic, int partition) {
  StoredPartitionOffset owner;
  for (bool topic_level : {false, true}) {
    ReadOwner(zk, OwnerNodePath(r.zk_root, r.spout_id, topic, partition, topic_level), owner);
    if (owner.owner_session != 0) break;
  }
  return owner;
}

std::string MembersRefusal(const std::string& group, const kafka::ConsumerGroupMembers& m) {
  if (!m.listed) {
    return absl::StrCat(
        "consumer group ", group, " refuses commits from outside the group, so it has members: ",
        "stop the storm-kafka-client spout (or other consumer) using it first (this Kafka cannot "
        "list members; librdkafka's mock cluster, tempest dev-kafka, also keeps refusing once any "
        "member has ever joined: migrate into a group.id no consumer has used)");
  }
  std::vector<std::string> clients;
  for (const auto& member : m.members) {
    clients.push_back(absl::StrCat(member.client_id.empty() ? "?" : member.client_id, "@",
                                   member.client_host.empty() ? "?" : member.client_host));
  }
  return absl::StrCat("consumer group ", group, " has ", m.members.size(), " live member",
                      m.members.size() == 1 ? "" : "s", " (", absl::StrJoin(clients, ", "),
                      ", state ", m.state, "): a storm-kafka-client spout (or another consumer) ",
                      "is running; stop it before migrating");
}

}  // namespace

const char* MigrationActionName(MigrationAction action) {
  switch (action) {
    case MigrationAction::kWrite:
      return "write";
    case MigrationAction::kAlreadyCommitted:
      return "already-committed";
    case MigrationAction::kNoStoredOffset:
      return "no-zookeeper-offset";
    case MigrationAction::kRefused:
      return "refused";
  }
  return "?";
}

int OffsetMigrationPlan::Writes() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [](const auto& r) {
    return r.action == MigrationAction::kWrite;
  }));
}

std::string MigrationCommitMetadata(const std::string& zk_root, const std::string& spout_id) {
  nlohmann::json doc = {
      {"topologyId", absl::StrCat("migrated-from-zookeeper:", Root(zk_root), "/", spout_id)},
      {"taskId", -1},
      {"threadName", "tempest migrate offsets"}};
  return doc.dump();
}

namespace {

// A consumer group's commits, by partition.
using CommittedOffsets = std::map<kafka::TopicPartition, kafka::CommittedGroupOffset>;

// Only topics the spout has offsets of: a misspelt one is refused before
// Kafka is asked about it (which might create it).
absl::Status CheckRequestedTopics(coord::ZkSession& zk, const OffsetMigrationRequest& request) {
  if (request.topics.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const SpoutLayout layout,
                   ReadSpoutLayout(zk, request.zk_root, request.spout_id));
  for (const std::string& topic : request.topics) {
    if (absl::Status s = CheckOwnsTopic(layout, topic, /*seed=*/false); !s.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(s.message(), "; nothing to migrate"));
    }
  }
  return absl::OkStatus();
}

// A flat-layout node that does not parse names no topic: it is the
// topic of the other flat nodes when they agree on one.
void NameFlatTopics(const OffsetMigrationRequest& request,
                    std::vector<StoredPartitionOffset>& listed) {
  std::set<std::string> flat_topics;
  for (const StoredPartitionOffset& s : listed) {
    if (s.state && s.path == OffsetNodePath(request.zk_root, request.spout_id, s.topic,
                                            s.partition, false)) {
      flat_topics.insert(s.topic);
    }
  }
  for (StoredPartitionOffset& s : listed) {
    if (s.topic.empty() && flat_topics.size() == 1) s.topic = *flat_topics.begin();
  }
}

// The offsets of the requested topics (all of them when none is named); a
// node without a topic is kept, for its refusal.
std::vector<StoredPartitionOffset> OfRequestedTopics(const OffsetMigrationRequest& request,
                                                     std::vector<StoredPartitionOffset> listed) {
  std::vector<StoredPartitionOffset> stored;
  for (StoredPartitionOffset& s : listed) {
    if (request.topics.empty() || s.topic.empty() ||
        std::find(request.topics.begin(), request.topics.end(), s.topic) != request.topics.end()) {
      stored.push_back(std::move(s));
    }
  }
  return stored;
}

// storm-kafka's offsets under {zk_root}/{spout_id} of the requested topics,
// with Kafka's log range, and every partition of the topics (stored or not).
absl::StatusOr<std::vector<StoredPartitionOffset>> ReadStoredOffsets(
    coord::ZkSession& zk, const OffsetMigrationRequest& request) {
  const std::string base = absl::StrCat(Root(request.zk_root), "/", request.spout_id);
  absl::StatusOr<std::vector<StoredPartitionOffset>> listed =
      ListStoredOffsets(zk, request.zk_root, request.spout_id);
  if (!listed.ok()) {
    if (absl::IsNotFound(listed.status())) {
      return absl::NotFoundError(absl::StrCat("no storm-kafka offsets under ", base));
    }
    return listed.status();
  }
  RETURN_IF_ERROR(CheckRequestedTopics(zk, request));
  NameFlatTopics(request, *listed);
  std::vector<StoredPartitionOffset> stored = OfRequestedTopics(request, *std::move(listed));
  if (stored.empty() && request.topics.empty()) {
    return absl::NotFoundError(absl::StrCat("no storm-kafka offsets under ", base));
  }
  if (absl::Status s = AddKafkaLag(request.bootstrap_servers, stored, request.timeout,
                                   request.topics, request.zk_root, request.spout_id);
      !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("cannot read the topics' partitions from Kafka: ",
                                               s.message()));
  }
  return stored;
}

// One partition's row as ZooKeeper and Kafka's log range describe it,
// refused (the reason added to `refusals`) when its node does not parse or
// Kafka has no log range for an offset stored in ZooKeeper.
OffsetMigrationRow RowOf(coord::ZkSession& zk, const OffsetMigrationRequest& request,
                         const StoredPartitionOffset& s, std::vector<std::string>& refusals) {
  OffsetMigrationRow row;
  row.topic = s.topic;
  row.partition = s.partition;
  row.log_start_offset = s.log_start_offset;
  row.log_end_offset = s.log_end_offset;
  if (s.stored) {
    row.zk_path = s.path;
    if (s.state) {
      row.zk_offset = s.state->offset;
      row.zk_topology_id = s.state->topology_id;
    }
  }
  if (s.owner_session != 0) {
    row.owner = s.owner;
  } else if (StoredPartitionOffset owner = OwnerOf(zk, request, s.topic, s.partition);
             owner.owner_session != 0) {
    row.owner = owner.owner;
  }
  if (!s.parse_error.empty()) {
    refusals.push_back(absl::StrCat(
        s.topic.empty() ? absl::StrCat("partition ", s.partition) : Name(s.topic, s.partition),
        ": the ZooKeeper node ", s.path, " does not parse (", s.parse_error,
        "); fix it with tempest offsets set first"));
    row.action = MigrationAction::kRefused;
    row.note = "unreadable ZooKeeper node";
  }
  if (!row.log_end_offset.has_value() && row.zk_offset.has_value()) {
    refusals.push_back(absl::StrCat(Name(s.topic, s.partition),
                                    ": Kafka does not answer for this partition (no log range; "
                                    "does the topic still have it?)"));
    row.action = MigrationAction::kRefused;
    row.note = "no log range from Kafka";
  }
  return row;
}

// Who is in the group: a group in use refuses the migration.
void AddGroupMembers(kafka::GroupOffsetsAdmin& group_admin, const std::string& group,
                     OffsetMigrationPlan& plan) {
  if (absl::StatusOr<kafka::ConsumerGroupMembers> members = group_admin.Members(group);
      members.ok()) {
    plan.members = *std::move(members);
    if (plan.members.InUse()) plan.refusals.push_back(MembersRefusal(group, plan.members));
  } else {
    plan.refusals.push_back(std::string(members.status().message()));
  }
}

// What the group has committed for `partitions` (none asked: nothing).
absl::StatusOr<CommittedOffsets> ReadGroupCommits(
    kafka::GroupOffsetsAdmin& group_admin, const std::string& group,
    const std::vector<kafka::TopicPartition>& partitions) {
  CommittedOffsets committed;
  if (partitions.empty()) return committed;
  ASSIGN_OR_RETURN(std::vector<kafka::CommittedGroupOffset> read,
                   group_admin.ReadCommitted(group, partitions));
  for (kafka::CommittedGroupOffset& c : read) committed[c.partition] = std::move(c);
  return committed;
}

// The offset to commit for the row's ZooKeeper offset: itself inside Kafka's
// log; outside it, the nearest end with --allow-out-of-range (said in the
// row's note), else nothing (refused, the reason added to `refusals`).
std::optional<int64_t> WriteTarget(const OffsetMigrationRequest& request, const std::string& name,
                                   OffsetMigrationRow& row, std::vector<std::string>& refusals) {
  const int64_t target = *row.zk_offset;
  const int64_t start = *row.log_start_offset;
  const int64_t end = *row.log_end_offset;
  if (target >= start && target <= end) return target;
  if (!request.allow_out_of_range) {
    refusals.push_back(absl::StrCat(
        name, ": the ZooKeeper offset ", target, " is outside Kafka's log [", start, ", ", end, "]",
        target < start ? " (retention deleted records the spout had not read)"
                       : " (beyond the log end: was the topic recreated?)",
        "; add --allow-out-of-range to write ", target < start ? start : end, " instead"));
    row.action = MigrationAction::kRefused;
    row.note = "outside the log";
    return std::nullopt;
  }
  row.note = target < start
                 ? absl::StrCat("clamped from ", target, " to the log start (", start - target,
                                " records deleted before they were read)")
                 : absl::StrCat("clamped from ", target, " to the log end");
  return target < start ? start : end;
}

// Decides the row: refused while a storm-kafka spout owns the partition,
// nothing to do without a ZooKeeper offset or when the group has it already,
// refused over a different commit of the group unless --overwrite; else a
// write. Each refusal's reason is added to `refusals`.
void DecideRow(const OffsetMigrationRequest& request, OffsetMigrationRow& row,
               std::vector<std::string>& refusals) {
  const std::string name = Name(row.topic, row.partition);
  if (!row.owner.empty()) {
    refusals.push_back(absl::StrCat(
        name, " is owned by a running storm-kafka spout (", row.owner,
        "): stop the topology first (its owner node under @owners goes away when it stops)"));
    row.action = MigrationAction::kRefused;
    row.note = "owned by a running storm-kafka spout";
    return;
  }
  if (row.action == MigrationAction::kRefused) return;
  if (!row.zk_offset.has_value()) {
    row.action = MigrationAction::kNoStoredOffset;
    row.note = "nothing in ZooKeeper to migrate";
    return;
  }
  const std::optional<int64_t> target = WriteTarget(request, name, row, refusals);
  if (!target.has_value()) return;
  row.write = *target;
  if (row.group_offset.has_value() && *row.group_offset == *target) {
    row.action = MigrationAction::kAlreadyCommitted;
    return;
  }
  if (row.group_offset.has_value() && !request.overwrite) {
    refusals.push_back(absl::StrCat(
        name, ": consumer group ", request.group, " already has offset ", *row.group_offset,
        " committed", row.group_metadata.empty() ? "" : absl::StrCat(" (", row.group_metadata, ")"),
        ", ZooKeeper has ", *target, "; add --overwrite to replace it"));
    row.action = MigrationAction::kRefused;
    row.note = "the group has a different commit";
    return;
  }
  if (row.group_offset.has_value()) {
    row.note = absl::StrCat(row.note.empty() ? "" : absl::StrCat(row.note, "; "),
                            "replaces the group's ", *row.group_offset);
  }
  row.action = MigrationAction::kWrite;
}

}  // namespace

absl::StatusOr<OffsetMigrationPlan> PlanOffsetMigration(coord::ZkSession& zk,
                                                        kafka::GroupOffsetsAdmin& group_admin,
                                                        const OffsetMigrationRequest& request) {
  OffsetMigrationPlan plan;
  plan.request = request;
  plan.metadata = MigrationCommitMetadata(request.zk_root, request.spout_id);
  ASSIGN_OR_RETURN(const std::vector<StoredPartitionOffset> stored, ReadStoredOffsets(zk, request));
  std::vector<kafka::TopicPartition> in_kafka;
  for (const StoredPartitionOffset& s : stored) {
    plan.rows.push_back(RowOf(zk, request, s, plan.refusals));
    if (s.log_end_offset.has_value()) in_kafka.push_back({s.topic, s.partition});
  }
  AddGroupMembers(group_admin, request.group, plan);
  ASSIGN_OR_RETURN(const CommittedOffsets committed,
                   ReadGroupCommits(group_admin, request.group, in_kafka));
  for (OffsetMigrationRow& row : plan.rows) {
    if (auto it = committed.find({row.topic, row.partition});
        it != committed.end() && it->second.offset >= 0) {
      row.group_offset = it->second.offset;
      row.group_metadata = it->second.metadata;
    }
    DecideRow(request, row, plan.refusals);
  }
  return plan;
}

namespace {

// Nothing may be written over refusals, nor once a storm-kafka spout started
// since the plan was made: it would go on committing to ZooKeeper and
// reading past what the group gets.
absl::Status CheckStillWritable(coord::ZkSession& zk, const OffsetMigrationPlan& plan) {
  if (!plan.refusals.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the plan was refused (", plan.refusals.size(), " reasons); nothing written"));
  }
  for (const OffsetMigrationRow& row : plan.rows) {
    StoredPartitionOffset owner = OwnerOf(zk, plan.request, row.topic, row.partition);
    if (owner.owner_session != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          Name(row.topic, row.partition), " is now owned by a running storm-kafka spout (",
          owner.owner, "); nothing written"));
    }
  }
  return absl::OkStatus();
}

// The group's offsets read back after the commit.
absl::StatusOr<CommittedOffsets> ReadBack(kafka::GroupOffsetsAdmin& group_admin,
                                          const std::string& group,
                                          const std::vector<kafka::TopicPartition>& check) {
  absl::StatusOr<std::vector<kafka::CommittedGroupOffset>> read =
      group_admin.ReadCommitted(group, check);
  if (!read.ok()) {
    return absl::Status(read.status().code(),
                        absl::StrCat("committed, but cannot read the group's offsets back: ",
                                     read.status().message()));
  }
  CommittedOffsets back;
  for (kafka::CommittedGroupOffset& c : *read) back[c.partition] = std::move(c);
  return back;
}

// ZooKeeper's offsets read again, to see a spout that ran meanwhile; a
// failed read is one of `problems`.
std::map<kafka::TopicPartition, std::optional<int64_t>> ReadZkOffsetsAgain(
    coord::ZkSession& zk, const OffsetMigrationRequest& request,
    std::vector<std::string>& problems) {
  std::map<kafka::TopicPartition, std::optional<int64_t>> zk_now;
  if (auto again = ListStoredOffsets(zk, request.zk_root, request.spout_id); again.ok()) {
    for (const StoredPartitionOffset& s : *again) {
      zk_now[{s.topic, s.partition}] =
          s.state ? std::optional<int64_t>(s.state->offset) : std::nullopt;
    }
  } else {
    problems.push_back(absl::StrCat("cannot read the ZooKeeper offsets again: ",
                                    again.status().message()));
  }
  return zk_now;
}

// Compares a written row with what the group and ZooKeeper hold now; each
// difference is one of `problems`. Fills the row's read_back.
void VerifyRow(const OffsetMigrationPlan& plan, CommittedOffsets& back,
               const std::map<kafka::TopicPartition, std::optional<int64_t>>& zk_now,
               OffsetMigrationRow& row, std::vector<std::string>& problems) {
  const std::string name = Name(row.topic, row.partition);
  const std::string& group = plan.request.group;
  const kafka::CommittedGroupOffset& got = back[{row.topic, row.partition}];
  if (got.offset >= 0) {
    row.read_back = got.offset;
    row.read_back_metadata = got.metadata;
  }
  if (got.offset != *row.write) {
    problems.push_back(absl::StrCat(name, ": consumer group ", group, " holds ",
                                    got.offset >= 0 ? absl::StrCat(got.offset) : "no offset",
                                    ", the plan wrote ", *row.write));
  } else if (row.action == MigrationAction::kWrite && got.metadata != plan.metadata) {
    problems.push_back(absl::StrCat(name, ": consumer group ", group,
                                    " holds the offset with metadata '", got.metadata,
                                    "', not the migration's (someone else committed it)"));
  }
  if (auto it = zk_now.find({row.topic, row.partition});
      it != zk_now.end() && it->second != row.zk_offset) {
    problems.push_back(absl::StrCat(name, ": the ZooKeeper offset moved from ",
                                    row.zk_offset.value_or(-1), " to ", it->second.value_or(-1),
                                    " while migrating (a storm-kafka spout ran?)"));
  }
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExecuteOffsetMigration(
    coord::ZkSession& zk, kafka::GroupOffsetsAdmin& group_admin, OffsetMigrationPlan& plan) {
  const OffsetMigrationRequest& request = plan.request;
  RETURN_IF_ERROR(CheckStillWritable(zk, plan));
  std::map<kafka::TopicPartition, int64_t> writes;
  std::vector<kafka::TopicPartition> check;
  for (const OffsetMigrationRow& row : plan.rows) {
    if (!row.write.has_value()) continue;
    check.push_back({row.topic, row.partition});
    if (row.action == MigrationAction::kWrite) writes[{row.topic, row.partition}] = *row.write;
  }
  RETURN_IF_ERROR(group_admin.Commit(request.group, writes, plan.metadata));

  std::vector<std::string> problems;
  ASSIGN_OR_RETURN(CommittedOffsets back, ReadBack(group_admin, request.group, check));
  const std::map<kafka::TopicPartition, std::optional<int64_t>> zk_now =
      ReadZkOffsetsAgain(zk, request, problems);
  for (OffsetMigrationRow& row : plan.rows) {
    if (row.write.has_value()) VerifyRow(plan, back, zk_now, row, problems);
  }
  return problems;
}

}  // namespace tempest::cli
