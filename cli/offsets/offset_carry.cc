#include "cli/offsets/offset_carry.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/log_text.h"
#include "common/core/status_macros.h"
#include "nlohmann/json.hpp"
#include "spout/kafka/offsets/offset_admin.h"

namespace tempest::cli {
namespace {

constexpr std::chrono::milliseconds kKafkaTimeout{10000};

// The partition nodes under site (none: empty), each with its owner.
absl::StatusOr<std::vector<spout::StoredPartitionOffset>> NodesOf(const ZkOffsetsSite& site) {
  absl::StatusOr<std::vector<spout::StoredPartitionOffset>> stored =
      spout::ListStoredOffsets(*site.zk, site.zk_root, site.spout_id);
  if (absl::IsNotFound(stored.status())) return std::vector<spout::StoredPartitionOffset>{};
  return stored;
}

// The ephemeral owner node at `path`, if it is one: a spout holds it.
absl::StatusOr<bool> IsOwner(const ZkOffsetsSite& site, const std::string& path) {
  auto node = site.zk->Get(path);
  if (absl::IsNotFound(node.status())) return false;  // released meanwhile
  RETURN_IF_ERROR(node.status());
  return node->stat.ephemeral_owner != 0;
}

// A group whose coordinator lists members still has consumers that commit.
// Brokers that cannot list them (dev Kafka) are trusted to the cutover,
// which has removed the old topology and waited out its kill wait.
absl::Status CheckNoMembers(const GroupOffsetsSite& site) {
  ASSIGN_OR_RETURN(const kafka::ConsumerGroupMembers members, site.admin->Members(site.group));
  if (!members.listed || members.members.empty()) return absl::OkStatus();
  std::vector<std::string> clients;
  for (const kafka::ConsumerGroupMember& m : members.members) {
    clients.push_back(absl::StrCat(m.client_id, "@", m.client_host));
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "consumer group ", site.group, " still has ",
      core::Counted(static_cast<int64_t>(clients.size()), "member"), " (",
      absl::StrJoin(clients, ", "), "); its consumers must stop before its offsets are carried"));
}

// The group's commits of every partition of `topics` (offset -1: none).
absl::StatusOr<std::vector<kafka::CommittedGroupOffset>> CommitsOf(
    const GroupOffsetsSite& site, const std::vector<std::string>& topics) {
  ASSIGN_OR_RETURN(const std::unique_ptr<spout::OffsetsKafka> kafka,
                   spout::OffsetsKafka::Connect(site.bootstrap_servers, kKafkaTimeout));
  std::vector<kafka::TopicPartition> partitions;
  for (const std::string& topic : topics) {
    ASSIGN_OR_RETURN(const std::vector<int> numbers, kafka->Partitions(topic));
    for (int p : numbers) partitions.push_back({topic, p});
  }
  return site.admin->ReadCommitted(site.group, partitions);
}

// One partition node written under `to` as `tempest offsets set` writes it,
// and read back.
absl::Status WriteNode(const ZkOffsetsSite& to, const std::string& topic, int partition,
                       int64_t offset, bool topic_level) {
  spout::SetOffsetRequest request;
  request.zk_root = to.zk_root;
  request.spout_id = to.spout_id;
  request.topic = topic;
  request.partition = partition;
  request.offset = offset;
  request.topic_level = topic_level;
  request.actor = kUpgradeActor;
  ASSIGN_OR_RETURN(const spout::StoredPartitionOffset written,
                   spout::SetStoredOffset(*to.zk, request));
  if (!written.state.has_value() || written.state->offset != offset) {
    return absl::DataLossError(absl::StrCat("read back ", written.path, ": not offset ", offset));
  }
  return absl::OkStatus();
}

// A node under `to` for a partition the source never committed would make
// NEW resume from an offset the old consumers never reached or passed (a
// node left there by some earlier topology): which is right is the
// operator's call, so nothing is written.
absl::Status CheckNoStaleNodes(const std::vector<kafka::CommittedGroupOffset>& commits,
                               const ZkOffsetsSite& to) {
  ASSIGN_OR_RETURN(const std::vector<spout::StoredPartitionOffset> nodes, NodesOf(to));
  for (const spout::StoredPartitionOffset& n : nodes) {
    const bool committed = std::any_of(commits.begin(), commits.end(), [&](const auto& c) {
      return c.offset >= 0 && c.partition.partition == n.partition &&
             (n.topic.empty() || c.partition.topic == n.topic);
    });
    if (committed || !n.state.has_value()) continue;
    return absl::FailedPreconditionError(absl::StrCat(
        n.path, " holds offset ", n.state->offset,
        " of a partition the source never committed, so NEW would resume there: set it "
        "(tempest offsets set) or remove it first"));
  }
  return absl::OkStatus();
}

}  // namespace

// A live storm-kafka owner under `site` means a spout still reads there;
// nothing may be written until it has gone. The owner nodes are listed
// themselves (flat, or one {topic}/ level down), since an owner may hold a
// partition that has no offset node yet.
absl::Status CheckZkUnowned(const ZkOffsetsSite& site) {
  const std::string any = spout::OwnerNodePath(site.zk_root, site.spout_id, "t", 0, false);
  const std::string owners = any.substr(0, any.rfind('/'));
  absl::StatusOr<std::vector<std::string>> children = site.zk->Children(owners);
  if (absl::IsNotFound(children.status())) return absl::OkStatus();
  RETURN_IF_ERROR(children.status());
  std::vector<std::string> paths;
  for (const std::string& c : *children) {
    const std::string path = absl::StrCat(owners, "/", c);
    if (c.rfind("partition_", 0) == 0) {
      paths.push_back(path);
      continue;
    }
    absl::StatusOr<std::vector<std::string>> nested = site.zk->Children(path);
    if (absl::IsNotFound(nested.status())) continue;
    RETURN_IF_ERROR(nested.status());
    for (const std::string& n : *nested) paths.push_back(absl::StrCat(path, "/", n));
  }
  for (const std::string& path : paths) {
    ASSIGN_OR_RETURN(const bool owned, IsOwner(site, path));
    if (!owned) continue;
    return absl::FailedPreconditionError(
        absl::StrCat(path,
                     " is owned by a running spout; its topology must stop before offsets "
                     "are carried"));
  }
  return absl::OkStatus();
}

std::string CarriedCommitMetadata(const std::string& from_group) {
  nlohmann::json doc = {{"topologyId", absl::StrCat("carried-from-group:", from_group)},
                        {"taskId", -1},
                        {"threadName", kUpgradeActor}};
  return doc.dump();
}

absl::StatusOr<int> CarryGroupToZk(const GroupOffsetsSite& from, const ZkOffsetsSite& to,
                                   const std::vector<std::string>& topics) {
  RETURN_IF_ERROR(CheckNoMembers(from));
  RETURN_IF_ERROR(CheckZkUnowned(to));
  ASSIGN_OR_RETURN(const std::vector<kafka::CommittedGroupOffset> commits, CommitsOf(from, topics));
  RETURN_IF_ERROR(CheckNoStaleNodes(commits, to));
  int written = 0;
  for (const kafka::CommittedGroupOffset& c : commits) {
    if (c.offset < 0) continue;  // never committed: NEW starts it by its own policy
    RETURN_IF_ERROR(
        WriteNode(to, c.partition.topic, c.partition.partition, c.offset, topics.size() > 1));
    ++written;
  }
  return written;
}

absl::StatusOr<int> CarryZkToZk(const ZkOffsetsSite& from, const ZkOffsetsSite& to,
                                const std::vector<std::string>& topics) {
  RETURN_IF_ERROR(CheckZkUnowned(from));
  RETURN_IF_ERROR(CheckZkUnowned(to));
  ASSIGN_OR_RETURN(const std::vector<spout::StoredPartitionOffset> nodes, NodesOf(from));
  std::vector<kafka::CommittedGroupOffset> source;  // what is copied, as commits
  for (const spout::StoredPartitionOffset& n : nodes) {
    if (!n.state.has_value()) continue;  // unreadable: the source's own problem, not copied
    // A one-topic spout's node may not name its topic.
    const std::string topic = !n.topic.empty() ? n.topic : topics.size() == 1 ? topics[0] : "";
    if (std::find(topics.begin(), topics.end(), topic) == topics.end()) continue;
    source.push_back({{topic, n.partition}, n.state->offset, ""});
  }
  RETURN_IF_ERROR(CheckNoStaleNodes(source, to));
  for (const kafka::CommittedGroupOffset& c : source) {
    RETURN_IF_ERROR(
        WriteNode(to, c.partition.topic, c.partition.partition, c.offset, topics.size() > 1));
  }
  return static_cast<int>(source.size());
}

absl::StatusOr<int> CarryGroupToGroup(const GroupOffsetsSite& from, const GroupOffsetsSite& to,
                                      const std::vector<std::string>& topics) {
  RETURN_IF_ERROR(CheckNoMembers(from));
  ASSIGN_OR_RETURN(const std::vector<kafka::CommittedGroupOffset> commits, CommitsOf(from, topics));
  std::map<kafka::TopicPartition, int64_t> offsets;
  std::vector<kafka::TopicPartition> partitions;
  for (const kafka::CommittedGroupOffset& c : commits) {
    if (c.offset >= 0) offsets[c.partition] = c.offset;
    if (c.offset >= 0) partitions.push_back(c.partition);
  }
  if (offsets.empty()) return 0;
  RETURN_IF_ERROR(to.admin->Commit(to.group, offsets, CarriedCommitMetadata(from.group)));
  ASSIGN_OR_RETURN(const std::vector<kafka::CommittedGroupOffset> back,
                   to.admin->ReadCommitted(to.group, partitions));
  for (const kafka::CommittedGroupOffset& b : back) {
    if (b.offset != offsets[b.partition]) {
      return absl::DataLossError(absl::StrCat("read back ", b.partition.topic, "/",
                                              b.partition.partition, " of group ", to.group, ": ",
                                              b.offset, ", not ", offsets[b.partition]));
    }
  }
  return static_cast<int>(offsets.size());
}

}  // namespace tempest::cli
