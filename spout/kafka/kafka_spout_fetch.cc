// KafkaSpout's fetch and emit path, on the executor thread: polling the
// reader into the partitions' record windows, starting and stopping fetches
// (the uncommitted limit, stopAtEnd), emitting due retries and waiting
// records, and the dead-letter sends and their outcomes. The Spout methods
// are in kafka_spout.cc.
#include <algorithm>
#include <chrono>
#include <thread>

#include "spdlog/spdlog.h"
#include "spout/kafka/kafka_message_id.h"
#include "spout/kafka/kafka_spout.h"

namespace tempest::spout {
namespace {

using Clock = core::Clock;
using kafka::KafkaRecord;
using kafka::PartitionEvent;
using std::chrono::milliseconds;

constexpr size_t kPollBatch = 2048;

}  // namespace

// AT_MOST_ONCE commits every record it fetches before emitting it, so what is
// fetched but not yet emitted is lost if the worker dies. While fetched records
// wait for their commit, fetching more would only widen that window: each
// NextTuple during the commit's round trip would take another poll batch, and
// the next commit would cover all of it, so a topology slower than Kafka lost
// whole partitions on a crash. Like storm-kafka-client, which polls only once
// its emit queue is empty, we fetch again only after the waiting records are
// out; the window is then one poll batch plus what is queued downstream.
bool KafkaSpout::AwaitingAtMostOnceCommit() const {
  if (config_.guarantee != ProcessingGuarantee::kAtMostOnce) return false;
  for (int slot : assigned_slots_) {
    const Partition& p = *partitions_[slot];
    if (p.phase() == Partition::Phase::kActive && p.window().HasWaiting()) return true;
  }
  return false;
}

bool KafkaSpout::AnyCommitInFlight() const {
  for (int slot : assigned_slots_) {
    if (partitions_[slot]->commit_in_flight()) return true;
  }
  return false;
}

// AT_MOST_ONCE and NO_GUARANTEE commit records whether or not they were
// emitted (AT_MOST_ONCE before it emits them, NO_GUARANTEE what it fetched).
// A deactivated spout is not called again until it is activated, and an
// upgrade or a kill with a wait deactivates the spout and later stops it:
// records committed but still in the spout would be lost although nothing
// failed. So deactivation first emits them. AT_MOST_ONCE waits (bounded) for
// its commits in flight and emits every record the stored commits cover; what
// no commit covers is left to whoever reads the partition next. NO_GUARANTEE
// emits everything it fetched, then commits it.
void KafkaSpout::EmitBeforeDeactivating() {
  const bool at_most_once = config_.guarantee == ProcessingGuarantee::kAtMostOnce;
  const auto deadline = std::chrono::steady_clock::now() + hooks_.deactivate_commit_wait;
  Drain(clock_->Now());
  while (at_most_once && AnyCommitInFlight() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
    Drain(clock_->Now());
  }
  const Clock::TimePoint now = clock_->Now();
  int emitted = 0;
  for (int n = EmitSome(now, hooks_.max_emit_per_call); n > 0;
       n = EmitSome(now, hooks_.max_emit_per_call)) {
    emitted += n;
  }
  if (emitted > 0) {
    spdlog::info("kafka spout {}: deactivated; emitted the {} records it had fetched{}", config_.id,
                 emitted, at_most_once ? " and committed" : "");
  }
  if (at_most_once && AnyCommitInFlight()) {
    spdlog::warn(
        "kafka spout {}: deactivated with an AT_MOST_ONCE commit unanswered after {} ms; the "
        "records it covers are emitted on activation, and are lost if the topology stops first",
        config_.id, hooks_.deactivate_commit_wait.count());
  }
}

void KafkaSpout::PollKafka(Clock::TimePoint now) {
  bool any_waiting = false;
  for (int slot = 0; slot < static_cast<int>(partitions_.size()) && !any_waiting; ++slot) {
    any_waiting = partitions_[slot]->window().HasWaiting();
  }
  // Wait briefly only when idle, so an idle spout does not spin.
  const milliseconds wait = any_waiting ? milliseconds(0) : milliseconds(1);
  Partition* last = nullptr;
  bool any_over = false;
  std::vector<PartitionEvent> events = source_->Poll(kPollBatch, wait, [&](const KafkaRecord& rec) {
    if (last == nullptr || last->tp().partition != rec.partition || last->tp().topic != rec.topic) {
      last = Find(TopicPartition{std::string(rec.topic), rec.partition});
    }
    if (last != nullptr && last->TakeFetched(rec, config_.stop_at_end)) any_over = true;
  });
  for (const PartitionEvent& e : events) OnPartitionEvent(e);
  if (any_over) {
    for (auto& p : partitions_) UpdateFetching(*p);
  }
  if (config_.stop_at_end) {
    for (auto& p : partitions_) UpdateFetching(*p);
  }
  if (config_.guarantee == ProcessingGuarantee::kAtMostOnce) RequestAtMostOnceCommits(now);
}

void KafkaSpout::OnPartitionEvent(const PartitionEvent& e) {
  Partition* p = Find(e.partition);
  if (p == nullptr || !p->active()) return;
  switch (e.kind) {
    case PartitionEvent::Kind::kOutOfRange:
      if (!p->BeginReposition()) break;
      StopFetching(p->tp());
      source_->Watermarks(p->tp(), p->epoch(), p->state()->fetched_to());
      break;
    case PartitionEvent::Kind::kEndOfPartition:
      p->SawLogEnd(e.offset);
      break;
    case PartitionEvent::Kind::kError: {
      uint64_t held = 0;
      if (fetch_errors_.Allow(&held)) {
        spdlog::warn(
            "kafka spout {}: fetch error on {}: {} ({} more fetch errors since the "
            "last line)",
            config_.id, Describe(p->tp()), e.message, held);
      }
      break;
    }
  }
}

void KafkaSpout::UpdateFetching(Partition& p) {
  if (!p.FetchControllable() || !source_->reader_connected()) return;
  const bool want = p.WantsFetch(config_.stop_at_end);
  if (want && !p.fetching()) {
    absl::Status s = source_->Start(p.tp(), p.state()->fetched_to());
    if (!s.ok()) {
      spdlog::warn("kafka spout {}: cannot fetch {}: {}", config_.id, Describe(p.tp()),
                   s.ToString());
      return;
    }
    if (p.FetchStarted()) {
      spdlog::info("kafka spout {}: {} resumes at {} (commits caught up to {})", config_.id,
                   Describe(p.tp()), p.state()->fetched_to(), p.state()->committed());
    }
  } else if (!want && p.fetching()) {
    const bool over = p.OverUncommittedLimit();
    StopFetching(p.tp());
    if (p.FetchStopped(over)) {
      spdlog::warn(
          "kafka spout {}: pausing {}: {} offsets uncommitted (limit {}); resumes when "
          "commits succeed",
          config_.id, Describe(p.tp()), p.state()->Uncommitted(), *config_.max_uncommitted_offsets);
    }
  }
}

void KafkaSpout::StopFetching(const TopicPartition& tp) {
  // Nothing to do about a stop the reader refuses: the partition is no
  // longer fetching here, so PollKafka drops whatever still arrives for it.
  (void)source_->Stop(tp);
}

void KafkaSpout::EmitRecord(const Partition& p, RecordWindow::Record& r, bool take_payload) {
  // The window keeps AT_LEAST_ONCE payloads for retries, so those are copied;
  // otherwise the record is dropped right after and its bytes move.
  auto payload = [take_payload](std::string& s) {
    return take_payload ? std::move(s) : std::string(s);
  };
  api::Values values;
  switch (config_.scheme) {
    case RecordScheme::kRecord:
      values.reserve(5);
      values.emplace_back(p.tp().topic);
      values.emplace_back(int64_t{p.tp().partition});
      values.emplace_back(r.offset);
      values.push_back(r.has_key ? api::Value(payload(r.key)) : api::Value());
      values.push_back(r.has_value ? api::Value(payload(r.value)) : api::Value());
      break;
    case RecordScheme::kRaw:
      values.push_back(r.has_value ? api::Value::OfBytes(payload(r.value)) : api::Value());
      break;
    case RecordScheme::kString:
    case RecordScheme::kValue:
      values.push_back(r.has_value ? api::Value(payload(r.value)) : api::Value());
      break;
  }
  if (config_.guarantee == ProcessingGuarantee::kAtLeastOnce) {
    collector_->Emit(stream_, std::move(values),
                     EncodeKafkaMessageId(p.slot(), p.epoch(), r.offset));
  } else {
    collector_->Emit(stream_, std::move(values));
  }
}

int KafkaSpout::EmitSome(Clock::TimePoint now, int budget) {
  const size_t n = assigned_slots_.size();
  if (n == 0 || budget <= 0) return 0;
  int emitted = 0;
  if (config_.guarantee == ProcessingGuarantee::kAtLeastOnce) {
    emitted = EmitRetries(now, budget);
    ResendDeadLetters();
  }
  for (size_t i = 0; i < n && emitted < budget; ++i) {
    Partition& p = *partitions_[assigned_slots_[(round_robin_ + i) % n]];
    if (p.active()) emitted += EmitWaiting(p, budget - emitted);
  }
  ++round_robin_;
  return emitted;
}

int KafkaSpout::EmitRetries(Clock::TimePoint now, int budget) {
  int emitted = 0;
  for (int slot : assigned_slots_) {
    Partition& p = *partitions_[slot];
    if (!p.active()) continue;
    KafkaPartitionState& st = *p.state();
    while (emitted < budget) {
      std::optional<int64_t> off = st.NextRetry(now);
      if (!off.has_value()) break;
      st.Retrying(*off);
      RecordWindow::Record* rec = p.window().FindMutable(*off);
      if (rec == nullptr) {
        // No payload (cannot happen while pending); never skip silently.
        spdlog::error("kafka spout {}: no payload to retry offset {} of {}", config_.id, *off,
                      Describe(p.tp()));
        continue;
      }
      EmitRecord(p, *rec, false);
      ++emitted;
    }
  }
  return emitted;
}

int KafkaSpout::EmitWaiting(Partition& p, int budget) {
  KafkaPartitionState& st = *p.state();
  RecordWindow& window = p.window();
  const bool retain = config_.guarantee == ProcessingGuarantee::kAtLeastOnce;
  int emitted = 0;
  while (emitted < budget && window.HasWaiting()) {
    RecordWindow::Record& r = window.FrontWaiting();
    if (!st.MayEmit(r.offset)) break;  // AT_MOST_ONCE: commit first
    const int64_t offset = r.offset;
    st.OnEmitted(offset);
    EmitRecord(p, r, !retain);
    window.PopWaiting(retain);
    // An offset that could not become pending is never acked: keep nothing.
    if (retain && !st.pending().IsPending(offset)) window.Release(offset);
    ++emitted;
  }
  return emitted;
}

void KafkaSpout::SendToDeadLetter(Partition& p, int64_t offset) {
  const RecordWindow::Record* rec = p.window().Find(offset);
  if (rec == nullptr || dead_letter_ == nullptr) return;
  if (!dead_letter_->Send(p.tp(), *rec, {p.slot(), p.epoch(), offset})) {
    dead_letter_retry_.emplace_back(p.slot(), offset);
  }
}

void KafkaSpout::ResendDeadLetters() {
  std::vector<std::pair<int, int64_t>> resend;
  resend.swap(dead_letter_retry_);  // a failing send queues itself again
  for (const auto& [slot, offset] : resend) {
    Partition& p = *partitions_[slot];
    if (p.active() && p.state()->pending().IsPending(offset)) SendToDeadLetter(p, offset);
  }
}

void KafkaSpout::OnDeadLetterReport(const DeadLetterProducer::Ref& ref, std::string_view error) {
  if (ref.slot < 0 || ref.slot >= static_cast<int>(partitions_.size())) return;
  Partition& p = *partitions_[ref.slot];
  if (!p.OfEpoch(ref.epoch) || p.state() == nullptr) return;
  if (!error.empty()) {
    spdlog::warn("kafka spout {}: dead-lettering offset {} of {} failed ({}); retrying", config_.id,
                 ref.offset, Describe(p.tp()), error);
    dead_letter_retry_.emplace_back(ref.slot, ref.offset);
    return;
  }
  if (std::optional<int64_t> failures = p.DeadLettered(ref.offset, config_.dead_letter_topic)) {
    spdlog::warn("kafka spout {}: offset {} of {} sent to dead-letter topic {} after {} failures",
                 config_.id, ref.offset, Describe(p.tp()), config_.dead_letter_topic, *failures);
  }
}

}  // namespace tempest::spout
