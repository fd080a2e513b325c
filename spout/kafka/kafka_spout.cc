#include "spout/kafka/kafka_spout.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/status_macros.h"
#include "spdlog/spdlog.h"
#include "spout/kafka/kafka_message_id.h"
#include "spout/kafka/offsets/zk_offset_store.h"

namespace tempest::spout {
namespace {

using Clock = core::Clock;
using std::chrono::milliseconds;

constexpr auto kHousekeepingEvery = milliseconds(100);

// The ZooKeeper client settings of the offsets: timeouts from the topology
// config; storm.zookeeper.auth.* when the config names them (tests, `tempest
// local`), else the identity of the worker this task runs in: a worker
// never hands components credentials through their config.
absl::StatusOr<coord::ZkClientConfig> OffsetsZkConfig(const api::Config& topo) {
  coord::ZkClientConfig zk_config = coord::ZkClientConfig::FromLookup(
      [&topo](auto key) { return topo.GetOptionalInt(std::string_view(key.data(), key.size())); });
  ASSIGN_OR_RETURN(coord::ZkAuthConfig zk_auth, coord::ZkAuthConfig::FromConfig(topo));
  if (!zk_auth.enabled()) {
    coord::ZkAuthConfig worker_auth = coord::ProcessTopologyZkAuth();
    if (worker_auth.enabled()) zk_auth = std::move(worker_auth);
  }
  zk_config.auth = std::move(zk_auth);
  return zk_config;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KafkaSpout>> KafkaSpout::Create(const api::ComponentArgs& args) {
  return Create(args, Hooks());
}

absl::StatusOr<std::unique_ptr<KafkaSpout>> KafkaSpout::Create(const api::ComponentArgs& args,
                                                               Hooks hooks) {
  ASSIGN_OR_RETURN(KafkaSpoutConfig config, ParseKafkaSpoutArgs(args));
  return std::make_unique<KafkaSpout>(std::move(config), std::move(hooks));
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
  BindTask(context, collector);
  const api::Config& topo = context.config();
  ASSIGN_OR_RETURN(const std::string connect, ResolveKafkaSpoutConfig(config_, topo));
  ASSIGN_OR_RETURN(coord::ZkClientConfig zk_config, OffsetsZkConfig(topo));
  const KafkaSpoutSite site = MakeSite(context, connect, std::move(zk_config));
  RETURN_IF_ERROR(OpenStore(site));
  const KafkaSpoutBackends& backends = hooks_.backends;
  source_ =
      backends.partition_source ? backends.partition_source(site) : MakeKafkaPartitionSource(site);
  if (!config_.bootstrap_servers.empty()) RETURN_IF_ERROR(StartReader(config_.bootstrap_servers));
  source_->Discover();
  const Clock::TimePoint now = clock_->Now();
  next_commit_ = now + milliseconds(config_.state_update_interval_ms);
  next_refresh_ = now + std::chrono::seconds(*config_.partition_refresh_secs);
  opened_ = true;
  LogOpened(context, connect);
  return absl::OkStatus();
}

void KafkaSpout::BindTask(const api::TopologyContext& context,
                          api::SpoutOutputCollector& collector) {
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
}

KafkaSpoutSite KafkaSpout::MakeSite(const api::TopologyContext& context, const std::string& connect,
                                    coord::ZkClientConfig zk_config) const {
  const api::Config& topo = context.config();
  KafkaSpoutSite site;
  site.config = &config_;
  site.offsets_connect = connect;
  site.zk_config = std::move(zk_config);
  site.topology_id = topology_id_;
  site.task_id = context.ThisTaskId().value();
  site.owner_description = absl::StrCat(topology_id_, ":", context.ThisComponentId().value(), ":",
                                        context.ThisTaskId().value(), "@",
                                        // The address other hosts know this one by, where set.
                                        topo.GetString(api::kStormLocalHostname, LocalHostName()));
  site.metrics = metrics_;
  site.labels = labels_;
  return site;
}

absl::Status KafkaSpout::OpenStore(const KafkaSpoutSite& site) {
  const KafkaSpoutBackends& backends = hooks_.backends;
  if (backends.offset_store) {
    ASSIGN_OR_RETURN(store_, backends.offset_store(site));
  } else if (config_.offsets_in_kafka()) {
    ASSIGN_OR_RETURN(store_, MakeKafkaGroupOffsetStore(site));
  } else {
    ASSIGN_OR_RETURN(std::unique_ptr<ZkOffsetStore> zk, MakeZkOffsetStore(site));
    zk_store_ = zk.get();
    store_ = std::move(zk);
  }
  // Rewinds (tempest offsets set) work on ZooKeeper offsets only.
  if (config_.offsets_in_kafka()) return absl::OkStatus();
  return StartRewindWatcher(site.owner_description);
}

void KafkaSpout::LogOpened(const api::TopologyContext& context, const std::string& connect) const {
  if (config_.offsets_in_kafka()) {
    spdlog::info(
        "kafka spout {} task {}: topics {} guarantee {} offsets in Kafka consumer group "
        "'{}' ({})",
        config_.id, context.ThisTaskId().value(), absl::StrJoin(config_.topics, ","),
        ProcessingGuaranteeName(config_.guarantee), config_.group_id, config_.bootstrap_servers);
  } else {
    spdlog::info("kafka spout {} task {}: topics {} guarantee {} offsets at {}/{} (zk {})",
                 config_.id, context.ThisTaskId().value(), absl::StrJoin(config_.topics, ","),
                 ProcessingGuaranteeName(config_.guarantee), config_.zk_root, config_.id, connect);
  }
  if (config_.guarantee == ProcessingGuarantee::kAtLeastOnce) {
    if (std::optional<std::string> w = ImmediateRetryWarning(config_)) {
      spdlog::warn("kafka spout {} task {}: {}", config_.id, context.ThisTaskId().value(), *w);
    }
  }
}

absl::Status KafkaSpout::StartReader(const std::string& bootstrap) {
  RETURN_IF_ERROR(source_->ConnectReader(bootstrap));
  if (config_.dead_letter_topic.empty() || dead_letter_ != nullptr) return absl::OkStatus();
  auto on_outcome = [this](const DeadLetterProducer::Ref& ref, std::string_view error) {
    OnDeadLetterReport(ref, error);
  };
  const KafkaSpoutBackends& backends = hooks_.backends;
  ASSIGN_OR_RETURN(dead_letter_, backends.dead_letter
                                     ? backends.dead_letter(bootstrap, config_, on_outcome)
                                     : MakeDeadLetterProducer(bootstrap, config_, on_outcome));
  return absl::OkStatus();
}

KafkaSpout::Partition& KafkaSpout::SlotFor(const TopicPartition& tp) {
  auto it = slot_of_.find(tp);
  if (it != slot_of_.end()) return *partitions_[it->second];
  const int slot = static_cast<int>(partitions_.size());
  auto p =
      std::make_unique<Partition>(tp, slot, KafkaPartitionMetrics(*metrics_, labels_, tp), *clock_);
  slot_of_[tp] = p->slot();
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
  if (!decoded->IsOfEpoch(p.epoch())) return nullptr;  // from an older ownership
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

void KafkaSpout::Ack(const api::MessageId& message_id) {
  int64_t offset = 0;
  if (Partition* p = PartitionOfId(message_id, &offset); p != nullptr) p->Ack(offset);
}

void KafkaSpout::Fail(const api::MessageId& message_id) {
  int64_t offset = 0;
  Partition* p = PartitionOfId(message_id, &offset);
  if (p == nullptr || !p->active()) return;
  const Clock::TimePoint now = clock_->Now();
  const KafkaPartitionState::FailAction action = p->state()->OnFail(offset, now);
  if (action != KafkaPartitionState::FailAction::kIgnore) failure_reporter_.OnFailure(now);
  switch (action) {
    case KafkaPartitionState::FailAction::kIgnore:
      return;
    case KafkaPartitionState::FailAction::kRetry:
      if (config_.dead_letter_topic.empty() && config_.retry.retry_limit > 0 &&
          p->state()->RetryFailures(offset) == config_.retry.retry_limit) {
        ReportStall(*p, offset);
      }
      return;
    case KafkaPartitionState::FailAction::kDeadLetter:
      SendToDeadLetter(*p, offset);
      return;
  }
}

void KafkaSpout::ReportStall(const Partition& p, int64_t offset) {
  // Once per offset; the periodic report keeps it visible afterwards.
  const absl::Status stall = absl::FailedPreconditionError(absl::StrCat(
      "offset ", offset, " of ", Describe(p.tp()), " failed ", config_.retry.retry_limit,
      " times (retryLimit) and no deadLetterTopic is set: it is retried every ",
      config_.retry.retry_delay_max_ms, " ms and commits of ", Describe(p.tp()),
      " stay at or below it until it succeeds"));
  spdlog::warn("kafka spout {}: {}", config_.id, std::string(stall.message()));
  collector_->ReportError(stall);
}

void KafkaSpout::Activate() { active_ = true; }

void KafkaSpout::Deactivate() {
  active_ = false;
  if (!opened_ || closed_) return;
  if (config_.guarantee != ProcessingGuarantee::kAtLeastOnce) EmitBeforeDeactivating();
  // AT_MOST_ONCE has nothing emitted above its commits; committing what it
  // fetched would only add records it must then emit.
  if (config_.guarantee != ProcessingGuarantee::kAtMostOnce) CommitNow();
}

void KafkaSpout::Close() {
  if (closed_) return;
  closed_ = true;
  if (opened_) {
    // Unlike storm-kafka, a clean close commits what is complete. Under
    // AT_MOST_ONCE that is what it already committed: a commit now could only
    // cover records it fetched and will never emit.
    Drain(clock_->Now());
    if (config_.guarantee != ProcessingGuarantee::kAtMostOnce) CommitNow();
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
    if (group && p.phase() == Partition::Phase::kUnowned) continue;
    ++owned;
    if (!p.DoneAtEnd()) return false;
  }
  if (group && owned == 0) return static_cast<int>(assigned_slots_.size()) <= task_index_;
  return true;
}

std::map<TopicPartition, KafkaSpout::PartitionStats> KafkaSpout::Stats() const {
  std::map<TopicPartition, PartitionStats> out;
  for (const auto& p : partitions_) {
    if (p->assigned()) out[p->tp()] = p->Stats();
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
