#include "spout/kafka_spout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"
#include "common/kafka/kafka_reader.h"

namespace tempest::spout {
namespace {

using Clock = core::Clock;
using std::chrono::milliseconds;

constexpr int kSlotBits = 11;    // up to 2048 partitions per task in the compact id
constexpr int kEpochBits = 8;    // ownership epoch modulo 256
constexpr int kOffsetBits = 44;  // offsets below 2^44 (~17.6e12)
constexpr int64_t kOffsetMask = (int64_t{1} << kOffsetBits) - 1;
constexpr size_t kPollBatch = 2048;
constexpr auto kHousekeepingEvery = milliseconds(100);
constexpr auto kBlockedWarnAfter = std::chrono::seconds(30);
constexpr auto kBlockedWarnEvery = std::chrono::seconds(60);

std::string Describe(const TopicPartition& tp) { return absl::StrCat(tp.topic, "/", tp.partition); }

}  // namespace

absl::StatusOr<std::unique_ptr<KafkaSpout>> KafkaSpout::Create(const api::ComponentArgs& args) {
  absl::StatusOr<KafkaSpoutConfig> config = ParseKafkaSpoutArgs(args);
  if (!config.ok()) return config.status();
  return std::make_unique<KafkaSpout>(std::move(*config));
}

KafkaSpout::KafkaSpout(KafkaSpoutConfig config) : KafkaSpout(std::move(config), Hooks()) {}

KafkaSpout::KafkaSpout(KafkaSpoutConfig config, Hooks hooks)
    : config_(std::move(config)), hooks_(hooks) {}

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
  const coord::ZkClientConfig zk_config = coord::ZkClientConfig::FromLookup(
      [&topo](auto key) { return topo.GetOptionalInt(std::string_view(key.data(), key.size())); });

  ZkOffsetStore::Options so;
  so.connect_string = *connect;
  so.zk_config = zk_config;
  so.zk_root = config_.zk_root;
  so.spout_id = config_.id;
  so.topic_level = config_.topic_level();
  so.owner_description = absl::StrCat(topology_id_, ":", context.ThisComponentId().value(), ":",
                                      context.ThisTaskId().value());
  so.metrics = metrics_;
  so.labels = labels_;
  absl::StatusOr<std::unique_ptr<ZkOffsetStore>> store = ZkOffsetStore::Create(so);
  if (!store.ok()) return store.status();
  store_ = std::move(*store);

  KafkaMetadataWorker::Options mo;
  mo.config = config_;
  mo.topology_id = topology_id_;
  mo.zk_config = zk_config;
  metadata_ = std::make_unique<KafkaMetadataWorker>(std::move(mo));
  if (!config_.bootstrap_servers.empty()) {
    if (absl::Status s = StartReader(config_.bootstrap_servers); !s.ok()) return s;
  }
  metadata_->Discover();
  const Clock::TimePoint now = clock_->Now();
  next_commit_ = now + milliseconds(config_.state_update_interval_ms);
  next_refresh_ = now + std::chrono::seconds(*config_.partition_refresh_secs);
  opened_ = true;
  spdlog::info("kafka spout {} task {}: topics {} guarantee {} offsets at {}{}/{} (zk {})",
               config_.id, context.ThisTaskId().value(), absl::StrJoin(config_.topics, ","),
               ProcessingGuaranteeName(config_.guarantee), config_.zk_root, "", config_.id,
               *connect);
  if (config_.guarantee == ProcessingGuarantee::kAtLeastOnce) {
    if (std::optional<std::string> w = ImmediateRetryWarning(config_)) {
      spdlog::warn("kafka spout {} task {}: {}", config_.id, context.ThisTaskId().value(), *w);
    }
  }
  return absl::OkStatus();
}

absl::Status KafkaSpout::StartReader(const std::string& bootstrap) {
  kafka::KafkaReaderOptions ro;
  ro.bootstrap_servers = bootstrap;
  ro.client_id = absl::StrCat("tempest-kafka-spout-", config_.id);
  for (const auto& [k, v] : config_.kafka_properties) ro.properties[k] = v;
  absl::StatusOr<std::unique_ptr<kafka::KafkaReader>> reader = kafka::KafkaReader::Create(ro);
  if (!reader.ok()) return reader.status();
  reader_ = std::move(*reader);
  if (!config_.dead_letter_topic.empty() && dead_letter_ == nullptr) {
    absl::StatusOr<std::unique_ptr<DeadLetterProducer>> dead_letter = DeadLetterProducer::Create(
        bootstrap, config_.id, config_.dead_letter_topic,
        [this](const DeadLetterProducer::Ref& ref, std::string_view error) {
          OnDeadLetterReport(ref, error);
        });
    if (!dead_letter.ok()) return dead_letter.status();
    dead_letter_ = *std::move(dead_letter);
  }
  return absl::OkStatus();
}

KafkaSpout::Partition& KafkaSpout::SlotFor(const TopicPartition& tp) {
  auto it = slot_of_.find(tp);
  if (it != slot_of_.end()) return *partitions_[it->second];
  auto p = std::make_unique<Partition>();
  p->tp = tp;
  p->slot = static_cast<int>(partitions_.size());
  p->lag = &PartitionGauge("tempest_kafka_spout_lag", tp);
  p->committed = &PartitionGauge("tempest_kafka_spout_committed_offset", tp);
  p->emitted = &PartitionGauge("tempest_kafka_spout_latest_emitted_offset", tp);
  p->pending = &PartitionGauge("tempest_kafka_spout_pending", tp);
  p->blocked_seconds = &PartitionGauge("tempest_kafka_spout_commit_blocked_seconds", tp);
  p->blocked_offset_gauge = &PartitionGauge("tempest_kafka_spout_commit_blocked_offset", tp);
  p->paused_gauge = &PartitionGauge("tempest_kafka_spout_paused", tp);
  p->lost = &PartitionCounter("tempest_kafka_spout_lost_messages", tp);
  p->dropped = &PartitionCounter("tempest_kafka_spout_dropped_pending", tp);
  p->dead_lettered = &PartitionCounter("tempest_kafka_spout_dead_lettered", tp);
  p->out_of_range = &PartitionCounter("tempest_kafka_spout_out_of_range", tp);
  slot_of_[tp] = p->slot;
  partitions_.push_back(std::move(p));
  return *partitions_.back();
}

KafkaSpout::Partition* KafkaSpout::Find(const TopicPartition& tp) {
  auto it = slot_of_.find(tp);
  return it == slot_of_.end() ? nullptr : partitions_[it->second].get();
}

core::Gauge& KafkaSpout::PartitionGauge(const std::string& name, const TopicPartition& tp) {
  core::MetricLabels l = labels_;
  l["topic"] = tp.topic;
  l["partition"] = absl::StrCat(tp.partition);
  return metrics_->GetGauge(name, l);
}

core::Counter& KafkaSpout::PartitionCounter(const std::string& name, const TopicPartition& tp) {
  core::MetricLabels l = labels_;
  l["topic"] = tp.topic;
  l["partition"] = absl::StrCat(tp.partition);
  return metrics_->GetCounter(name, l);
}

api::MessageId KafkaSpout::EncodeId(const Partition& p, int64_t offset) const {
  if (p.slot < (1 << kSlotBits) && offset >= 0 && offset <= kOffsetMask) {
    return api::MessageId((int64_t{p.slot} << (kOffsetBits + kEpochBits)) |
                          (int64_t{p.epoch & 0xff} << kOffsetBits) | offset);
  }
  return api::MessageId(api::ValueList{int64_t{p.slot}, int64_t{p.epoch}, offset});
}

bool KafkaSpout::DecodeId(const api::MessageId& id, int* slot, uint32_t* epoch,
                          int64_t* offset) const {
  if (id.is_int()) {
    const int64_t v = id.AsInt();
    if (v < 0) return false;
    *slot = static_cast<int>(v >> (kOffsetBits + kEpochBits));
    *epoch = static_cast<uint32_t>((v >> kOffsetBits) & 0xff);
    *offset = v & kOffsetMask;
    if (*slot < 0 || *slot >= static_cast<int>(partitions_.size())) return false;
    // The compact form carries the epoch modulo 256.
    if ((partitions_[*slot]->epoch & 0xff) != *epoch) return false;
    *epoch = partitions_[*slot]->epoch;
    return true;
  }
  const api::ValueList* l = id.TryList();
  if (l == nullptr || l->size() != 3 || !(*l)[0].is_int() || !(*l)[1].is_int() ||
      !(*l)[2].is_int()) {
    return false;
  }
  *slot = static_cast<int>((*l)[0].AsInt());
  *epoch = static_cast<uint32_t>((*l)[1].AsInt());
  *offset = (*l)[2].AsInt();
  return *slot >= 0 && *slot < static_cast<int>(partitions_.size());
}

void KafkaSpout::NextTuple() {
  if (!opened_ || closed_) return;
  const Clock::TimePoint now = clock_->Now();
  if (store_->HasUpdates() || metadata_->HasResults()) Drain(now);
  if (dead_letter_ != nullptr) dead_letter_->Poll();
  if (now >= next_housekeeping_) {
    Housekeeping(now);
    next_housekeeping_ = now + kHousekeepingEvery;
  }
  if (!active_ || !reader_) return;
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

void KafkaSpout::Drain(Clock::TimePoint now) {
  std::vector<OffsetStoreUpdate> updates = store_->TakeUpdates();
  for (OffsetStoreUpdate& u : updates) OnStoreUpdate(u, now);
  std::vector<MetadataResult> results = metadata_->Take();
  for (MetadataResult& r : results) OnMetadata(r, now);
}

void KafkaSpout::OnStoreUpdate(OffsetStoreUpdate& u, Clock::TimePoint now) {
  using Kind = OffsetStoreUpdate::Kind;
  Partition* p = u.kind == Kind::kCommitFailed ? nullptr : Find(u.partition);
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
      p->stored = u.stored;
      metadata_->Resolve(u.partition, u.acquisition, u.stored);
      return;
    case Kind::kLost:
      if (p == nullptr) return;
      if (p->phase != Phase::kUnowned) {
        DropOwnership(*p, std::string(u.status.message()));
      }
      return;
    case Kind::kCommitted:
      if (p == nullptr || !p->state.has_value() || p->phase == Phase::kUnowned) return;
      p->state->OnCommitted(u.offset);
      if (u.offset >= p->requested_commit) p->commit_in_flight = false;
      p->committed->Set(p->state->committed());
      UpdateFetching(*p);
      return;
    case Kind::kCommitFailed:
      ++commit_failures_;
      for (auto& part : partitions_) {
        part->commit_in_flight = false;
        part->amo_retry_at =
            now + milliseconds(std::min<int64_t>(config_.state_update_interval_ms, 500));
      }
      if (now - commit_error_logged_ >= std::chrono::seconds(10)) {
        commit_error_logged_ = now;
        spdlog::warn("kafka spout {}: offset commit failed ({} failures so far), will retry: {}",
                     config_.id, commit_failures_, u.status.ToString());
      }
      return;
    case Kind::kReadFailed:
      if (p == nullptr) return;
      if (p->read_error_reported == Clock::TimePoint{} ||
          now - p->read_error_reported >= std::chrono::seconds(30)) {
        p->read_error_reported = now;
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
    case MetadataResult::Kind::kDiscovered: {
      if (!r.status.ok()) {
        spdlog::warn("kafka spout {}: partition discovery failed: {}", config_.id,
                     r.status.ToString());
        next_refresh_ = std::min(next_refresh_, now + std::chrono::seconds(2));
        return;
      }
      if (!reader_ && !r.bootstrap_servers.empty()) {
        if (absl::Status s = StartReader(r.bootstrap_servers); !s.ok()) {
          spdlog::error("kafka spout {}: {}", config_.id, s.ToString());
          collector_->ReportError(s);
          return;
        }
      }
      discovered_ = true;
      ApplyAssignment(r.partitions);
      return;
    }
    case MetadataResult::Kind::kResolved: {
      Partition* p = Find(r.partition);
      if (p == nullptr || p->phase != Phase::kResolving || p->acquisition != r.tag) return;
      if (!r.status.ok() || !reader_) {
        spdlog::warn("kafka spout {}: cannot resolve the start offset of {}: {}", config_.id,
                     Describe(r.partition), r.status.ToString());
        // The store keeps ownership meanwhile; ask again shortly.
        metadata_->Resolve(r.partition, r.tag, p->stored, milliseconds(1000));
        return;
      }
      KafkaPartitionState::Options so;
      so.guarantee = config_.guarantee;
      so.retry = config_.retry;
      so.max_uncommitted = *config_.max_uncommitted_offsets;
      so.has_dead_letter = !config_.dead_letter_topic.empty();
      p->state.emplace(so, r.decision.committed, r.decision.start);
      p->window.Clear();
      p->end_offset = r.high;
      p->log_end = r.high;
      p->leader = r.leader;
      p->phase = Phase::kActive;
      p->fetching = false;
      p->paused = false;
      p->repositioning = false;
      p->commit_in_flight = false;
      p->committed->Set(p->state->committed());
      spdlog::info("kafka spout {}: {} starts at {} ({}; log [{}, {}))", config_.id,
                   Describe(r.partition), r.decision.start, r.decision.reason, r.low, r.high);
      UpdateFetching(*p);
      return;
    }
    case MetadataResult::Kind::kWatermarks: {
      Partition* p = Find(r.partition);
      if (p == nullptr || p->phase != Phase::kActive || !p->repositioning || r.tag != p->epoch ||
          !p->state.has_value()) {
        return;
      }
      if (!r.status.ok()) {
        metadata_->Watermarks(r.partition, p->epoch, r.requested, milliseconds(1000));
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
      p->lost->Add(rep.skipped);
      p->dropped->Add(rep.dropped_pending);
      p->totals.lost += rep.skipped;
      p->totals.dropped_pending += rep.dropped_pending;
      p->repositioning = false;
      p->end_offset = std::max<int64_t>(std::min(p->end_offset, r.high), rep.position);
      spdlog::warn(
          "kafka spout {}: offset {} of {} is out of range (log holds [{}, {})); policy {}: "
          "continuing at {}; {} offsets lost [{}, {}), {} in-flight offsets dropped",
          config_.id, r.requested, Describe(r.partition), r.low, r.high,
          OutOfRangePolicyName(config_.out_of_range), rep.position, rep.skipped, r.requested,
          r.requested + rep.skipped, rep.dropped_pending);
      UpdateFetching(*p);
      return;
    }
  }
}

void KafkaSpout::ApplyAssignment(const std::vector<TopicPartition>& all) {
  std::vector<TopicPartition> mine = PartitionsForTask(all, task_index_, task_count_);
  std::sort(mine.begin(), mine.end());
  if (mine == assignment_ && !assignment_.empty()) return;
  std::vector<OffsetCommit> final_commits;
  for (const TopicPartition& tp : assignment_) {
    if (std::binary_search(mine.begin(), mine.end(), tp)) continue;
    Partition& p = SlotFor(tp);
    if (std::optional<OffsetCommit> c = MakeCommit(p)) final_commits.push_back(*c);
    DropOwnership(p, "reassigned to another task");
    p.assigned = false;
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
  store_->SetAssignment(assignment_);
}

void KafkaSpout::DropOwnership(Partition& p, const std::string& why) {
  if (p.fetching && reader_) (void)reader_->Stop(p.tp);
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
  p.blocked_offset = -1;
  p.phase = Phase::kUnowned;
  p.epoch++;  // late acks and fails of the old epoch find nothing
  p.paused_gauge->Set(0);
  p.pending->Set(0);
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
  if (p.phase != Phase::kActive || !p.state.has_value() || p.repositioning || !reader_) return;
  const bool at_end =
      config_.stop_at_end && p.end_offset >= 0 && p.state->fetched_to() >= p.end_offset;
  const bool over = p.state->OverUncommittedLimit();
  const bool want = !at_end && !over;
  if (want && !p.fetching) {
    absl::Status s = reader_->Start(p.tp, p.state->fetched_to());
    if (!s.ok()) {
      spdlog::warn("kafka spout {}: cannot fetch {}: {}", config_.id, Describe(p.tp), s.ToString());
      return;
    }
    p.fetching = true;
    if (p.paused) {
      spdlog::info("kafka spout {}: {} resumes at {} (commits caught up to {})", config_.id,
                   Describe(p.tp), p.state->fetched_to(), p.state->committed());
      p.paused = false;
      p.paused_gauge->Set(0);
    }
  } else if (!want && p.fetching) {
    (void)reader_->Stop(p.tp);
    p.fetching = false;
    if (over && !p.paused) {
      p.paused = true;
      p.paused_gauge->Set(1);
      spdlog::warn(
          "kafka spout {}: pausing {}: {} offsets uncommitted (limit {}); resumes when "
          "commits succeed",
          config_.id, Describe(p.tp), p.state->Uncommitted(), *config_.max_uncommitted_offsets);
    }
  }
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
  std::vector<kafka::PartitionEvent> events = reader_->Poll(kPollBatch, wait, [&](const kafka::KafkaRecord& rec) {
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
    st.OnFetched(rec.offset);
    if (st.OverUncommittedLimit()) any_over = true;
  });
  for (const kafka::PartitionEvent& e : events) {
    Partition* p = Find(e.partition);
    if (p == nullptr || p->phase != Phase::kActive || !p->state.has_value()) continue;
    switch (e.kind) {
      case kafka::PartitionEvent::Kind::kOutOfRange:
        if (!p->fetching || p->repositioning) break;
        (void)reader_->Stop(p->tp);
        p->fetching = false;
        p->repositioning = true;
        p->out_of_range->Add(1);
        metadata_->Watermarks(p->tp, p->epoch, p->state->fetched_to());
        break;
      case kafka::PartitionEvent::Kind::kEndOfPartition:
        p->log_end = std::max(p->log_end, e.offset);
        break;
      case kafka::PartitionEvent::Kind::kError:
        if (now - commit_error_logged_ >= std::chrono::seconds(10)) {
          spdlog::warn("kafka spout {}: fetch error on {}: {}", config_.id, Describe(p->tp),
                       e.message);
        }
        break;
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
      values.push_back(r.has_value ? api::Value(payload(r.value)) : api::Value());
      break;
  }
  if (config_.guarantee == ProcessingGuarantee::kAtLeastOnce) {
    collector_->Emit(stream_, std::move(values), EncodeId(p, r.offset));
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
  int slot;
  uint32_t epoch;
  int64_t offset;
  if (!DecodeId(message_id, &slot, &epoch, &offset)) return;
  Partition& p = *partitions_[slot];
  if (p.epoch != epoch || !p.state.has_value()) return;  // from an older ownership
  if (p.state->OnAck(offset)) p.window.Release(offset);
}

void KafkaSpout::Fail(const api::MessageId& message_id) {
  int slot;
  uint32_t epoch;
  int64_t offset;
  if (!DecodeId(message_id, &slot, &epoch, &offset)) return;
  Partition& p = *partitions_[slot];
  if (p.epoch != epoch || !p.state.has_value() || p.phase != Phase::kActive) return;
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
  if (p.state->OnDeadLettered(ref.offset)) {
    p.window.Release(ref.offset);
    p.dead_lettered->Add(1);
    p.totals.dead_lettered++;
    spdlog::warn("kafka spout {}: offset {} of {} sent to dead-letter topic {} after {} failures",
                 config_.id, ref.offset, Describe(p.tp), config_.dead_letter_topic,
                 p.state->RetryFailures(ref.offset));
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
  if (failure_reporter_.Due(now)) ReportRepeatedFailures(now);
  if (now >= next_commit_) {
    CommitNow(false);
    next_commit_ = now + milliseconds(config_.state_update_interval_ms);
  }
  if (now >= next_refresh_) {
    metadata_->Discover();
    next_refresh_ = now + std::chrono::seconds(*config_.partition_refresh_secs);
  }
  for (auto& pp : partitions_) {
    Partition& p = *pp;
    if (!p.assigned || p.phase != Phase::kActive || !p.state.has_value()) continue;
    const KafkaPartitionState& st = *p.state;
    if (reader_) {
      if (absl::StatusOr<std::pair<int64_t, int64_t>> marks = reader_->CachedWatermarks(p.tp);
          marks.ok()) {
        p.log_end = std::max(p.log_end, marks->second);
      }
    }
    p.committed->Set(st.committed());
    p.emitted->Set(st.emitted_to() - 1);
    p.pending->Set(st.pending().count());
    if (p.log_end >= 0) p.lag->Set(std::max<int64_t>(0, p.log_end - st.committed()));
    std::optional<int64_t> lowest = st.pending().Lowest();
    if (!lowest.has_value()) {
      p.blocked_offset = -1;
      p.blocked_seconds->Set(0);
      p.blocked_offset_gauge->Set(-1);
    } else {
      if (*lowest != p.blocked_offset) {
        p.blocked_offset = *lowest;
        p.blocked_since = now;
      }
      const auto blocked = std::chrono::duration_cast<std::chrono::seconds>(now - p.blocked_since);
      p.blocked_seconds->Set(blocked.count());
      p.blocked_offset_gauge->Set(*lowest);
      if (blocked >= kBlockedWarnAfter && now - p.blocked_logged >= kBlockedWarnEvery) {
        p.blocked_logged = now;
        spdlog::warn(
            "kafka spout {}: commit of {} blocked by offset {} for {} s ({} failures; {} "
            "pending)",
            config_.id, Describe(p.tp), *lowest, blocked.count(), st.RetryFailures(*lowest),
            st.pending().count());
      }
    }
    if (!p.fetching) UpdateFetching(p);
  }
  if (config_.guarantee == ProcessingGuarantee::kAtMostOnce) RequestAtMostOnceCommits(now);
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
    store_->Close(hooks_.close_timeout);
    metadata_->Stop();
  }
  dead_letter_.reset();  // waits (bounded) for outstanding dead letters
  reader_.reset();
}

bool KafkaSpout::IsExhausted() const {
  if (!config_.stop_at_end || !discovered_ || !opened_) return false;
  for (int slot : assigned_slots_) {
    const Partition& p = *partitions_[slot];
    if (p.phase != Phase::kActive || !p.state.has_value() || p.end_offset < 0) return false;
    const KafkaPartitionState& st = *p.state;
    if (st.emitted_to() < p.end_offset || p.window.HasWaiting() || !st.pending().empty()) {
      return false;
    }
    if (st.CommitCandidate().has_value()) return false;
  }
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
  for (std::string_view name : {kTempestKafkaSpoutClass, kStormKafkaSpoutClass}) {
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
