#include "spout/kafka/kafka_spout_backends.h"

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "spout/kafka/kafka_partition_source.h"
#include "spout/kafka/offsets/kafka_group_offset_store.h"
#include "spout/kafka/offsets/zk_offset_store.h"

namespace tempest::spout {
namespace {

class ProducerDeadLetterSink : public DeadLetterSink {
 public:
  explicit ProducerDeadLetterSink(std::unique_ptr<DeadLetterProducer> producer)
      : producer_(std::move(producer)) {}
  bool Send(const TopicPartition& source, const RecordWindow::Record& record,
            const DeadLetterProducer::Ref& ref) override {
    return producer_->Send(source, record, ref);
  }
  void Poll() override { producer_->Poll(); }

 private:
  std::unique_ptr<DeadLetterProducer> producer_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ZkOffsetStore>> MakeZkOffsetStore(const KafkaSpoutSite& site) {
  ZkOffsetStore::Options so;
  so.connect_string = site.offsets_connect;
  so.zk_config = site.zk_config;
  so.zk_root = site.config->zk_root;
  so.spout_id = site.config->id;
  so.topic_level = site.config->topic_level();
  so.owner_description = site.owner_description;
  so.metrics = site.metrics;
  so.labels = site.labels;
  so.journal = site.config->journal_max_entries > 0;
  so.journal_max_entries = site.config->journal_max_entries;
  so.journal_retention = std::chrono::seconds(site.config->journal_retention_secs);
  so.topology_id = site.topology_id;
  so.guarantee = std::string(ProcessingGuaranteeName(site.config->guarantee));
  return ZkOffsetStore::Create(so);
}

absl::StatusOr<std::unique_ptr<OffsetStore>> MakeKafkaGroupOffsetStore(const KafkaSpoutSite& site) {
  KafkaGroupOffsetStore::Options so;
  so.member.bootstrap_servers = site.config->bootstrap_servers;
  so.member.group_id = site.config->group_id;
  so.member.topics = site.config->topics;
  so.member.client_id = absl::StrCat("tempest-", site.config->id, "-", site.task_id);
  so.member.properties = site.config->kafka_properties;
  so.topology_id = site.topology_id;
  so.task_id = site.task_id;
  ASSIGN_OR_RETURN(std::unique_ptr<KafkaGroupOffsetStore> store,
                   KafkaGroupOffsetStore::Create(std::move(so)));
  return std::unique_ptr<OffsetStore>(std::move(store));
}

std::unique_ptr<PartitionSource> MakeKafkaPartitionSource(const KafkaSpoutSite& site) {
  KafkaPartitionSource::Options options;
  options.config = *site.config;
  options.topology_id = site.topology_id;
  options.zk_config = site.zk_config;
  return std::make_unique<KafkaPartitionSource>(std::move(options));
}

absl::StatusOr<std::unique_ptr<DeadLetterSink>> MakeDeadLetterProducer(
    const std::string& bootstrap_servers, const KafkaSpoutConfig& config,
    DeadLetterProducer::OutcomeCallback on_outcome) {
  ASSIGN_OR_RETURN(std::unique_ptr<DeadLetterProducer> producer,
                   DeadLetterProducer::Create(bootstrap_servers, config.id,
                                              config.dead_letter_topic, std::move(on_outcome)));
  return std::make_unique<ProducerDeadLetterSink>(std::move(producer));
}

}  // namespace tempest::spout
