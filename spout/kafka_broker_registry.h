#ifndef TEMPEST_SPOUT_KAFKA_BROKER_REGISTRY_H_
#define TEMPEST_SPOUT_KAFKA_BROKER_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/coord/zk_session.h"

namespace tempest::spout {

struct RegistryBroker {
  int id = 0;
  std::string host;
  int port = 0;
};

struct RegistryPartition {
  int partition = 0;
  int leader = 0;             // broker id
  std::vector<int> replicas;  // broker ids, leader first
};

struct RegistryTopic {
  std::string name;
  std::vector<RegistryPartition> partitions;
};

// Writes a Kafka-style broker registry into ZooKeeper, the layout Kafka
// brokers (before KRaft) maintain and legacy storm-kafka's ZkHosts reads:
//   {root}/ids/{id}                              ephemeral, {"host","port",...}
//   {root}/topics/{topic}                        {"version":1,"partitions":{"0":[1,2]}}
//   {root}/topics/{topic}/partitions/{p}/state   {"leader":1,"isr":[1,2],...}
// `root` is usually "/brokers". Broker ids are ephemeral on `session`, so the
// registry of a dev cluster disappears with the process that published it.
// Existing nodes are overwritten. Runs on the caller's thread (synchronous
// ZooKeeper calls with the session's deadlines).
absl::Status PublishBrokerRegistry(coord::ZkSession& session, const std::string& root,
                                   const std::vector<RegistryBroker>& brokers,
                                   const std::vector<RegistryTopic>& topics);

// The same registry for a running DevKafkaCluster-like endpoint: asks the
// cluster (over the Kafka protocol) for its brokers, topics and leaders.
absl::Status PublishRegistryOf(coord::ZkSession& session, const std::string& root,
                               const std::string& bootstrap_servers,
                               const std::vector<std::string>& topics);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_KAFKA_BROKER_REGISTRY_H_
