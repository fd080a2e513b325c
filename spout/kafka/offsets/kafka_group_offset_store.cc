#include "spout/kafka/offsets/kafka_group_offset_store.h"

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace tempest::spout {

using kafka::GroupEvent;
using Kind = OffsetStoreUpdate::Kind;

std::string KafkaGroupOffsetStore::CommitMetadata(const std::string& topology_id, int task_id) {
  nlohmann::json doc = {{"topologyId", topology_id},
                        {"taskId", task_id},
                        {"threadName", absl::StrCat("tempest-executor-", task_id)}};
  return doc.dump();
}

std::string KafkaGroupOffsetStore::TopologyOfMetadata(const std::string& metadata) {
  nlohmann::json doc = nlohmann::json::parse(metadata, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return "";
  auto it = doc.find("topologyId");
  return it != doc.end() && it->is_string() ? it->get<std::string>() : "";
}

absl::StatusOr<std::unique_ptr<KafkaGroupOffsetStore>> KafkaGroupOffsetStore::Create(
    Options options) {
  // What Join would refuse at once is refused here, so Open still fails on it.
  if (options.member.group_id.empty()) {
    return absl::InvalidArgumentError("a consumer group needs an id");
  }
  if (options.member.topics.empty()) {
    return absl::InvalidArgumentError("a consumer group needs topics");
  }
  return std::unique_ptr<KafkaGroupOffsetStore>(new KafkaGroupOffsetStore(std::move(options)));
}

void KafkaGroupOffsetStore::JoinIfWanted() {
  if (member_ != nullptr || closed_ || wanted_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_join_) return;
  absl::StatusOr<std::unique_ptr<kafka::KafkaGroupMember>> member =
      kafka::KafkaGroupMember::Join(options_.member);
  if (member.ok()) {
    member_ = *std::move(member);
    return;
  }
  next_join_ = now + kJoinRetry;
  for (const TopicPartition& tp : wanted_) {
    OffsetStoreUpdate u;
    u.kind = Kind::kReadFailed;
    u.partition = tp;
    u.status = absl::UnavailableError(absl::StrCat("cannot join consumer group ",
                                                   options_.member.group_id, ": ",
                                                   member.status().message()));
    updates_.push_back(std::move(u));
  }
}

KafkaGroupOffsetStore::~KafkaGroupOffsetStore() { Close(std::chrono::seconds(5)); }

void KafkaGroupOffsetStore::SetAssignment(std::vector<TopicPartition> partitions) {
  wanted_ = std::set<TopicPartition>(partitions.begin(), partitions.end());
  JoinIfWanted();
  for (auto& [tp, owned] : owned_) {
    if (!owned.reported && wanted_.count(tp) > 0) ReportAcquired(tp, owned);
  }
}

void KafkaGroupOffsetStore::ReportAcquired(const TopicPartition& tp, Owned& owned) {
  owned.reported = true;
  OffsetStoreUpdate u;
  u.kind = Kind::kAcquired;
  u.partition = tp;
  u.acquisition = owned.acquisition;
  u.stored = owned.stored;
  updates_.push_back(std::move(u));
}

void KafkaGroupOffsetStore::RequestCommit(std::vector<OffsetCommit> commits) {
  if (closed_) return;
  std::vector<kafka::GroupOffset> offsets;
  std::vector<SentCommit> sent;
  for (const OffsetCommit& c : commits) {
    auto it = owned_.find(c.partition);
    // A commit of an earlier ownership epoch is stale: the group moved on.
    if (it == owned_.end() || it->second.acquisition != c.acquisition) continue;
    offsets.push_back(kafka::GroupOffset{c.partition, c.state.offset, metadata_});
    sent.push_back(SentCommit{c.partition, c.acquisition, c.state.offset});
  }
  if (offsets.empty()) return;
  const uint64_t id = member_->Commit(std::move(offsets));
  in_flight_[id] = std::move(sent);
}

void KafkaGroupOffsetStore::OnEvent(GroupEvent& event) {
  switch (event.kind) {
    case GroupEvent::Kind::kAssigned:
      OnAssigned(event);
      return;
    case GroupEvent::Kind::kRevoked:
      OnRevoked(event);
      return;
    case GroupEvent::Kind::kCommitted:
    case GroupEvent::Kind::kCommitFailed: {
      auto sent = in_flight_.find(event.commit_id);
      if (sent == in_flight_.end()) return;
      if (event.kind == GroupEvent::Kind::kCommitted) {
        OnCommitted(event, sent->second);
      } else {
        OnCommitFailed(event.status);
      }
      in_flight_.erase(sent);
      return;
    }
  }
}

void KafkaGroupOffsetStore::OnAssigned(const GroupEvent& event) {
  for (const kafka::GroupOffset& o : event.offsets) {
    Owned owned;
    owned.acquisition = next_acquisition_++;
    if (o.offset >= 0) {
      StormKafkaOffset stored;
      stored.offset = o.offset;
      stored.topic = o.partition.topic;
      stored.partition = o.partition.partition;
      stored.topology_id = TopologyOfMetadata(o.metadata);
      owned.stored = stored;
    }
    auto it = owned_.insert_or_assign(o.partition, owned).first;
    if (wanted_.count(o.partition) > 0) ReportAcquired(o.partition, it->second);
  }
}

void KafkaGroupOffsetStore::OnRevoked(const GroupEvent& event) {
  for (const kafka::GroupOffset& o : event.offsets) {
    auto it = owned_.find(o.partition);
    if (it == owned_.end()) continue;
    const bool reported = it->second.reported;
    owned_.erase(it);
    if (!reported) continue;
    OffsetStoreUpdate u;
    u.kind = Kind::kLost;
    u.partition = o.partition;
    u.status = absl::AbortedError("the consumer group rebalanced it to another member");
    updates_.push_back(std::move(u));
  }
}

void KafkaGroupOffsetStore::OnCommitted(const GroupEvent& event,
                                        const std::vector<SentCommit>& sent) {
  for (const kafka::GroupOffset& o : event.offsets) {
    for (const SentCommit& s : sent) {
      if (s.partition != o.partition) continue;
      auto owned = owned_.find(s.partition);
      if (owned == owned_.end() || owned->second.acquisition != s.acquisition) continue;
      OffsetStoreUpdate u;
      u.kind = Kind::kCommitted;
      u.partition = s.partition;
      u.offset = s.offset;
      updates_.push_back(std::move(u));
    }
  }
}

void KafkaGroupOffsetStore::OnCommitFailed(const absl::Status& status) {
  if (absl::IsFailedPrecondition(status)) {
    spdlog::warn("kafka spout group {}: {}", options_.member.group_id,
                 std::string(status.message()));
    // Refused for good: the member's generation is over for its whole
    // assignment, not just for the partitions in this commit, so stop
    // emitting all of them now; the group's next assignment (librdkafka
    // rejoins) acquires them again if ours. Dropping only the refused
    // ones left the task owning the others until that assignment; if
    // those were finished, a stopAtEnd spout saw nothing left to do
    // and stopped with a refused partition short of its log end.
    for (const auto& [tp, owned] : owned_) {
      if (!owned.reported) continue;
      OffsetStoreUpdate u;
      u.kind = Kind::kLost;
      u.partition = tp;
      u.status = status;
      updates_.push_back(std::move(u));
    }
    owned_.clear();
  }
  OffsetStoreUpdate u;
  u.kind = Kind::kCommitFailed;
  u.status = status;
  updates_.push_back(std::move(u));
}

std::vector<OffsetStoreUpdate> KafkaGroupOffsetStore::TakeUpdates() {
  JoinIfWanted();
  if (member_ != nullptr) {
    for (GroupEvent& e : member_->TakeEvents()) OnEvent(e);
  }
  std::vector<OffsetStoreUpdate> out;
  out.swap(updates_);
  return out;
}

bool KafkaGroupOffsetStore::HasUpdates() const {
  if (member_ == nullptr && !wanted_.empty() && !closed_) return true;  // a join to retry
  return !updates_.empty() || (member_ != nullptr && member_->HasEvents());
}

void KafkaGroupOffsetStore::Close(std::chrono::milliseconds timeout) {
  if (closed_) return;
  closed_ = true;
  if (member_ != nullptr) member_->Leave(timeout);
}

}  // namespace tempest::spout
