#include "common/kafka/group_member.h"

#include <librdkafka/rdkafka.h>

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/kafka/conf.h"
#include "common/os/limits.h"

namespace tempest::kafka {
namespace {

void RebalanceCallback(rd_kafka_t* /*rk*/, rd_kafka_resp_err_t err,
                       rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  static_cast<KafkaGroupMember*>(opaque)->OnRebalance(err, partitions);
}

void CommitCallback(rd_kafka_t* /*rk*/, rd_kafka_resp_err_t err,
                    rd_kafka_topic_partition_list_t* offsets, void* opaque) {
  static_cast<KafkaGroupMember*>(opaque)->OnCommitted(err, offsets);
}

// The coordinator's answers that mean "this member's generation is over":
// a rebalance went on without it, so its commits are refused for good.
bool IsFenced(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION:
    case RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID:
    case RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST:
      return true;
    default:
      return false;
  }
}

absl::Status CommitError(rd_kafka_resp_err_t err) {
  if (IsFenced(err)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the group refused the commit (", rd_kafka_err2str(err),
                     "): this member was rebalanced out of the group"));
  }
  return absl::UnavailableError(absl::StrCat("offset commit failed: ", rd_kafka_err2str(err)));
}

std::vector<GroupOffset> OffsetsOf(const rd_kafka_topic_partition_list_t& list) {
  std::vector<GroupOffset> out;
  out.reserve(list.cnt);
  for (int i = 0; i < list.cnt; ++i) {
    const rd_kafka_topic_partition_t& e = list.elems[i];
    GroupOffset o;
    o.partition = TopicPartition{e.topic, e.partition};
    o.offset = e.offset >= 0 ? e.offset : -1;
    if (e.metadata != nullptr && e.metadata_size > 0) {
      o.metadata.assign(static_cast<const char*>(e.metadata), e.metadata_size);
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KafkaGroupMember>> KafkaGroupMember::Join(
    const GroupMemberOptions& options) {
  if (options.group_id.empty()) return absl::InvalidArgumentError("a consumer group needs an id");
  if (options.topics.empty()) return absl::InvalidArgumentError("a consumer group needs topics");
  auto member = std::unique_ptr<KafkaGroupMember>(new KafkaGroupMember(options));
  Settings props = {
      {"bootstrap.servers", options.bootstrap_servers},
      {"group.id", options.group_id},
      {"client.id", options.client_id},
      // Offsets move only when the caller commits what its tuples finished.
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"partition.assignment.strategy", "roundrobin"},
      // A member that stops heartbeating (a stalled or killed worker) is
      // rebalanced out after 10 s, the Java client's default before
      // Kafka 3.0; librdkafka's own default is 45 s.
      {"session.timeout.ms", "10000"},
      {"allow.auto.create.topics", "false"},
      {"log_level", "3"},
  };
  for (const auto& [k, v] : options.properties) props[k] = v;
  ASSIGN_OR_RETURN(ConfHandle conf, BuildConf(props, "Kafka property $0: $1"));
  rd_kafka_conf_set_rebalance_cb(conf.get(), &RebalanceCallback);
  rd_kafka_conf_set_opaque(conf.get(), member.get());
  absl::StatusOr<ClientHandle> client = NewClient(ClientType::kConsumer, std::move(conf));
  if (!client.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create the consumer group member: ", client.status().message()));
  }
  member->rk_ = *std::move(client);
  rd_kafka_poll_set_consumer(member->rk_.get());
  member->consumer_queue_.reset(rd_kafka_queue_get_consumer(member->rk_.get()));
  PartitionListHandle topics(rd_kafka_topic_partition_list_new(options.topics.size()));
  for (const std::string& t : options.topics) {
    rd_kafka_topic_partition_list_add(topics.get(), t.c_str(), RD_KAFKA_PARTITION_UA);
  }
  if (rd_kafka_resp_err_t err = rd_kafka_subscribe(member->rk_.get(), topics.get()); err) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot subscribe to ", options.topics.front(), ": ", rd_kafka_err2str(err)));
  }
  if (absl::Status s = os::StartThread(member->thread_, "a Kafka consumer group member",
                                      [m = member.get()] { m->Run(); });
      !s.ok()) {
    return s;
  }
  return member;
}

KafkaGroupMember::~KafkaGroupMember() { Leave(std::chrono::seconds(5)); }

uint64_t KafkaGroupMember::Commit(std::vector<GroupOffset> offsets) {
  uint64_t id = 0;
  {
    absl::MutexLock lock(&mu_);
    id = next_commit_id_++;
    commits_.push_back(CommitRequest{id, std::move(offsets)});
  }
  if (consumer_queue_) rd_kafka_queue_yield(consumer_queue_.get());
  return id;
}

std::vector<GroupEvent> KafkaGroupMember::TakeEvents() {
  absl::MutexLock lock(&mu_);
  std::vector<GroupEvent> out;
  out.swap(events_);
  has_events_.store(false, std::memory_order_relaxed);
  return out;
}

void KafkaGroupMember::Push(GroupEvent event) {
  absl::MutexLock lock(&mu_);
  events_.push_back(std::move(event));
  has_events_.store(true, std::memory_order_release);
}

void KafkaGroupMember::Leave(std::chrono::milliseconds timeout) {
  std::call_once(left_, [this, timeout] {
    {
      absl::MutexLock lock(&mu_);
      stop_deadline_ = std::chrono::steady_clock::now() + timeout;
      stopping_.store(true);
    }
    if (consumer_queue_) rd_kafka_queue_yield(consumer_queue_.get());
    if (thread_.joinable()) thread_.join();
  });
}

void KafkaGroupMember::Run() {
  while (true) {
    CommitRequest request;
    bool have = false;
    {
      absl::MutexLock lock(&mu_);
      const bool late = stopping_.load() && std::chrono::steady_clock::now() >= stop_deadline_;
      if (!commits_.empty() && !late) {
        request = std::move(commits_.front());
        commits_.pop_front();
        have = true;
      } else if (stopping_.load()) {
        for (CommitRequest& r : commits_) {
          GroupEvent e;
          e.kind = GroupEvent::Kind::kCommitFailed;
          e.commit_id = r.id;
          e.offsets = std::move(r.offsets);
          e.status = absl::DeadlineExceededError("the member left before this commit was sent");
          events_.push_back(std::move(e));
          has_events_.store(true, std::memory_order_release);
        }
        commits_.clear();
        break;
      }
    }
    if (have) {
      SendCommit(request);
      continue;
    }
    // Serves the group protocol (rebalance callbacks run here). Records
    // never arrive (assigned partitions are paused); anything else the
    // consumer reports is retried by librdkafka itself.
    if (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_.get(), 500)) {
      rd_kafka_message_destroy(m);
    }
  }
  // Leaves the group (the revocation is reported like any other).
  rd_kafka_consumer_close(rk_.get());
}

void KafkaGroupMember::SendCommit(const CommitRequest& request) {
  PartitionListHandle list(rd_kafka_topic_partition_list_new(request.offsets.size()));
  for (const GroupOffset& o : request.offsets) {
    rd_kafka_topic_partition_t* e = rd_kafka_topic_partition_list_add(
        list.get(), o.partition.topic.c_str(), o.partition.partition);
    e->offset = o.offset;
    if (!o.metadata.empty()) {
      // Freed by the list (librdkafka frees metadata with free()).
      e->metadata = std::malloc(o.metadata.size());
      std::memcpy(e->metadata, o.metadata.data(), o.metadata.size());
      e->metadata_size = o.metadata.size();
    }
  }
  sending_ = &request;
  // No queue: the call blocks until the coordinator answers and serves
  // CommitCallback itself.
  const rd_kafka_resp_err_t err =
      rd_kafka_commit_queue(rk_.get(), list.get(), nullptr, &CommitCallback, this);
  const bool answered = sending_ == nullptr;
  sending_ = nullptr;
  if (!answered) OnCommittedRequest(request, err, list.get());
}

void KafkaGroupMember::OnCommitted(int error_code, const rd_kafka_topic_partition_list_t* offsets) {
  if (sending_ == nullptr) return;
  const CommitRequest* request = sending_;
  sending_ = nullptr;
  OnCommittedRequest(*request, static_cast<rd_kafka_resp_err_t>(error_code), offsets);
}

void KafkaGroupMember::OnCommittedRequest(const CommitRequest& request, int error_code,
                                          const rd_kafka_topic_partition_list_t* offsets) {
  const auto err = static_cast<rd_kafka_resp_err_t>(error_code);
  GroupEvent done;
  done.kind = GroupEvent::Kind::kCommitted;
  done.commit_id = request.id;
  GroupEvent failed;
  failed.kind = GroupEvent::Kind::kCommitFailed;
  failed.commit_id = request.id;
  rd_kafka_resp_err_t first_error = err;
  for (const GroupOffset& o : request.offsets) {
    rd_kafka_resp_err_t e = err;
    if (offsets != nullptr) {
      const rd_kafka_topic_partition_t* r = rd_kafka_topic_partition_list_find(
          offsets, o.partition.topic.c_str(), o.partition.partition);
      if (r != nullptr && r->err != RD_KAFKA_RESP_ERR_NO_ERROR) e = r->err;
    }
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
      done.offsets.push_back(o);
    } else {
      if (first_error == RD_KAFKA_RESP_ERR_NO_ERROR) first_error = e;
      failed.offsets.push_back(o);
    }
  }
  if (!done.offsets.empty()) Push(std::move(done));
  if (!failed.offsets.empty()) {
    failed.status = CommitError(first_error);
    Push(std::move(failed));
  }
}

std::optional<std::vector<GroupOffset>> KafkaGroupMember::ReadCommitted(
    const rd_kafka_topic_partition_list_t& partitions) {
  PartitionListHandle copy(rd_kafka_topic_partition_list_copy(&partitions));
  while (true) {
    if (rd_kafka_committed(rk_.get(), copy.get(), 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      return OffsetsOf(*copy);
    }
    if (stopping_.load()) return std::nullopt;
  }
}

void KafkaGroupMember::OnRebalance(int error_code, rd_kafka_topic_partition_list_t* partitions) {
  switch (static_cast<rd_kafka_resp_err_t>(error_code)) {
    case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS: {
      std::optional<std::vector<GroupOffset>> committed = ReadCommitted(*partitions);
      // Accept the assignment, but fetch nothing: position at the log end
      // and paused. The caller reads with its own reader.
      for (int i = 0; i < partitions->cnt; ++i) partitions->elems[i].offset = RD_KAFKA_OFFSET_END;
      rd_kafka_assign(rk_.get(), partitions);
      rd_kafka_pause_partitions(rk_.get(), partitions);
      if (committed.has_value()) {
        GroupEvent e;
        e.kind = GroupEvent::Kind::kAssigned;
        e.offsets = *std::move(committed);
        Push(std::move(e));
      }
      return;
    }
    case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS: {
      GroupEvent e;
      e.kind = GroupEvent::Kind::kRevoked;
      e.offsets = OffsetsOf(*partitions);
      Push(std::move(e));
      rd_kafka_assign(rk_.get(), nullptr);
      return;
    }
    default:
      rd_kafka_assign(rk_.get(), nullptr);
      return;
  }
}

}  // namespace tempest::kafka
