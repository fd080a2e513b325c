#include "spout/kafka/kafka_spout_partition.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace tempest::spout {
namespace {

using Clock = core::Clock;

// A commit held back this long by one pending offset earns a warning.
constexpr auto kBlockedWarnAfter = std::chrono::seconds(30);
// How often the gauges ask the leader for the log end.
constexpr auto kLogEndQueryEvery = std::chrono::seconds(5);
// After this long in kReleasing the store has seen the shorter assignment
// (it reads its mailbox at least every 100 ms), released or not.
constexpr auto kReleaseWait = std::chrono::seconds(2);
// Re-acquisitions that still read a pre-rewind offset before giving up on
// matching the target (someone else moved it meanwhile).
constexpr int kMaxReacquireCycles = 3;

}  // namespace

KafkaSpoutPartition::KafkaSpoutPartition(TopicPartition tp, int slot, KafkaPartitionMetrics metrics,
                                         const Clock& clock)
    : tp_(std::move(tp)),
      slot_(slot),
      blocked_log_(1, std::chrono::seconds(60), clock),
      read_error_log_(1, std::chrono::seconds(30), clock),
      metrics_(metrics) {}

KafkaSpoutPartitionStats KafkaSpoutPartition::Stats() const {
  KafkaSpoutPartitionStats s = totals_;
  s.owned = phase_ == Phase::kActive;
  s.failed = phase_ == Phase::kFailed;
  s.paused = paused_;
  if (state_.has_value()) {
    s.committed = state_->committed();
    s.emitted_to = state_->emitted_to();
    s.pending = state_->pending().count();
  }
  return s;
}

void KafkaSpoutPartition::Acquired(uint64_t acquisition, std::optional<StormKafkaOffset> stored) {
  phase_ = Phase::kResolving;
  acquisition_ = acquisition;
  totals_.acquisitions++;
  stored_ = std::move(stored);
}

void KafkaSpoutPartition::Start(const KafkaPartitionState::Options& options, int64_t committed,
                                int64_t start, int64_t log_end,
                                std::pair<std::string, int> leader) {
  state_.emplace(options, committed, start);
  window_.Clear();
  end_offset_ = log_end;
  log_end_ = log_end;
  leader_ = std::move(leader);
  phase_ = Phase::kActive;
  fetching_ = false;
  paused_ = false;
  repositioning_ = false;
  commit_in_flight_ = false;
  metrics_.committed->Set(state_->committed());
}

void KafkaSpoutPartition::Disown() {
  state_.reset();
  window_.Clear();
  fetching_ = false;
  paused_ = false;
  repositioning_ = false;
  commit_in_flight_ = false;
  requested_commit_ = -1;
  journal_.clear();
  blocked_offset_ = -1;
  phase_ = Phase::kUnowned;
  epoch_++;
  metrics_.paused->Set(0);
  metrics_.pending->Set(0);
}

void KafkaSpoutPartition::StopByPolicy() {
  phase_ = Phase::kFailed;
  repositioning_ = false;
}

bool KafkaSpoutPartition::TakeFetched(const kafka::KafkaRecord& record, bool stop_at_end) {
  if (!active() || !fetching_) return false;
  KafkaPartitionState& st = *state_;
  if (record.offset < st.fetched_to()) return false;  // already taken (a restart overlap)
  if (stop_at_end && end_offset_ >= 0 && record.offset >= end_offset_) return false;
  // Dropped here, fetched again from fetched_to when resumed.
  if (st.OverUncommittedLimit()) return true;
  RecordWindow::Record& r = window_.Append(record.offset);
  r.has_key = record.has_key;
  r.has_value = record.has_value;
  if (record.has_key) r.key.assign(record.key);
  if (record.has_value) r.value.assign(record.value);
  r.timestamp_ms = record.timestamp_ms;
  newest_timestamp_ms_ = std::max(newest_timestamp_ms_, record.timestamp_ms);
  st.OnFetched(record.offset);
  return st.OverUncommittedLimit();
}

bool KafkaSpoutPartition::WantsFetch(bool stop_at_end) const {
  const bool at_end = stop_at_end && end_offset_ >= 0 && state_->fetched_to() >= end_offset_;
  return !at_end && !state_->OverUncommittedLimit();
}

bool KafkaSpoutPartition::FetchStarted() {
  fetching_ = true;
  if (!paused_) return false;
  paused_ = false;
  metrics_.paused->Set(0);
  return true;
}

bool KafkaSpoutPartition::FetchStopped(bool over_limit) {
  fetching_ = false;
  if (!over_limit || paused_) return false;
  paused_ = true;
  metrics_.paused->Set(1);
  return true;
}

bool KafkaSpoutPartition::BeginReposition() {
  if (!fetching_ || repositioning_) return false;
  fetching_ = false;
  repositioning_ = true;
  metrics_.out_of_range->Add(1);
  return true;
}

KafkaPartitionState::Reposition KafkaSpoutPartition::Reposition(int64_t requested, int64_t low,
                                                                int64_t high,
                                                                OutOfRangePolicy policy) {
  KafkaPartitionState::Reposition rep = state_->OnOutOfRange(requested, low, high, policy);
  if (rep.fail) {
    StopByPolicy();
    return rep;
  }
  // Nothing stays pending across a repositioning (OnOutOfRange drops every
  // in-flight offset), so no payload is kept for a retry.
  window_.Clear();
  metrics_.lost->Add(rep.skipped);
  metrics_.dropped->Add(rep.dropped_pending);
  totals_.lost += rep.skipped;
  totals_.dropped_pending += rep.dropped_pending;
  repositioning_ = false;
  end_offset_ = std::max<int64_t>(std::min(end_offset_, high), rep.position);
  JournalEntry reset;
  reset.type = JournalEntryType::kReset;
  reset.from = requested;
  reset.to = rep.skipped > 0 ? requested + rep.skipped : rep.position;
  reset.reason = absl::StrCat("offset ", requested, " out of range, log holds [", low, ", ", high,
                              "); outOfRangePolicy ", std::string(OutOfRangePolicyName(policy)));
  journal_.push_back(std::move(reset));
  return rep;
}

bool KafkaSpoutPartition::LogEndQueryDue(Clock::TimePoint now) {
  if (next_log_end_query_ == Clock::TimePoint{}) next_log_end_query_ = now + kLogEndQueryEvery;
  if (now < next_log_end_query_ || log_end_query_due_ || repositioning_) return false;
  next_log_end_query_ = now + kLogEndQueryEvery;
  log_end_query_due_ = true;
  return true;
}

void KafkaSpoutPartition::OnLogEndAnswer(bool ok, uint64_t epoch, int64_t log_end) {
  log_end_query_due_ = false;
  if (ok && epoch == epoch_) SawLogEnd(log_end);
}

int64_t KafkaSpoutPartition::LagMillis() {
  const int64_t committed = state_->committed();
  if (log_end_ >= 0 && committed >= log_end_) return 0;
  if (newest_timestamp_ms_ < 0) return -1;
  // The first record not yet committed is held for retries (at least once)
  // or still waits to be emitted; otherwise its time is unknown.
  int64_t first_ms = -1;
  if (const RecordWindow::Record* r = window_.Find(committed); r != nullptr) {
    first_ms = r->timestamp_ms;
  } else if (window_.HasWaiting() && window_.FrontWaiting().offset == committed) {
    first_ms = window_.FrontWaiting().timestamp_ms;
  }
  if (first_ms < 0) return -1;
  return std::max<int64_t>(0, newest_timestamp_ms_ - first_ms);
}

std::optional<KafkaSpoutPartition::BlockedCommit> KafkaSpoutPartition::UpdateGauges(
    Clock::TimePoint now) {
  const KafkaPartitionState& st = *state_;
  metrics_.committed->Set(st.committed());
  metrics_.emitted->Set(st.emitted_to() - 1);
  metrics_.pending->Set(st.pending().count());
  if (log_end_ >= 0) metrics_.lag->Set(std::max<int64_t>(0, log_end_ - st.committed()));
  metrics_.log_end->Set(log_end_);
  metrics_.lag_ms->Set(LagMillis());
  std::optional<int64_t> lowest = st.pending().Lowest();
  if (!lowest.has_value()) {
    blocked_offset_ = -1;
    metrics_.blocked_seconds->Set(0);
    metrics_.blocked_offset->Set(-1);
    return std::nullopt;
  }
  if (*lowest != blocked_offset_) {
    blocked_offset_ = *lowest;
    blocked_since_ = now;
  }
  const auto blocked = std::chrono::duration_cast<std::chrono::seconds>(now - blocked_since_);
  metrics_.blocked_seconds->Set(blocked.count());
  metrics_.blocked_offset->Set(*lowest);
  if (blocked < kBlockedWarnAfter || !blocked_log_.Allow()) return std::nullopt;
  return BlockedCommit{*lowest, blocked.count(), st.RetryFailures(*lowest), st.pending().count()};
}

std::optional<OffsetCommit> KafkaSpoutPartition::TakeCommit(const std::string& topology_id,
                                                            const std::string& topology_name) {
  if (phase_ != Phase::kActive || !state_.has_value()) return std::nullopt;
  std::optional<int64_t> candidate = state_->CommitCandidate();
  if (!candidate.has_value()) return std::nullopt;
  if (commit_in_flight_ && *candidate <= requested_commit_) return std::nullopt;
  OffsetCommit c;
  c.partition = tp_;
  c.acquisition = acquisition_;
  c.state = NodeAt(*candidate, topology_id, topology_name);
  commit_in_flight_ = true;
  requested_commit_ = *candidate;
  c.journal.swap(journal_);
  return c;
}

StormKafkaOffset KafkaSpoutPartition::NodeAt(int64_t offset, const std::string& topology_id,
                                             const std::string& topology_name) const {
  StormKafkaOffset node;
  node.topology_id = topology_id;
  node.topology_name = topology_name;
  node.offset = offset;
  node.partition = tp_.partition;
  node.broker_host = leader_.first;
  node.broker_port = leader_.second;
  node.topic = tp_.topic;
  return node;
}

bool KafkaSpoutPartition::Committed(int64_t offset) {
  if (!state_.has_value() || phase_ == Phase::kUnowned) return false;
  state_->OnCommitted(offset);
  if (offset >= requested_commit_) commit_in_flight_ = false;
  metrics_.committed->Set(state_->committed());
  return true;
}

void KafkaSpoutPartition::CommitFailed(Clock::TimePoint retry_at) {
  commit_in_flight_ = false;
  amo_retry_at_ = retry_at;
}

void KafkaSpoutPartition::Ack(int64_t offset) {
  if (state_.has_value() && state_->OnAck(offset)) window_.Release(offset);
}

std::optional<int64_t> KafkaSpoutPartition::DeadLettered(int64_t offset,
                                                         const std::string& dead_letter_topic) {
  const int64_t failures = state_->RetryFailures(offset);  // OnDeadLettered forgets them
  if (!state_->OnDeadLettered(offset)) return std::nullopt;
  window_.Release(offset);
  metrics_.dead_lettered->Add(1);
  totals_.dead_lettered++;
  JournalEntry e;
  e.type = JournalEntryType::kDeadLetter;
  e.offset = offset;
  e.target_topic = dead_letter_topic;
  e.failures = failures;
  journal_.push_back(std::move(e));
  return failures;
}

bool KafkaSpoutPartition::DoneAtEnd() const {
  if (phase_ != Phase::kActive || !state_.has_value() || end_offset_ < 0) return false;
  const KafkaPartitionState& st = *state_;
  if (st.emitted_to() < end_offset_ || window_.HasWaiting() || !st.pending().empty()) {
    return false;
  }
  return !st.CommitCandidate().has_value();
}

void KafkaSpoutPartition::BeginRewind(int64_t target, Clock::TimePoint now) {
  rewind_ = Rewind{RewindStage::kWriting, target, 0, now};
}

void KafkaSpoutPartition::AwaitMove(int64_t position, Clock::TimePoint now) {
  phase_ = Phase::kUnowned;
  BeginRewind(position, now);
}

bool KafkaSpoutPartition::RewindWritten(bool applied, Clock::TimePoint now) {
  if (applied) {
    totals_.rewinds++;
  } else {
    rewind_.target = -1;
  }
  if (!assigned_) {
    ForgetRewind();
    return false;
  }
  rewind_.stage = RewindStage::kReleasing;
  rewind_.since = now;
  return true;
}

bool KafkaSpoutPartition::ReleaseWaitOver(Clock::TimePoint now) {
  if (rewind_.stage != RewindStage::kReleasing || now - rewind_.since < kReleaseWait) return false;
  rewind_.stage = RewindStage::kReacquiring;
  return true;
}

KafkaSpoutPartition::RewindVerdict KafkaSpoutPartition::TakeForRewind(
    OffsetStoreUpdate::Kind kind, const std::optional<StormKafkaOffset>& stored,
    Clock::TimePoint now) {
  using Kind = OffsetStoreUpdate::Kind;
  if (rewind_.stage == RewindStage::kNone) return RewindVerdict::kNotTaken;
  if (kind == Kind::kLost) {
    if (rewind_.stage != RewindStage::kReleasing) return RewindVerdict::kTaken;
    rewind_.stage = RewindStage::kReacquiring;
    return RewindVerdict::kTakenReassign;
  }
  if (kind != Kind::kAcquired) return RewindVerdict::kNotTaken;
  // Read before the move: wait.
  if (rewind_.stage != RewindStage::kReacquiring) return RewindVerdict::kTaken;
  const bool matches =
      rewind_.target < 0 || (stored.has_value() && stored->offset == rewind_.target);
  if (!matches && rewind_.cycles < kMaxReacquireCycles) {
    // This acquisition read the node before the move landed: once more.
    rewind_.cycles++;
    rewind_.stage = RewindStage::kReleasing;
    rewind_.since = now;
    return RewindVerdict::kTakenReassign;
  }
  ForgetRewind();
  return RewindVerdict::kNotTaken;  // a normal acquisition from here on
}

void KafkaSpoutPartition::CountStoredOutOfRange() {
  totals_.stored_out_of_range++;
  metrics_.out_of_range->Add(1);
}

}  // namespace tempest::spout
