#ifndef TEMPEST_SPOUT_KAFKA_LAG_H_
#define TEMPEST_SPOUT_KAFKA_LAG_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/coord/zk_session.h"
#include "common/core/topology/topology_def.h"
#include "spout/kafka/kafka_spout_config.h"
#include "spout/kafka/offsets/offset_admin.h"

namespace tempest::spout {

// The lag contract every surface shows (REST /lag, the UI, nimbus /metrics,
// `tempest offsets show`): per partition, the log end asked of the
// partition's leader minus the offset the spout has stored (ZooKeeper in
// storm-kafka's layout, or the storm-kafka-client group's commit in Kafka);
// a partition without a stored offset counts from the spout's start policy.
// It does not depend on the spout running, so an inactive, finished or not
// yet scheduled topology has a lag too (AddKafkaLag does the counting).

// One KafkaSpout component of a topology, as its Flux definition configures it.
struct SpoutLagTarget {
  std::string component;
  absl::Status status;  // not OK: its definition does not parse (why)
  KafkaSpoutConfig config;
  std::string zk_connect;  // where its offsets live ("" for a Kafka group)
};

// Every KafkaSpout (any of the three classes) of `def`, in definition order.
std::vector<SpoutLagTarget> KafkaSpoutsOf(const core::TopologyDef& def);

struct SpoutLag {
  std::string component;
  std::string offsets_location;  // "zookeeper HOSTS/ROOT/ID" or "kafka group G"
  // Not OK: the lag could not be measured (a broker or ZooKeeper that does
  // not answer, a definition that does not parse); never a lag of 0.
  absl::Status status;
  std::vector<StoredPartitionOffset> partitions;  // sorted by (topic, partition)
  LagTotals totals;
};

// Measures one spout: its stored offsets (through `zk` for ZooKeeper
// offsets; a group's from Kafka) and every partition's log range. Each
// Kafka call is bounded by `timeout`.
SpoutLag MeasureSpoutLag(const SpoutLagTarget& target, coord::ZkSession* zk,
                         std::chrono::milliseconds timeout);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_LAG_H_
