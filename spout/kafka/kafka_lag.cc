#include "spout/kafka/kafka_lag.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/kafka/group_offsets_admin.h"
#include "common/kafka/kafka_reader.h"

namespace tempest::spout {
namespace {

bool IsKafkaSpoutClass(const std::string& name) {
  return name == kTempestKafkaSpoutClass || name == kStormKafkaSpoutClass ||
         name == kKafkaClientSpoutClass;
}

// A storm-kafka-client spout's committed offsets: one row per partition of
// its topics, stored = false where the group has no commit.
absl::StatusOr<std::vector<StoredPartitionOffset>> GroupOffsets(const KafkaSpoutConfig& config,
                                                                std::chrono::milliseconds timeout) {
  kafka::KafkaReaderOptions ro;
  ro.bootstrap_servers = config.bootstrap_servers;
  ro.client_id = "tempest-lag";
  ASSIGN_OR_RETURN(const std::unique_ptr<kafka::KafkaReader> reader,
                   kafka::KafkaReader::Create(ro));
  // Only topics the cluster lists are named, so none gets created here.
  ASSIGN_OR_RETURN(const std::vector<std::string> existing, reader->ListTopics(timeout));
  std::vector<std::string> topics;
  for (const std::string& t : config.topics) {
    if (std::binary_search(existing.begin(), existing.end(), t)) topics.push_back(t);
  }
  if (topics.empty()) return std::vector<StoredPartitionOffset>();
  ASSIGN_OR_RETURN(const std::vector<kafka::TopicPartition> partitions,
                   reader->Partitions(topics, timeout));
  kafka::GroupOffsetsAdminOptions ao;
  ao.bootstrap_servers = config.bootstrap_servers;
  ao.client_id = "tempest-lag";
  ao.timeout = timeout;
  ASSIGN_OR_RETURN(const std::unique_ptr<kafka::GroupOffsetsAdmin> admin,
                   kafka::GroupOffsetsAdmin::Create(ao));
  ASSIGN_OR_RETURN(const std::vector<kafka::CommittedGroupOffset> committed,
                   admin->ReadCommitted(config.group_id, partitions));
  std::vector<StoredPartitionOffset> rows;
  for (const kafka::CommittedGroupOffset& c : committed) {
    StoredPartitionOffset row;
    row.topic = c.partition.topic;
    row.partition = c.partition.partition;
    row.stored = c.offset >= 0;
    if (row.stored) {
      StormKafkaOffset state;
      state.offset = c.offset;
      state.topic = row.topic;
      state.partition = row.partition;
      row.state = state;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::vector<SpoutLagTarget> KafkaSpoutsOf(const core::TopologyDef& def) {
  std::vector<SpoutLagTarget> out;
  for (const core::ComponentDef& c : def.spouts) {
    if (!IsKafkaSpoutClass(c.args.class_name)) continue;
    SpoutLagTarget target;
    target.component = c.id.value();
    absl::StatusOr<KafkaSpoutConfig> config = ParseKafkaSpoutArgs(c.args);
    if (!config.ok()) {
      target.status = config.status();
      out.push_back(std::move(target));
      continue;
    }
    target.config = *std::move(config);
    absl::StatusOr<std::string> zk = ResolveKafkaSpoutConfig(target.config, def.config);
    if (zk.ok()) {
      target.zk_connect = *std::move(zk);
    } else {
      target.status = zk.status();
    }
    out.push_back(std::move(target));
  }
  return out;
}

SpoutLag MeasureSpoutLag(const SpoutLagTarget& target, coord::ZkSession* zk,
                         std::chrono::milliseconds timeout) {
  SpoutLag lag;
  lag.component = target.component;
  const KafkaSpoutConfig& c = target.config;
  lag.offsets_location = c.offsets_in_kafka()
                             ? absl::StrCat("kafka group ", c.group_id)
                             : absl::StrCat("zookeeper ", target.zk_connect, c.zk_root, "/", c.id);
  if (!target.status.ok()) {
    lag.status = target.status;
    return lag;
  }
  if (c.bootstrap_servers.empty()) {
    // Legacy ZkHosts: the brokers are found through Kafka's own ZooKeeper
    // registry, which only the running spout reads.
    lag.status = absl::UnimplementedError(
        "the spout finds its brokers through ZkHosts; the log end is only known with "
        "bootstrap servers (kafka.bootstrap.servers)");
    return lag;
  }
  if (c.offsets_in_kafka()) {
    absl::StatusOr<std::vector<StoredPartitionOffset>> rows = GroupOffsets(c, timeout);
    if (!rows.ok()) {
      lag.status = rows.status();
      return lag;
    }
    lag.partitions = *std::move(rows);
  } else if (zk == nullptr) {
    lag.status = absl::UnavailableError("no ZooKeeper session for the offsets");
    return lag;
  } else {
    absl::StatusOr<std::vector<StoredPartitionOffset>> rows =
        ListStoredOffsets(*zk, c.zk_root, c.id);
    // No {zkRoot}/{id} yet: nothing committed, every partition counts from
    // the start policy.
    if (!rows.ok() && !absl::IsNotFound(rows.status())) {
      lag.status = rows.status();
      return lag;
    }
    if (rows.ok()) lag.partitions = *std::move(rows);
  }
  lag.status = AddKafkaLag(c.bootstrap_servers, lag.partitions, timeout, c.topics, c.zk_root,
                           c.id, c.start_offset_time);
  lag.totals = SumLag(lag.partitions);
  return lag;
}

}  // namespace tempest::spout
