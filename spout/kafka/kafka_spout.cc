#include "spout/kafka/kafka_spout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"
#include "spout/kafka/kafka_message_id.h"

namespace tempest::spout {
namespace {

using Clock = core::Clock;
using kafka::KafkaRecord;
using kafka::PartitionEvent;
using std::chrono::milliseconds;

constexpr size_t kPollBatch = 2048;
constexpr auto kHousekeepingEvery = milliseconds(100);

}  // namespace

absl::StatusOr<std::unique_ptr<KafkaSpout>> KafkaSpout::Create(const api::ComponentArgs& args) {
  return Create(args, Hooks());
}

absl::StatusOr<std::unique_ptr<KafkaSpout>> KafkaSpout::Create(const api::ComponentArgs& args,
                                                               Hooks hooks) {
  absl::StatusOr<KafkaSpoutConfig> config = ParseKafkaSpoutArgs(args);
  if (!config.ok()) return config.status();
  return std::make_unique<KafkaSpout>(std::move(*config), std::move(hooks));
}

KafkaSpout::KafkaSpout(KafkaSpoutConfig config) : KafkaSpout(std::move(config), Hooks()) {}

KafkaSpout::KafkaSpout(KafkaSpoutConfig config, Hooks hooks)
    : config_(std::move(config)),
      hooks_(std::move(hooks)),
      fetch_errors_(1, std::chrono::seconds(10),
                    hooks_.clock != nullptr ? *hooks_.clock : core::RealClock()),
      commit_errors_(1, std::chrono::seconds(10),
                     hooks_.clock != nullptr ? *hooks_.clock : core::RealClock()) {}

KafkaSpout::~KafkaSpout() { Close(); }

void KafkaSpout::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  if (config_.output_stream.empty()) {
    declarer.Declare(api::Fields(config_.OutputFields()));
  } else {
    declarer.DeclareStream(config_.output_stream, api::Fields(config_.OutputFields()));
  }
}

absl::Status KafkaSpout::Open(const api::Config& config, const api::TopologyContext& context,
                              api::SpoutOutputCollector& collector) {
  (void)config;  // context.config() is the same config with our overrides applied
  clock_ = hooks_.clock != nullptr ? hooks_.clock : &core::RealClock();
  metrics_ = hooks_.metrics != nullptr ? hooks_.metrics : &core::MetricsRegistry::Global();
  collector_ = &collector;
  topology_id_ = context.TopologyId();
  topology_name_ = context.TopologyName();
  task_index_ = context.ThisTaskIndex();
  task_count_ =
      std::max<int>(1, static_cast<int>(context.ComponentTasks(context.ThisComponentId()).size()));
  labels_ = {{"component", context.ThisComponentId().value()},
             {"task", absl::StrCat(context.ThisTaskId().value())}};
  stream_ =
      config_.output_stream.empty() ? api::DefaultStreamId() : api::StreamId(config_.output_stream);
  const api::Config& topo = context.config();
  absl::StatusOr<std::string> connect = ResolveKafkaSpoutConfig(config_, topo);
  if (!connect.ok()) return connect.status();
  coord::ZkClientConfig zk_config = coord::ZkClientConfig::FromLookup(
      [&topo](auto key) { return topo.GetOptionalInt(std::string_view(key.data(), key.size())); });
  // storm.zookeeper.auth.* when the config names them (tests, `tempest
  // local`), else the identity of the worker this task runs in: a worker
  // never hands components credentials through their config.
  absl::StatusOr<coord::ZkAuthConfig> zk_auth = coord::ZkAuthConfig::FromConfig(topo);
  if (!zk_auth.ok()) return zk_auth.status();
  if (!zk_auth->enabled()) {
    coord::ZkAuthConfig worker_auth = coord::ProcessTopologyZkAuth();
    if (worker_auth.enabled()) zk_auth = std::move(worker_auth);
  }
  zk_config.auth = *std::move(zk_auth);

  KafkaSpoutSite site;
  site.config = &config_;
  site.offsets_connect = *connect;
  site.zk_config = zk_config;
  site.topology_id = topology_id_;
  site.task_id = context.ThisTaskId().value();
  site.owner_description = absl::StrCat(topology_id_, ":", context.ThisComponentId().value(), ":",
                                        context.ThisTaskId().value(), "@",
                                        // The address other hosts know this one by, where set.
                                        topo.GetString(api::kStormLocalHostname, LocalHostName()));
  site.metrics = metrics_;
  site.labels = labels_;
  const KafkaSpoutBackends& backends = hooks_.backends;
  absl::StatusOr<std::unique_ptr<OffsetStore>> store =
      backends.offset_store           ? backends.offset_store(site)
      : config_.offsets_in_kafka() ? MakeKafkaGroupOffsetStore(site)
                                     : MakeZkOffsetStore(site);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  // Rewinds (tempest offsets set) work on ZooKeeper offsets only.
  if (!config_.offsets_in_kafka()) {
    if (absl::Status s = StartRewindWatcher(site.owner_description); !s.ok()) return s;
  }
  source_ =
      backends.partition_source ? backends.partition_source(site) : MakeKafkaPartitionSource(site);
  if (!config_.bootstrap_servers.empty()) {
    if (absl::Status s = StartReader(config_.bootstrap_servers); !s.ok()) return s;
  }
  source_->Discover();
  const Clock::TimePoint now = clock_->Now();
  next_commit_ = now + milliseconds(config_.state_update_interval_ms);
  next_refresh_ = now + std::chrono::seconds(*config_.partition_refresh_secs);
  opened_ = true;
  if (config_.offsets_in_kafka()) {
    spdlog::info("kafka spout {} task {}: topics {} guarantee {} offsets in Kafka consumer group "
                 "'{}' ({})",
                 config_.id, context.ThisTaskId().value(), absl::StrJoin(config_.topics, ","),
                 ProcessingGuaranteeName(config_.guarantee), config_.group_id,
                 config_.bootstrap_servers);
  } else {
    spdlog::info("kafka spout {} task {}: topics {} guarantee {} offsets at {}/{} (zk {})",
                 config_.id, context.ThisTaskId().value(), absl::StrJoin(config_.topics, ","),
                 ProcessingGuaranteeName(config_.guarantee), config_.zk_root, config_.id,
                 *connect);
  }
  if (config_.guarantee == ProcessingGuarantee::kAtLeastOnce) {
    if (std::optional<std::string> w = ImmediateRetryWarning(config_)) {
      spdlog::warn("kafka spout {} task {}: {}", config_.id, context.ThisTaskId().value(), *w);
    }
  }
  return absl::OkStatus();
}

absl::Status KafkaSpout::StartReader(const std::string& bootstrap) {
  if (absl::Status s = source_->ConnectReader(bootstrap); !s.ok()) return s;
  if (!config_.dead_letter_topic.empty() && dead_letter_ == nullptr) {
    auto on_outcome = [this](const DeadLetterProducer::Ref& ref, std::string_view error) {
      OnDeadLetterReport(ref, error);
    };
    const KafkaSpoutBackends& backends = hooks_.backends;
    absl::StatusOr<std::unique_ptr<DeadLetterSink>> dead_letter =
        backends.dead_letter ? backends.dead_letter(bootstrap, config_, on_outcome)
                             : MakeDeadLetterProducer(bootstrap, config_, on_outcome);
    if (!dead_letter.ok()) return dead_letter.status();
    dead_letter_ = *std::move(dead_letter);
  }
  return absl::OkStatus();
}

KafkaSpout::Partition& KafkaSpout::SlotFor(const TopicPartition& tp) {
  auto it = slot_of_.find(tp);
  if (it != slot_of_.end()) return *partitions_[it->second];
  const int slot = static_cast<int>(partitions_.size());
  auto p = std::make_unique<Partition>(tp, slot, KafkaPartitionMetrics(*metrics_, labels_, tp),
                                       *clock_);
  slot_of_[tp] = p->slot;
  partitions_.push_back(std::move(p));
  return *partitions_.back();
}

KafkaSpout::Partition* KafkaSpout::Find(const TopicPartition& tp) {
  auto it = slot_of_.find(tp);
  return it == slot_of_.end() ? nullptr : partitions_[it->second].get();
}

KafkaSpout::Partition* KafkaSpout::PartitionOfId(const api::MessageId& id, int64_t* offset) {
  std::optional<KafkaMessageId> decoded = DecodeKafkaMessageId(id);
  if (!decoded.has_value() || decoded->slot < 0 ||
      decoded->slot >= static_cast<int>(partitions_.size())) {
    return nullptr;
  }
  Partition& p = *partitions_[decoded->slot];
  if (!decoded->IsOfEpoch(p.epoch)) return nullptr;  // from an older ownership
  *offset = decoded->offset;
  return &p;
}

void KafkaSpout::NextTuple() {
  if (!opened_ || closed_) return;
  const Clock::TimePoint now = clock_->Now();
  if (store_->HasUpdates() || source_->HasResults()) Drain(now);
  if (dead_letter_ != nullptr) dead_letter_->Poll();
  if (now >= next_housekeeping_) {
    Housekeeping(now);
    next_housekeeping_ = now + kHousekeepingEvery;
  }
  if (!active_ || !source_->reader_connected()) return;
  int emitted = EmitSome(now, hooks_.max_emit_per_call);
  if (emitted < hooks_.max_emit_per_call && !AwaitingAtMostOnceCommit()) {
    PollKafka(now);
    EmitSome(now, hooks_.max_emit_per_call - emitted);
  }
}

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
    if (p.phase == Phase::kActive && p.window.HasWaiting()) return true;
  }
  return false;
}

void KafkaSpout::PollKafka(Clock::TimePoint now) {
  Partition* last = nullptr;
  bool any_over = false;
  bool any_waiting = false;
  for (int slot = 0; slot < static_cast<int>(partitions_.size()) && !any_waiting; ++slot) {
    any_waiting = partitions_[slot]->window.HasWaiting();
  }
  // Wait briefly only when idle, so an idle spout does not spin.
  const milliseconds wait = any_waiting ? milliseconds(0) : milliseconds(1);
  std::vector<PartitionEvent> events = source_->Poll(kPollBatch, wait, [&](const KafkaRecord& rec) {
    Partition* p = last;
    if (p == nullptr || p->tp.partition != rec.partition || p->tp.topic != rec.topic) {
      p = Find(TopicPartition{std::string(rec.topic), rec.partition});
      last = p;
    }
    if (p == nullptr || p->phase != Phase::kActive || !p->fetching || !p->state.has_value()) {
      return;
    }
    KafkaPartitionState& st = *p->state;
    if (rec.offset < st.fetched_to()) return;  // already taken (a restart overlap)
    if (config_.stop_at_end && p->end_offset >= 0 && rec.offset >= p->end_offset) return;
    if (st.OverUncommittedLimit()) {
      // Dropped here, fetched again from fetched_to when resumed.
      any_over = true;
      return;
    }
    RecordWindow::Record& r = p->window.Append(rec.offset);
    r.has_key = rec.has_key;
    r.has_value = rec.has_value;
    if (rec.has_key) r.key.assign(rec.key);
    if (rec.has_value) r.value.assign(rec.value);
    r.timestamp_ms = rec.timestamp_ms;
    p->newest_timestamp_ms = std::max(p->newest_timestamp_ms, rec.timestamp_ms);
    st.OnFetched(rec.offset);
    if (st.OverUncommittedLimit()) any_over = true;
  });
  for (const PartitionEvent& e : events) {
    Partition* p = Find(e.partition);
    if (p == nullptr || p->phase != Phase::kActive || !p->state.has_value()) continue;
    switch (e.kind) {
      case PartitionEvent::Kind::kOutOfRange:
        if (!p->fetching || p->repositioning) break;
        (void)source_->Stop(p->tp);
        p->fetching = false;
        p->repositioning = true;
        p->metrics.out_of_range->Add(1);
        source_->Watermarks(p->tp, p->epoch, p->state->fetched_to());
        break;
      case PartitionEvent::Kind::kEndOfPartition:
        p->log_end = std::max(p->log_end, e.offset);
        break;
      case PartitionEvent::Kind::kError: {
        uint64_t held = 0;
        if (fetch_errors_.Allow(&held)) {
          spdlog::warn("kafka spout {}: fetch error on {}: {} ({} more fetch errors since the "
                       "last line)",
                       config_.id, Describe(p->tp), e.message, held);
        }
        break;
      }
    }
  }
  if (any_over) {
    for (auto& p : partitions_) UpdateFetching(*p);
  }
  if (config_.stop_at_end) {
    for (auto& p : partitions_) UpdateFetching(*p);
  }
  if (config_.guarantee == ProcessingGuarantee::kAtMostOnce) RequestAtMostOnceCommits(now);
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
      values.emplace_back(p.tp.topic);
      values.emplace_back(int64_t{p.tp.partition});
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
    collector_->Emit(stream_, std::move(values), EncodeKafkaMessageId(p.slot, p.epoch, r.offset));
  } else {
    collector_->Emit(stream_, std::move(values));
  }
}

int KafkaSpout::EmitSome(Clock::TimePoint now, int budget) {
  int emitted = 0;
  const size_t n = assigned_slots_.size();
  if (n == 0 || budget <= 0) return 0;
  // Due retries first: they hold back the commit point.
  if (config_.guarantee == ProcessingGuarantee::kAtLeastOnce) {
    for (int slot : assigned_slots_) {
      Partition* p = partitions_[slot].get();
      const TopicPartition& tp = p->tp;
      if (p->phase != Phase::kActive || !p->state.has_value()) continue;
      while (emitted < budget) {
        std::optional<int64_t> off = p->state->NextRetry(now);
        if (!off.has_value()) break;
        p->state->Retrying(*off);
        RecordWindow::Record* rec = p->window.FindMutable(*off);
        if (rec == nullptr) {
          // No payload (cannot happen while pending); never skip silently.
          spdlog::error("kafka spout {}: no payload to retry offset {} of {}", config_.id, *off,
                        Describe(tp));
          continue;
        }
        EmitRecord(*p, *rec, false);
        ++emitted;
      }
    }
    std::vector<std::pair<int, int64_t>> resend;
    resend.swap(dead_letter_retry_);  // a failing send queues itself again
    for (const auto& [slot, offset] : resend) {
      Partition& p = *partitions_[slot];
      if (p.phase == Phase::kActive && p.state.has_value() &&
          p.state->pending().IsPending(offset)) {
        SendToDeadLetter(p, offset);
      }
    }
  }
  for (size_t i = 0; i < n && emitted < budget; ++i) {
    Partition* p = partitions_[assigned_slots_[(round_robin_ + i) % n]].get();
    if (p->phase != Phase::kActive || !p->state.has_value()) continue;
    KafkaPartitionState& st = *p->state;
    const bool retain = config_.guarantee == ProcessingGuarantee::kAtLeastOnce;
    while (emitted < budget && p->window.HasWaiting()) {
      RecordWindow::Record& r = p->window.FrontWaiting();
      if (!st.MayEmit(r.offset)) break;  // AT_MOST_ONCE: commit first
      const int64_t offset = r.offset;
      st.OnEmitted(offset);
      EmitRecord(*p, r, !retain);
      p->window.PopWaiting(retain);
      // An offset that could not become pending is never acked: keep nothing.
      if (retain && !st.pending().IsPending(offset)) p->window.Release(offset);
      ++emitted;
    }
  }
  ++round_robin_;
  return emitted;
}

void KafkaSpout::Ack(const api::MessageId& message_id) {
  int64_t offset = 0;
  Partition* p = PartitionOfId(message_id, &offset);
  if (p == nullptr || !p->state.has_value()) return;
  if (p->state->OnAck(offset)) p->window.Release(offset);
}

void KafkaSpout::Fail(const api::MessageId& message_id) {
  int64_t offset = 0;
  Partition* found = PartitionOfId(message_id, &offset);
  if (found == nullptr || !found->state.has_value() || found->phase != Phase::kActive) return;
  Partition& p = *found;
  const Clock::TimePoint now = clock_->Now();
  const KafkaPartitionState::FailAction action = p.state->OnFail(offset, now);
  if (action != KafkaPartitionState::FailAction::kIgnore) failure_reporter_.OnFailure(now);
  switch (action) {
    case KafkaPartitionState::FailAction::kIgnore:
      return;
    case KafkaPartitionState::FailAction::kRetry:
      if (config_.dead_letter_topic.empty() && config_.retry.retry_limit > 0 &&
          p.state->RetryFailures(offset) == config_.retry.retry_limit) {
        // Once per offset; the periodic report keeps it visible afterwards.
        const absl::Status stall = absl::FailedPreconditionError(absl::StrCat(
            "offset ", offset, " of ", Describe(p.tp), " failed ", config_.retry.retry_limit,
            " times (retryLimit) and no deadLetterTopic is set: it is retried every ",
            config_.retry.retry_delay_max_ms, " ms and commits of ", Describe(p.tp),
            " stay at or below it until it succeeds"));
        spdlog::warn("kafka spout {}: {}", config_.id, std::string(stall.message()));
        collector_->ReportError(stall);
      }
      return;
    case KafkaPartitionState::FailAction::kDeadLetter:
      SendToDeadLetter(p, offset);
      return;
  }
}

void KafkaSpout::SendToDeadLetter(Partition& p, int64_t offset) {
  const RecordWindow::Record* rec = p.window.Find(offset);
  if (rec == nullptr || dead_letter_ == nullptr) return;
  if (!dead_letter_->Send(p.tp, *rec, {p.slot, p.epoch, offset})) {
    dead_letter_retry_.emplace_back(p.slot, offset);
  }
}

void KafkaSpout::OnDeadLetterReport(const DeadLetterProducer::Ref& ref, std::string_view error) {
  if (ref.slot < 0 || ref.slot >= static_cast<int>(partitions_.size())) return;
  Partition& p = *partitions_[ref.slot];
  if (p.epoch != ref.epoch || !p.state.has_value()) return;
  if (!error.empty()) {
    spdlog::warn("kafka spout {}: dead-lettering offset {} of {} failed ({}); retrying", config_.id,
                 ref.offset, Describe(p.tp), error);
    dead_letter_retry_.emplace_back(ref.slot, ref.offset);
    return;
  }
  const int64_t failures = p.state->RetryFailures(ref.offset);  // OnDeadLettered forgets them
  if (p.state->OnDeadLettered(ref.offset)) {
    p.window.Release(ref.offset);
    p.metrics.dead_lettered->Add(1);
    p.totals.dead_lettered++;
    JournalEntry e;
    e.type = JournalEntryType::kDeadLetter;
    e.offset = ref.offset;
    e.target_topic = config_.dead_letter_topic;
    e.failures = failures;
    p.journal.push_back(std::move(e));
    spdlog::warn("kafka spout {}: offset {} of {} sent to dead-letter topic {} after {} failures",
                 config_.id, ref.offset, Describe(p.tp), config_.dead_letter_topic, failures);
  }
}

void KafkaSpout::Activate() { active_ = true; }

void KafkaSpout::Deactivate() {
  active_ = false;
  if (opened_ && !closed_) CommitNow(false);
}

void KafkaSpout::Close() {
  if (closed_) return;
  closed_ = true;
  if (opened_) {
    // Unlike storm-kafka, a clean close commits what is complete.
    Drain(clock_->Now());
    CommitNow(true);
    rewind_watcher_.reset();  // before the store closes the session it uses
    store_->Close(hooks_.close_timeout);
    source_->StopMetadata();
  }
  dead_letter_.reset();  // waits (bounded) for outstanding dead letters
  source_.reset();
}

bool KafkaSpout::IsExhausted() const {
  if (!config_.stop_at_end || !discovered_ || !opened_) return false;
  // With offsets in a consumer group, this task's share is what the group
  // gave it; a task with none is done only if there are fewer partitions
  // than tasks (the round-robin assignor gives every member one otherwise,
  // so owning none means a rebalance is under way).
  const bool group = config_.offsets_in_kafka();
  int owned = 0;
  for (int slot : assigned_slots_) {
    const Partition& p = *partitions_[slot];
    if (group && p.phase == Phase::kUnowned) continue;
    ++owned;
    if (p.phase != Phase::kActive || !p.state.has_value() || p.end_offset < 0) return false;
    const KafkaPartitionState& st = *p.state;
    if (st.emitted_to() < p.end_offset || p.window.HasWaiting() || !st.pending().empty()) {
      return false;
    }
    if (st.CommitCandidate().has_value()) return false;
  }
  if (group && owned == 0) return static_cast<int>(assigned_slots_.size()) <= task_index_;
  return true;
}

std::map<TopicPartition, KafkaSpout::PartitionStats> KafkaSpout::Stats() const {
  std::map<TopicPartition, PartitionStats> out;
  for (const auto& pp : partitions_) {
    const Partition& p = *pp;
    if (!p.assigned) continue;
    PartitionStats s = p.totals;
    s.owned = p.phase == Phase::kActive;
    s.failed = p.phase == Phase::kFailed;
    s.paused = p.paused;
    if (p.state.has_value()) {
      s.committed = p.state->committed();
      s.emitted_to = p.state->emitted_to();
      s.pending = p.state->pending().count();
    }
    out[p.tp] = s;
  }
  return out;
}

absl::Status RegisterKafkaSpout(api::ComponentRegistry& registry) {
  for (std::string_view name :
       {kTempestKafkaSpoutClass, kStormKafkaSpoutClass, kKafkaClientSpoutClass}) {
    absl::Status s =
        registry.RegisterSpout(name, &api::registry_internal::Make<api::Spout, KafkaSpout>);
    if (!s.ok() && !absl::IsAlreadyExists(s)) return s;
  }
  return absl::OkStatus();
}

void LinkKafkaSpout() {}

TEMPEST_REGISTER_SPOUT("tempest.KafkaSpout", KafkaSpout);
TEMPEST_REGISTER_SPOUT("org.apache.storm.kafka.KafkaSpout", KafkaSpout);

}  // namespace tempest::spout
