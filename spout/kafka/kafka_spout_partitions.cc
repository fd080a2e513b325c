// KafkaSpout's partition lifecycle, on the executor thread: answers of the
// offset store and the partition source, the task's assignment, ownership,
// commits, fetching, and the periodic housekeeping. The Spout methods and the
// emit path are in kafka_spout.cc.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "spout/kafka/kafka_spout.h"

namespace tempest::spout {
namespace {

using Clock = core::Clock;
using std::chrono::milliseconds;

constexpr auto kBlockedWarnAfter = std::chrono::seconds(30);
// How often a partition's gauges ask the leader for its log end, and the
// `requested` offset that marks such a query's answer (no real offset is -1).
constexpr auto kLogEndQueryEvery = std::chrono::seconds(5);
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
      if (p == nullptr || !p->assigned) return;  // the store releases it
      if (p->phase != Phase::kUnowned) DropOwnership(*p, "re-acquired");
      p->phase = Phase::kResolving;
      p->acquisition = u.acquisition;
      p->totals.acquisitions++;
      spdlog::info("kafka spout {}: acquired {} (stored offset {}, session {:x})", config_.id,
                   Describe(u.partition),
                   u.stored.has_value() ? absl::StrCat(u.stored->offset) : "none", u.session_id);
      if (!u.stored.has_value() && p->totals.acquisitions == 1) {
        // Also what a mistyped zkRoot or id looks like: say where we looked.
        spdlog::warn(
            "kafka spout {}: no offset stored for {} under {}/{}; starting at "
            "startOffsetTime {} (if this spout committed before, check zkRoot and id)",
            config_.id, Describe(u.partition), config_.zk_root, config_.id,
            config_.start_offset_time);
      }
      p->stored = u.stored;
      source_->Resolve(u.partition, u.acquisition, u.stored);
      if (rewind_watcher_ != nullptr) rewind_watcher_->Watch(u.partition, u.session_id);
      return;
    case Kind::kLost:
      if (p == nullptr) return;
      if (rewind_watcher_ != nullptr) rewind_watcher_->Unwatch(u.partition);
      if (p->phase != Phase::kUnowned) {
        DropOwnership(*p, std::string(u.status.message()));
      }
      return;
    case Kind::kCommitted:
      if (p == nullptr || !p->state.has_value() || p->phase == Phase::kUnowned) return;
      p->state->OnCommitted(u.offset);
      if (u.offset >= p->requested_commit) p->commit_in_flight = false;
      p->metrics.committed->Set(p->state->committed());
      UpdateFetching(*p);
      return;
    case Kind::kCommitFailed:
      ++commit_failures_;
      for (auto& part : partitions_) {
        part->commit_in_flight = false;
        part->amo_retry_at =
            now + milliseconds(std::min<int64_t>(config_.state_update_interval_ms, 500));
      }
      if (commit_errors_.Allow()) {
        if (absl::IsPermissionDenied(u.status)) {
          // An ACL change shut this spout out: commits wait, nothing advances
          // (the store logged the node's path).
          collector_->ReportError(u.status);
        } else {
          spdlog::warn("kafka spout {}: offset commit failed ({} failures so far), will retry: {}",
                       config_.id, commit_failures_, u.status.ToString());
        }
      }
      return;
    case Kind::kReadFailed:
      if (p == nullptr) return;
      if (p->read_error_log.Allow()) {
        spdlog::error(
            "kafka spout {}: cannot use the stored offset of {}: {} (not guessing a "
            "position; retrying)",
            config_.id, Describe(u.partition), u.status.ToString());
        collector_->ReportError(u.status);
      }
      return;
  }
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
  if (p == nullptr || p->phase != Phase::kResolving || p->acquisition != r.tag) return;
  if (!r.status.ok() || !source_->reader_connected()) {
    spdlog::warn("kafka spout {}: cannot resolve the start offset of {}: {}", config_.id,
                 Describe(r.partition), r.status.ToString());
    // The store keeps ownership meanwhile; ask again shortly.
    source_->Resolve(r.partition, r.tag, p->stored, milliseconds(1000));
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
  p->state.emplace(so, committed, start);
  p->window.Clear();
  p->end_offset = r.high;
  p->log_end = r.high;
  p->leader = r.leader;
  p->phase = Phase::kActive;
  p->fetching = false;
  p->paused = false;
  p->repositioning = false;
  p->commit_in_flight = false;
  p->metrics.committed->Set(p->state->committed());
  spdlog::info("kafka spout {}: {} starts at {} ({}; log [{}, {}))", config_.id,
               Describe(r.partition), start, r.decision.reason, r.low, r.high);
  UpdateFetching(*p);
}

void KafkaSpout::OnWatermarks(const MetadataResult& r) {
  Partition* p = Find(r.partition);
  if (r.requested == kLogEndQuery) {
    if (p == nullptr) return;
    p->log_end_query_due = false;
    if (r.status.ok() && r.tag == p->epoch) p->log_end = std::max(p->log_end, r.high);
    return;
  }
  if (p == nullptr || p->phase != Phase::kActive || !p->repositioning || r.tag != p->epoch ||
      !p->state.has_value()) {
    return;
  }
  if (!r.status.ok()) {
    source_->Watermarks(r.partition, p->epoch, r.requested, milliseconds(1000));
    return;
  }
  KafkaPartitionState::Reposition rep =
      p->state->OnOutOfRange(r.requested, r.low, r.high, config_.out_of_range);
  if (rep.fail) {
    p->phase = Phase::kFailed;
    p->repositioning = false;
    const absl::Status err = absl::DataLossError(absl::StrCat(
        "offset ", r.requested, " of ", Describe(r.partition), " is out of range (log holds [",
        r.low, ", ", r.high, ")); outOfRangePolicy=fail: partition stopped"));
    spdlog::error("kafka spout {}: {}", config_.id, std::string(err.message()));
    collector_->ReportError(err);
    return;
  }
  // Nothing stays pending across a repositioning (OnOutOfRange drops every
  // in-flight offset), so no payload is kept for a retry.
  p->window.Clear();
  p->metrics.lost->Add(rep.skipped);
  p->metrics.dropped->Add(rep.dropped_pending);
  p->totals.lost += rep.skipped;
  p->totals.dropped_pending += rep.dropped_pending;
  p->repositioning = false;
  p->end_offset = std::max<int64_t>(std::min(p->end_offset, r.high), rep.position);
  JournalEntry reset;
  reset.type = JournalEntryType::kReset;
  reset.from = r.requested;
  reset.to = rep.skipped > 0 ? r.requested + rep.skipped : rep.position;
  reset.reason = absl::StrCat("offset ", r.requested, " out of range, log holds [", r.low, ", ",
                              r.high, "); outOfRangePolicy ",
                              std::string(OutOfRangePolicyName(config_.out_of_range)));
  p->journal.push_back(std::move(reset));
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
    p.assigned = false;
    p.rewind = Rewind{};
    spdlog::info("kafka spout {}: {} moved to another task", config_.id, Describe(tp));
  }
  // Commit-then-release: the store handles the commits before the change.
  if (!final_commits.empty()) store_->RequestCommit(std::move(final_commits));
  for (const TopicPartition& tp : mine) SlotFor(tp).assigned = true;
  if (mine.empty() && assignment_.empty()) {
    spdlog::warn("kafka spout {}: task index {} of {} gets no partition of {} partitions",
                 config_.id, task_index_, task_count_, all.size());
  }
  assignment_ = std::move(mine);
  assigned_slots_.clear();
  for (const TopicPartition& tp : assignment_) assigned_slots_.push_back(SlotFor(tp).slot);
  store_->SetAssignment(StoreAssignment());
}

void KafkaSpout::DropOwnership(Partition& p, const std::string& why) {
  if (p.fetching && source_->reader_connected()) (void)source_->Stop(p.tp);
  const int64_t in_flight = p.state.has_value() ? p.state->pending().count() : 0;
  if (p.phase == Phase::kActive || p.phase == Phase::kFailed) {
    spdlog::warn(
        "kafka spout {}: stop emitting {} ({}); {} in-flight offsets will be replayed "
        "by the next owner",
        config_.id, Describe(p.tp), why, in_flight);
  }
  p.state.reset();
  p.window.Clear();
  p.fetching = false;
  p.paused = false;
  p.repositioning = false;
  p.commit_in_flight = false;
  p.requested_commit = -1;
  p.journal.clear();  // the next owner meets the same resets and failures again
  p.blocked_offset = -1;
  p.phase = Phase::kUnowned;
  p.epoch++;  // late acks and fails of the old epoch find nothing
  p.metrics.paused->Set(0);
  p.metrics.pending->Set(0);
}

std::optional<OffsetCommit> KafkaSpout::MakeCommit(Partition& p) {
  if (p.phase != Phase::kActive || !p.state.has_value()) return std::nullopt;
  std::optional<int64_t> candidate = p.state->CommitCandidate();
  if (!candidate.has_value()) return std::nullopt;
  if (p.commit_in_flight && *candidate <= p.requested_commit) return std::nullopt;
  OffsetCommit c;
  c.partition = p.tp;
  c.acquisition = p.acquisition;
  c.state.topology_id = topology_id_;
  c.state.topology_name = topology_name_;
  c.state.offset = *candidate;
  c.state.partition = p.tp.partition;
  c.state.broker_host = p.leader.first;
  c.state.broker_port = p.leader.second;
  c.state.topic = p.tp.topic;
  p.commit_in_flight = true;
  p.requested_commit = *candidate;
  c.journal.swap(p.journal);
  return c;
}

void KafkaSpout::CommitNow(bool final_commit) {
  (void)final_commit;
  std::vector<OffsetCommit> commits;
  for (auto& p : partitions_) {
    if (!p->assigned) continue;
    if (std::optional<OffsetCommit> c = MakeCommit(*p)) commits.push_back(std::move(*c));
  }
  if (!commits.empty()) store_->RequestCommit(std::move(commits));
}

void KafkaSpout::RequestAtMostOnceCommits(Clock::TimePoint now) {
  std::vector<OffsetCommit> commits;
  for (auto& p : partitions_) {
    if (!p->assigned || p->commit_in_flight || now < p->amo_retry_at) continue;
    if (std::optional<OffsetCommit> c = MakeCommit(*p)) commits.push_back(std::move(*c));
  }
  if (!commits.empty()) store_->RequestCommit(std::move(commits));
}

void KafkaSpout::UpdateFetching(Partition& p) {
  if (p.phase != Phase::kActive || !p.state.has_value() || p.repositioning ||
      !source_->reader_connected()) {
    return;
  }
  const bool at_end =
      config_.stop_at_end && p.end_offset >= 0 && p.state->fetched_to() >= p.end_offset;
  const bool over = p.state->OverUncommittedLimit();
  const bool want = !at_end && !over;
  if (want && !p.fetching) {
    absl::Status s = source_->Start(p.tp, p.state->fetched_to());
    if (!s.ok()) {
      spdlog::warn("kafka spout {}: cannot fetch {}: {}", config_.id, Describe(p.tp), s.ToString());
      return;
    }
    p.fetching = true;
    if (p.paused) {
      spdlog::info("kafka spout {}: {} resumes at {} (commits caught up to {})", config_.id,
                   Describe(p.tp), p.state->fetched_to(), p.state->committed());
      p.paused = false;
      p.metrics.paused->Set(0);
    }
  } else if (!want && p.fetching) {
    (void)source_->Stop(p.tp);
    p.fetching = false;
    if (over && !p.paused) {
      p.paused = true;
      p.metrics.paused->Set(1);
      spdlog::warn(
          "kafka spout {}: pausing {}: {} offsets uncommitted (limit {}); resumes when "
          "commits succeed",
          config_.id, Describe(p.tp), p.state->Uncommitted(), *config_.max_uncommitted_offsets);
    }
  }
}

void KafkaSpout::ReportRepeatedFailures(Clock::TimePoint now) {
  RepeatedFailureReporter::Summary summary;
  summary.dead_letter = !config_.dead_letter_topic.empty();
  summary.retry_limit = config_.retry.retry_limit;
  for (int slot : assigned_slots_) {
    const Partition& p = *partitions_[slot];
    if (p.phase != Phase::kActive || !p.state.has_value()) continue;
    const RetrySchedule& retry = p.state->retry_schedule();
    summary.failing_offsets += static_cast<int64_t>(retry.failing_count());
    std::optional<RetrySchedule::Worst> worst = retry.WorstOffender();
    if (worst.has_value() && worst->failures > summary.worst.failures) {
      summary.worst = *worst;
      summary.worst_partition = Describe(p.tp);
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
    CommitNow(false);
    next_commit_ = now + milliseconds(config_.state_update_interval_ms);
  }
  if (now >= next_refresh_) {
    source_->Discover();
    next_refresh_ = now + std::chrono::seconds(*config_.partition_refresh_secs);
  }
  for (auto& pp : partitions_) {
    Partition& p = *pp;
    if (!p.assigned || p.phase != Phase::kActive || !p.state.has_value()) continue;
    UpdatePartitionGauges(p, now);
    if (!p.fetching) UpdateFetching(p);
  }
  if (config_.guarantee == ProcessingGuarantee::kAtMostOnce) RequestAtMostOnceCommits(now);
}

int64_t KafkaSpout::LagMillis(Partition& p) {
  const int64_t committed = p.state->committed();
  if (p.log_end >= 0 && committed >= p.log_end) return 0;
  if (p.newest_timestamp_ms < 0) return -1;
  // The first record not yet committed is held for retries (at least once)
  // or still waits to be emitted; otherwise its time is unknown.
  int64_t first_ms = -1;
  if (const RecordWindow::Record* r = p.window.Find(committed); r != nullptr) {
    first_ms = r->timestamp_ms;
  } else if (p.window.HasWaiting() && p.window.FrontWaiting().offset == committed) {
    first_ms = p.window.FrontWaiting().timestamp_ms;
  }
  if (first_ms < 0) return -1;
  return std::max<int64_t>(0, p.newest_timestamp_ms - first_ms);
}

void KafkaSpout::UpdatePartitionGauges(Partition& p, Clock::TimePoint now) {
  const KafkaPartitionState& st = *p.state;
  // Fetch responses carry the log end only while the partition is fetched:
  // a spout held back (max spout pending, a slow bolt) would report a stale
  // end and too small a lag, so the leader is asked now and then.
  if (p.next_log_end_query == Clock::TimePoint{}) p.next_log_end_query = now + kLogEndQueryEvery;
  if (now >= p.next_log_end_query && !p.log_end_query_due && !p.repositioning) {
    p.next_log_end_query = now + kLogEndQueryEvery;
    p.log_end_query_due = true;
    source_->Watermarks(p.tp, p.epoch, kLogEndQuery);
  }
  if (source_->reader_connected()) {
    if (absl::StatusOr<std::pair<int64_t, int64_t>> marks = source_->CachedWatermarks(p.tp);
        marks.ok()) {
      p.log_end = std::max(p.log_end, marks->second);
    }
  }
  p.metrics.committed->Set(st.committed());
  p.metrics.emitted->Set(st.emitted_to() - 1);
  p.metrics.pending->Set(st.pending().count());
  if (p.log_end >= 0) p.metrics.lag->Set(std::max<int64_t>(0, p.log_end - st.committed()));
  p.metrics.log_end->Set(p.log_end);
  p.metrics.lag_ms->Set(LagMillis(p));
  std::optional<int64_t> lowest = st.pending().Lowest();
  if (!lowest.has_value()) {
    p.blocked_offset = -1;
    p.metrics.blocked_seconds->Set(0);
    p.metrics.blocked_offset->Set(-1);
  } else {
    if (*lowest != p.blocked_offset) {
      p.blocked_offset = *lowest;
      p.blocked_since = now;
    }
    const auto blocked = std::chrono::duration_cast<std::chrono::seconds>(now - p.blocked_since);
    p.metrics.blocked_seconds->Set(blocked.count());
    p.metrics.blocked_offset->Set(*lowest);
    if (blocked >= kBlockedWarnAfter && p.blocked_log.Allow()) {
      spdlog::warn(
          "kafka spout {}: commit of {} blocked by offset {} for {} s ({} failures; {} "
          "pending)",
          config_.id, Describe(p.tp), *lowest, blocked.count(), st.RetryFailures(*lowest),
          st.pending().count());
    }
  }
}

}  // namespace tempest::spout
