#include "common/kafka/group_offsets_admin.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/status_macros.h"
#include "common/kafka/conf.h"

namespace tempest::kafka {
namespace {

// The probe of a broker that cannot list groups: a partition no topic can
// have, of a topic name nobody uses, so the probe never commits anything.
constexpr char kProbeTopic[] = "tempest-group-admin-probe";
constexpr int kProbePartition = INT_MAX;

// The answers of a group that refuses a commit from outside it: it has
// members (or, on librdkafka's mock cluster, had them).
bool RefusedAsOutsider(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID:
    case RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID:
      return true;
    default:
      return false;
  }
}

std::string Name(const TopicPartition& tp) { return absl::StrCat(tp.topic, "/", tp.partition); }

int TimeoutMs(std::chrono::milliseconds timeout) {
  return static_cast<int>(std::min<int64_t>(timeout.count(), INT_MAX));
}

}  // namespace

absl::StatusOr<std::unique_ptr<GroupOffsetsAdmin>> GroupOffsetsAdmin::Create(
    GroupOffsetsAdminOptions options) {
  if (options.bootstrap_servers.empty()) {
    return absl::InvalidArgumentError("the consumer group admin needs bootstrap servers");
  }
  return std::unique_ptr<GroupOffsetsAdmin>(new GroupOffsetsAdmin(std::move(options)));
}

GroupOffsetsAdmin::~GroupOffsetsAdmin() = default;

absl::StatusOr<rd_kafka_t*> GroupOffsetsAdmin::ClientFor(const std::string& group) {
  if (group.empty()) return absl::InvalidArgumentError("a consumer group needs an id");
  if (auto it = clients_.find(group); it != clients_.end()) return it->second.get();
  Settings props = {
      {"bootstrap.servers", options_.bootstrap_servers},
      {"group.id", group},
      {"client.id", options_.client_id},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"allow.auto.create.topics", "false"},
      {"log_level", "3"},
  };
  ASSIGN_OR_RETURN(ConfHandle conf, BuildConf(props, "Kafka property $0: $1"));
  absl::StatusOr<ClientHandle> client = NewClient(ClientType::kConsumer, std::move(conf));
  if (!client.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create a Kafka client: ", client.status().message()));
  }
  rd_kafka_t* rk = client->get();
  clients_.emplace(group, *std::move(client));
  return rk;
}

absl::StatusOr<std::vector<CommittedGroupOffset>> GroupOffsetsAdmin::ReadCommitted(
    const std::string& group, const std::vector<TopicPartition>& partitions) {
  ASSIGN_OR_RETURN(rd_kafka_t* rk, ClientFor(group));
  std::vector<CommittedGroupOffset> out;
  if (partitions.empty()) return out;
  PartitionListHandle list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
  for (const TopicPartition& tp : partitions) {
    rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
  }
  const rd_kafka_resp_err_t err = rd_kafka_committed(rk, list.get(), TimeoutMs(options_.timeout));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    const std::string text = absl::StrCat("cannot read the committed offsets of consumer group ",
                                          group, ": ", rd_kafka_err2str(err));
    return err == RD_KAFKA_RESP_ERR__TIMED_OUT ? absl::DeadlineExceededError(text)
                                               : absl::UnavailableError(text);
  }
  for (const TopicPartition& tp : partitions) {
    const rd_kafka_topic_partition_t* e =
        rd_kafka_topic_partition_list_find(list.get(), tp.topic.c_str(), tp.partition);
    if (e == nullptr) {
      return absl::InternalError(absl::StrCat("Kafka did not answer for ", Name(tp)));
    }
    if (e->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
      return absl::NotFoundError(absl::StrCat("Kafka has no partition ", Name(tp)));
    }
    if (e->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return absl::UnavailableError(absl::StrCat("cannot read the committed offset of ", Name(tp),
                                                 " in group ", group, ": ",
                                                 rd_kafka_err2str(e->err)));
    }
    CommittedGroupOffset o;
    o.partition = tp;
    o.offset = e->offset >= 0 ? e->offset : -1;
    if (e->metadata != nullptr && e->metadata_size > 0) {
      o.metadata.assign(static_cast<const char*>(e->metadata), e->metadata_size);
    }
    out.push_back(std::move(o));
  }
  return out;
}

absl::StatusOr<std::map<TopicPartition, int>> GroupOffsetsAdmin::SendCommit(
    const std::string& group, const std::map<TopicPartition, int64_t>& offsets,
    const std::string& metadata) {
  ASSIGN_OR_RETURN(rd_kafka_t* rk, ClientFor(group));
  PartitionListHandle list(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
  for (const auto& [tp, offset] : offsets) {
    if (offset < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("offset ", offset, " of ", Name(tp), " is negative"));
    }
    rd_kafka_topic_partition_t* e =
        rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
    e->offset = offset;
    if (!metadata.empty()) {
      // Freed by the list (librdkafka frees metadata with free()).
      e->metadata = std::malloc(metadata.size());
      std::memcpy(e->metadata, metadata.data(), metadata.size());
      e->metadata_size = metadata.size();
    }
  }
  // The answer comes back on our own queue, so the wait is bounded.
  QueueHandle queue(rd_kafka_queue_new(rk));
  if (rd_kafka_resp_err_t err = rd_kafka_commit_queue(rk, list.get(), queue.get(), nullptr,
                                                      nullptr);
      err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(
        absl::StrCat("cannot commit to consumer group ", group, ": ", rd_kafka_err2str(err)));
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return absl::DeadlineExceededError(absl::StrCat(
          "consumer group ", group, " did not answer the commit within ", options_.timeout.count(),
          " ms; it may or may not have been applied"));
    }
    rd_kafka_event_t* ev = rd_kafka_queue_poll(queue.get(), TimeoutMs(left));
    if (ev == nullptr) continue;
    if (rd_kafka_event_type(ev) != RD_KAFKA_EVENT_OFFSET_COMMIT) {
      rd_kafka_event_destroy(ev);
      continue;
    }
    const rd_kafka_resp_err_t err = rd_kafka_event_error(ev);
    const rd_kafka_topic_partition_list_t* answered = rd_kafka_event_topic_partition_list(ev);
    std::map<TopicPartition, int> result;
    for (const auto& [tp, offset] : offsets) {
      const rd_kafka_topic_partition_t* e =
          answered == nullptr
              ? nullptr
              : rd_kafka_topic_partition_list_find(answered, tp.topic.c_str(), tp.partition);
      result[tp] = e != nullptr && e->err != RD_KAFKA_RESP_ERR_NO_ERROR ? e->err
                   : e != nullptr                                      ? RD_KAFKA_RESP_ERR_NO_ERROR
                                                                       : err;
    }
    rd_kafka_event_destroy(ev);
    return result;
  }
}

absl::Status GroupOffsetsAdmin::Commit(const std::string& group,
                                       const std::map<TopicPartition, int64_t>& offsets,
                                       const std::string& metadata) {
  if (offsets.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(auto answer, SendCommit(group, offsets, metadata));
  std::vector<std::string> failed;
  bool refused = false;
  for (const auto& [tp, code] : answer) {
    const auto err = static_cast<rd_kafka_resp_err_t>(code);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    refused = refused || RefusedAsOutsider(err);
    failed.push_back(absl::StrCat(Name(tp), " (", rd_kafka_err2name(err), ")"));
  }
  if (failed.empty()) return absl::OkStatus();
  const std::string list = absl::StrJoin(failed, ", ");
  if (refused) {
    return absl::FailedPreconditionError(absl::StrCat(
        "consumer group ", group, " refused the commit from outside the group: it has members; ",
        "not committed: ", list));
  }
  return absl::UnavailableError(
      absl::StrCat("consumer group ", group, " did not commit ", list));
}

absl::StatusOr<ConsumerGroupMembers> GroupOffsetsAdmin::Members(const std::string& group) {
  ASSIGN_OR_RETURN(rd_kafka_t* rk, ClientFor(group));
  ConsumerGroupMembers out;
  const struct rd_kafka_group_list* groups = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_list_groups(rk, group.c_str(), &groups, TimeoutMs(options_.timeout));
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.listed = true;
    for (int i = 0; i < groups->group_cnt; ++i) {
      const rd_kafka_group_info& info = groups->groups[i];
      if (info.group == nullptr || group != info.group) continue;
      if (info.err != RD_KAFKA_RESP_ERR_NO_ERROR &&
          info.err != RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) {
        const std::string text = absl::StrCat("cannot describe consumer group ", group, ": ",
                                              rd_kafka_err2str(info.err));
        rd_kafka_group_list_destroy(groups);
        return absl::UnavailableError(text);
      }
      out.state = info.state != nullptr ? info.state : "";
      for (int m = 0; m < info.member_cnt; ++m) {
        const rd_kafka_group_member_info& member = info.members[m];
        out.members.push_back(ConsumerGroupMember{
            member.member_id != nullptr ? member.member_id : "",
            member.client_id != nullptr ? member.client_id : "",
            member.client_host != nullptr ? member.client_host : ""});
      }
    }
    rd_kafka_group_list_destroy(groups);
    if (out.state.empty()) out.state = "Dead";  // the coordinator does not know it
    return out;
  }
  if (groups != nullptr) rd_kafka_group_list_destroy(groups);
  if (err != RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE) {
    return absl::UnavailableError(absl::StrCat("cannot list the members of consumer group ", group,
                                               ": ", rd_kafka_err2str(err)));
  }
  // No ListGroups / DescribeGroups (librdkafka's mock cluster): ask the
  // group whether it takes a commit from outside, for a partition that does
  // not exist, so nothing can be written.
  absl::StatusOr<std::map<TopicPartition, int>> probe =
      SendCommit(group, {{TopicPartition{kProbeTopic, kProbePartition}, 0}}, "");
  if (!probe.ok()) {
    return absl::Status(probe.status().code(),
                        absl::StrCat("cannot tell whether consumer group ", group,
                                     " has members: ", probe.status().message()));
  }
  for (const auto& [tp, code] : *probe) {
    out.refuses_outside_commits =
        out.refuses_outside_commits || RefusedAsOutsider(static_cast<rd_kafka_resp_err_t>(code));
  }
  return out;
}

}  // namespace tempest::kafka
