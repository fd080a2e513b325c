// KafkaSpout's side of a fenced rewind (`tempest offsets set` on a partition
// this task owns), on the executor thread. The RewindWatcher (its own thread)
// sees the request and makes the fenced write; here the partition is paused,
// its in-flight tuples invalidated, and once the write is answered the
// partition is released to the store and acquired again, so the store and
// the spout both restart from the moved offset.
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "spout/kafka/kafka_spout.h"
#include "spout/kafka/offsets/zk_offset_store.h"

namespace tempest::spout {

absl::Status KafkaSpout::StartRewindWatcher(const std::string& owner_description) {
  if (zk_store_ == nullptr || zk_store_->session() == nullptr) return absl::OkStatus();
  RewindWatcher::Options o;
  o.zk_root = config_.zk_root;
  o.spout_id = config_.id;
  o.topic_level = config_.topic_level();
  o.owner_description = owner_description;
  o.topology_id = topology_id_;
  rewind_watcher_ = std::make_unique<RewindWatcher>(zk_store_->session(), o);
  absl::Status started = rewind_watcher_->start_status();
  if (!started.ok()) rewind_watcher_.reset();
  return started;
}

std::vector<TopicPartition> KafkaSpout::StoreAssignment() {
  std::vector<TopicPartition> out;
  for (const TopicPartition& tp : assignment_) {
    if (!SlotFor(tp).released_for_rewind()) out.push_back(tp);
  }
  return out;
}

void KafkaSpout::DrainRewinds(core::Clock::TimePoint now) {
  if (rewind_watcher_ == nullptr) return;
  for (const RewindWatcher::Pending& r : rewind_watcher_->TakeRequests()) OnRewindRequest(r, now);
  for (const RewindWatcher::Outcome& o : rewind_watcher_->TakeOutcomes()) OnRewindOutcome(o, now);
  for (int slot : assigned_slots_) {
    if (partitions_[slot]->ReleaseWaitOver(now)) store_->SetAssignment(StoreAssignment());
  }
}

void KafkaSpout::OnRewindRequest(const RewindWatcher::Pending& r, core::Clock::TimePoint now) {
  Partition* p = Find(r.partition);
  std::string refused;
  if (p == nullptr || !p->assigned()) {
    refused = "this task does not own the partition any more";
  } else if (p->rewinding()) {
    refused = "a rewind of this partition is already in progress";
  } else if (!p->positioned()) {
    refused = "the partition is not running here yet (still resolving its start); try again";
  }
  if (!refused.empty()) {
    spdlog::warn("kafka spout {}: rewind of {} to {} refused: {}", config_.id,
                 Describe(r.partition), r.request.offset, refused);
    rewind_watcher_->Refuse(r, refused);
    return;
  }
  const int64_t from = p->state() != nullptr ? p->state()->committed() : -1;
  spdlog::warn("kafka spout {}: rewinding {} from {} to {} ({}); pausing it", config_.id,
               Describe(r.partition), from, r.request.offset, r.request.requested_by);
  StormKafkaOffset state = p->NodeAt(r.request.offset, topology_id_, topology_name_);
  // Pause and invalidate: the epoch moves on, so acks of tuples emitted
  // before the rewind find nothing and no commit of the old position is made.
  DropOwnership(*p, absl::StrCat("rewind to ", r.request.offset));
  p->BeginRewind(r.request.offset, now);
  rewind_watcher_->Apply(r, std::move(state));
}

void KafkaSpout::OnRewindOutcome(const RewindWatcher::Outcome& o, core::Clock::TimePoint now) {
  Partition* p = Find(o.partition);
  if (p == nullptr || !p->rewind_writing()) return;
  if (o.applied) {
    spdlog::warn("kafka spout {}: {} rewound from {} to {}; re-acquiring it", config_.id,
                 Describe(o.partition), o.from, o.to);
  } else {
    spdlog::warn("kafka spout {}: rewind of {} to {} not applied: {}; resuming", config_.id,
                 Describe(o.partition), o.to, o.status.ToString());
  }
  if (p->RewindWritten(o.applied, now)) store_->SetAssignment(StoreAssignment());
}

bool KafkaSpout::RewindTakes(Partition& p, const OffsetStoreUpdate& u) {
  if (!p.rewinding()) return false;
  switch (p.TakeForRewind(u.kind, u.stored, clock_->Now())) {
    case Partition::RewindVerdict::kNotTaken:
      return false;
    case Partition::RewindVerdict::kTaken:
      return true;
    case Partition::RewindVerdict::kTakenReassign:
      store_->SetAssignment(StoreAssignment());
      return true;
  }
  return false;
}

std::optional<int64_t> KafkaSpout::StoredBeyondLogEnd(Partition& p, const MetadataResult& r) {
  const int64_t stored = r.decision.start;
  p.CountStoredOutOfRange();
  if (config_.out_of_range == OutOfRangePolicy::kFail) {
    p.StopByPolicy();
    const absl::Status err = absl::OutOfRangeError(absl::StrCat(
        "stored offset ", stored, " of ", Describe(r.partition), " is beyond the log end ", r.high,
        " (log holds [", r.low, ", ", r.high, ")); outOfRangePolicy=fail: partition stopped; ",
        "move it with `tempest offsets set`"));
    spdlog::error("kafka spout {}: {}", config_.id, std::string(err.message()));
    collector_->ReportError(err);
    return std::nullopt;
  }
  const int64_t position = config_.out_of_range == OutOfRangePolicy::kEarliest ? r.low : r.high;
  const std::string reason = absl::StrCat(
      "stored offset ", stored, " is beyond the log end ", r.high, " (log holds [", r.low, ", ",
      r.high, ")); outOfRangePolicy=", std::string(OutOfRangePolicyName(config_.out_of_range)),
      ": moved to ", position);
  spdlog::error("kafka spout {}: {}: {}", config_.id, Describe(r.partition), reason);
  collector_->ReportError(absl::OutOfRangeError(absl::StrCat(Describe(r.partition), ": ", reason)));
  if (rewind_watcher_ == nullptr) return position;  // a store of another kind: start there
  StormKafkaOffset state;
  if (p.stored().has_value()) state = *p.stored();
  state.topology_id = topology_id_;
  state.topology_name = topology_name_;
  state.offset = position;
  state.partition = r.partition.partition;
  state.topic = r.partition.topic;
  // The store never moves an offset backwards by itself: the fenced move
  // writes the position, then a re-acquisition reads it back.
  p.AwaitMove(position, clock_->Now());
  rewind_watcher_->Reposition(r.partition, std::move(state), reason);
  return std::nullopt;
}

}  // namespace tempest::spout
