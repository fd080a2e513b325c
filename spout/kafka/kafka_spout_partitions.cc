// KafkaSpout's partition lifecycle, on the executor thread: the answers of
// the offset store and the partition source (its mailboxes), the task's
// assignment, ownership, commits, and the periodic housekeeping. Each
// partition's own state and rules are KafkaSpoutPartition's
// (kafka_spout_partition.h); the Spout methods are in kafka_spout.cc, the
// fetch and emit path in kafka_spout_fetch.cc.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "spout/kafka/kafka_spout.h"

namespace tempest::spout {
namespace {

using Clock = core::Clock;
using std::chrono::milliseconds;

// The `requested` offset that marks the answer to a log-end query of the
// gauges (no real offset is -1).
constexpr int64_t kLogEndQuery = -1;

}  // namespace

void KafkaSpout::Drain(Clock::TimePoint now) {
  std::vector<OffsetStoreUpdate> updates = store_->TakeUpdates();
  for (OffsetStoreUpdate& u : updates) OnStoreUpdate(u, now);
  std::vector<MetadataResult> results = source_->TakeResults();
  for (MetadataResult& r : results) OnMetadata(r, now);
}

void KafkaSpout::OnStoreUpdate(OffsetStoreUpdate& u, Clock::TimePoint now) {
  using Kind = OffsetStoreUpdate::Kind;
  Partition* p = u.kind == Kind::kCommitFailed ? nullptr : Find(u.partition);
  if (p != nullptr && RewindTakes(*p, u)) return;
  switch (u.kind) {
    case Kind::kAcquired:
      OnAcquired(p, u);
      return;
    case Kind::kLost:
      if (p == nullptr) return;
      if (rewind_watcher_ != nullptr) rewind_watcher_->Unwatch(u.partition);
      if (p->phase() != Partition::Phase::kUnowned) {
        DropOwnership(*p, std::string(u.status.message()));
      }
      return;
    case Kind::kCommitted:
      if (p != nullptr && p->Committed(u.offset)) UpdateFetching(*p);
      return;
    case Kind::kCommitFailed:
      OnCommitFailed(u, now);
      return;
    case Kind::kReadFailed:
      OnReadFailed(p, u);
      return;
  }
}

void KafkaSpout::OnAcquired(Partition* p, const OffsetStoreUpdate& u) {
  if (p == nullptr || !p->assigned()) return;  // the store releases it
  if (p->phase() != Partition::Phase::kUnowned) DropOwnership(*p, "re-acquired");
  p->Acquired(u.acquisition, u.stored);
  spdlog::info("kafka spout {}: acquired {} (stored offset {}, session {:x})", config_.id,
               Describe(u.partition),
               u.stored.has_value() ? absl::StrCat(u.stored->offset) : "none", u.session_id);
  if (!u.stored.has_value() && p->first_acquisition()) {
    // Also what a mistyped zkRoot or id looks like: say where we looked.
    spdlog::warn(
        "kafka spout {}: no offset stored for {} under {}/{}; starting at "
        "startOffsetTime {} (if this spout committed before, check zkRoot and id)",
        config_.id, Describe(u.partition), config_.zk_root, config_.id, config_.start_offset_time);
  }
  source_->Resolve(u.partition, u.acquisition, u.stored);
  if (rewind_watcher_ != nullptr) rewind_watcher_->Watch(u.partition, u.session_id);
}

void KafkaSpout::OnCommitFailed(const OffsetStoreUpdate& u, Clock::TimePoint now) {
  ++commit_failures_;
  const Clock::TimePoint retry_at =
      now + milliseconds(std::min<int64_t>(config_.state_update_interval_ms, 500));
  for (auto& p : partitions_) p->CommitFailed(retry_at);
  if (!commit_errors_.Allow()) return;
  if (absl::IsPermissionDenied(u.status)) {
    // An ACL change shut this spout out: commits wait, nothing advances
    // (the store logged the node's path).
    collector_->ReportError(u.status);
  } else {
    spdlog::warn("kafka spout {}: offset commit failed ({} failures so far), will retry: {}",
                 config_.id, commit_failures_, u.status.ToString());
  }
}

void KafkaSpout::OnReadFailed(Partition* p, const OffsetStoreUpdate& u) {
  if (p == nullptr || !p->AllowReadErrorLine()) return;
  spdlog::error(
      "kafka spout {}: cannot use the stored offset of {}: {} (not guessing a "
      "position; retrying)",
      config_.id, Describe(u.partition), u.status.ToString());
  collector_->ReportError(u.status);
}

void KafkaSpout::OnMetadata(MetadataResult& r, Clock::TimePoint now) {
  switch (r.kind) {
    case MetadataResult::Kind::kDiscovered:
      OnDiscovered(r, now);
      return;
    case MetadataResult::Kind::kResolved:
      OnResolved(r);
      return;
    case MetadataResult::Kind::kWatermarks:
      OnWatermarks(r);
      return;
  }
}

void KafkaSpout::OnDiscovered(MetadataResult& r, Clock::TimePoint now) {
  if (!r.status.ok()) {
    spdlog::warn("kafka spout {}: partition discovery failed: {}", config_.id, r.status.ToString());
    next_refresh_ = std::min(next_refresh_, now + std::chrono::seconds(2));
    return;
  }
  if (!source_->reader_connected() && !r.bootstrap_servers.empty()) {
    if (absl::Status s = StartReader(r.bootstrap_servers); !s.ok()) {
      spdlog::error("kafka spout {}: {}", config_.id, s.ToString());
      collector_->ReportError(s);
      return;
    }
  }
  discovered_ = true;
  ApplyAssignment(r.partitions);
}

void KafkaSpout::OnResolved(const MetadataResult& r) {
  Partition* p = Find(r.partition);
  if (p == nullptr || !p->AwaitsStart(r.tag)) return;
  if (!r.status.ok() || !source_->reader_connected()) {
    spdlog::warn("kafka spout {}: cannot resolve the start offset of {}: {}", config_.id,
                 Describe(r.partition), r.status.ToString());
    // The store keeps ownership meanwhile; ask again shortly.
    source_->Resolve(r.partition, r.tag, p->stored(), milliseconds(1000));
    return;
  }
  KafkaPartitionState::Options so;
  so.guarantee = config_.guarantee;
  so.retry = config_.retry;
  so.max_uncommitted = *config_.max_uncommitted_offsets;
  so.has_dead_letter = !config_.dead_letter_topic.empty();
  int64_t committed = r.decision.committed;
  int64_t start = r.decision.start;
  if (r.high >= 0 && start > r.high) {
    // Never used silently: handled under outOfRangePolicy (kafka_spout_rewind.cc).
    std::optional<int64_t> moved = StoredBeyondLogEnd(*p, r);
    if (!moved.has_value()) return;
    committed = start = *moved;
  }
  p->Start(so, committed, start, r.high, r.leader);
  spdlog::info("kafka spout {}: {} starts at {} ({}; log [{}, {}))", config_.id,
               Describe(r.partition), start, r.decision.reason, r.low, r.high);
  UpdateFetching(*p);
}

void KafkaSpout::OnWatermarks(const MetadataResult& r) {
  Partition* p = Find(r.partition);
  if (r.requested == kLogEndQuery) {
    if (p != nullptr) p->OnLogEndAnswer(r.status.ok(), r.tag, r.high);
    return;
  }
  if (p == nullptr || !p->AwaitsWatermarks(r.tag)) return;
  if (!r.status.ok()) {
    source_->Watermarks(r.partition, p->epoch(), r.requested, milliseconds(1000));
    return;
  }
  const KafkaPartitionState::Reposition rep =
      p->Reposition(r.requested, r.low, r.high, config_.out_of_range);
  if (rep.fail) {
    const absl::Status err = absl::DataLossError(absl::StrCat(
        "offset ", r.requested, " of ", Describe(r.partition), " is out of range (log holds [",
        r.low, ", ", r.high, ")); outOfRangePolicy=fail: partition stopped"));
    spdlog::error("kafka spout {}: {}", config_.id, std::string(err.message()));
    collector_->ReportError(err);
    return;
  }
  spdlog::warn(
      "kafka spout {}: offset {} of {} is out of range (log holds [{}, {})); policy {}: "
      "continuing at {}; {} offsets lost [{}, {}), {} in-flight offsets dropped",
      config_.id, r.requested, Describe(r.partition), r.low, r.high,
      OutOfRangePolicyName(config_.out_of_range), rep.position, rep.skipped, r.requested,
      r.requested + rep.skipped, rep.dropped_pending);
  UpdateFetching(*p);
}

void KafkaSpout::ApplyAssignment(const std::vector<TopicPartition>& all) {
  // With offsets in a consumer group, the group decides who owns what: the
  // store is offered every partition and acquires what the group assigns.
  std::vector<TopicPartition> mine =
      config_.offsets_in_kafka() ? all : PartitionsForTask(all, task_index_, task_count_);
  std::sort(mine.begin(), mine.end());
  if (mine == assignment_ && !assignment_.empty()) return;
  std::vector<OffsetCommit> final_commits;
  for (const TopicPartition& tp : assignment_) {
    if (std::binary_search(mine.begin(), mine.end(), tp)) continue;
    Partition& p = SlotFor(tp);
    if (std::optional<OffsetCommit> c = MakeCommit(p)) final_commits.push_back(*c);
    DropOwnership(p, "reassigned to another task");
    p.set_assigned(false);
    p.ForgetRewind();
    spdlog::info("kafka spout {}: {} moved to another task", config_.id, Describe(tp));
  }
  // Commit-then-release: the store handles the commits before the change.
  if (!final_commits.empty()) store_->RequestCommit(std::move(final_commits));
  for (const TopicPartition& tp : mine) SlotFor(tp).set_assigned(true);
  if (mine.empty() && assignment_.empty()) {
    spdlog::warn("kafka spout {}: task index {} of {} gets no partition of {} partitions",
                 config_.id, task_index_, task_count_, all.size());
  }
  assignment_ = std::move(mine);
  assigned_slots_.clear();
  for (const TopicPartition& tp : assignment_) assigned_slots_.push_back(SlotFor(tp).slot());
  store_->SetAssignment(StoreAssignment());
}

void KafkaSpout::DropOwnership(Partition& p, const std::string& why) {
  if (p.fetching() && source_->reader_connected()) StopFetching(p.tp());
  if (p.positioned()) {
    spdlog::warn(
        "kafka spout {}: stop emitting {} ({}); {} in-flight offsets will be replayed "
        "by the next owner",
        config_.id, Describe(p.tp()), why, p.InFlight());
  }
  p.Disown();
}

std::optional<OffsetCommit> KafkaSpout::MakeCommit(Partition& p) {
  return p.TakeCommit(topology_id_, topology_name_);
}

void KafkaSpout::CommitNow() {
  std::vector<OffsetCommit> commits;
  for (auto& p : partitions_) {
    if (!p->assigned()) continue;
    if (std::optional<OffsetCommit> c = MakeCommit(*p)) commits.push_back(std::move(*c));
  }
  if (!commits.empty()) store_->RequestCommit(std::move(commits));
}

void KafkaSpout::RequestAtMostOnceCommits(Clock::TimePoint now) {
  std::vector<OffsetCommit> commits;
  for (auto& p : partitions_) {
    if (!p->AtMostOnceCommitDue(now)) continue;
    if (std::optional<OffsetCommit> c = MakeCommit(*p)) commits.push_back(std::move(*c));
  }
  if (!commits.empty()) store_->RequestCommit(std::move(commits));
}

void KafkaSpout::ReportRepeatedFailures(Clock::TimePoint now) {
  RepeatedFailureReporter::Summary summary;
  summary.dead_letter = !config_.dead_letter_topic.empty();
  summary.retry_limit = config_.retry.retry_limit;
  for (int slot : assigned_slots_) {
    const Partition& p = *partitions_[slot];
    if (!p.active()) continue;
    const RetrySchedule& retry = p.state()->retry_schedule();
    summary.failing_offsets += static_cast<int64_t>(retry.failing_count());
    std::optional<RetrySchedule::Worst> worst = retry.WorstOffender();
    if (worst.has_value() && worst->failures > summary.worst.failures) {
      summary.worst = *worst;
      summary.worst_partition = Describe(p.tp());
    }
  }
  if (std::optional<std::string> line = failure_reporter_.Report(now, summary)) {
    spdlog::warn("kafka spout {} task {}: {}", config_.id, labels_.at("task"), *line);
  }
}

void KafkaSpout::Housekeeping(Clock::TimePoint now) {
  DrainRewinds(now);
  if (failure_reporter_.Due(now)) ReportRepeatedFailures(now);
  if (now >= next_commit_) {
    CommitNow();
    next_commit_ = now + milliseconds(config_.state_update_interval_ms);
  }
  if (now >= next_refresh_) {
    source_->Discover();
    next_refresh_ = now + std::chrono::seconds(*config_.partition_refresh_secs);
  }
  for (auto& pp : partitions_) {
    Partition& p = *pp;
    if (!p.assigned() || !p.active()) continue;
    UpdatePartitionGauges(p, now);
    if (!p.fetching()) UpdateFetching(p);
  }
  if (config_.guarantee == ProcessingGuarantee::kAtMostOnce) RequestAtMostOnceCommits(now);
}

void KafkaSpout::UpdatePartitionGauges(Partition& p, Clock::TimePoint now) {
  // Fetch responses carry the log end only while the partition is fetched:
  // a spout held back (max spout pending, a slow bolt) would report a stale
  // end and too small a lag, so the leader is asked now and then.
  if (p.LogEndQueryDue(now)) source_->Watermarks(p.tp(), p.epoch(), kLogEndQuery);
  if (source_->reader_connected()) {
    if (absl::StatusOr<std::pair<int64_t, int64_t>> marks = source_->CachedWatermarks(p.tp());
        marks.ok()) {
      p.SawLogEnd(marks->second);
    }
  }
  if (std::optional<Partition::BlockedCommit> blocked = p.UpdateGauges(now)) {
    spdlog::warn(
        "kafka spout {}: commit of {} blocked by offset {} for {} s ({} failures; {} "
        "pending)",
        config_.id, Describe(p.tp()), blocked->offset, blocked->seconds, blocked->failures,
        blocked->pending);
  }
}

}  // namespace tempest::spout
