#ifndef TEMPEST_COMMON_KAFKA_KAFKA_BROKER_REGISTRY_H_
#define TEMPEST_COMMON_KAFKA_KAFKA_BROKER_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tempest::kafka {

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

// What a Kafka-style broker registry describes: the brokers, and the chosen
// topics with their partitions' leaders and replicas.
struct BrokerLayout {
  std::vector<RegistryBroker> brokers;
  std::vector<RegistryTopic> topics;
};

// Asks a running cluster (a DevKafkaCluster-like endpoint, over the Kafka
// protocol) for its brokers and the layout of `topics`, in that order (empty:
// every topic it has, internal "__" topics excepted). NotFound names a topic
// the cluster does not have. Blocks the caller up to
// 10 s for the metadata.
absl::StatusOr<BrokerLayout> ReadBrokerLayout(const std::string& bootstrap_servers,
                                              const std::vector<std::string>& topics);

// One znode of a broker registry.
struct RegistryNode {
  std::string path;
  std::string data;
  bool ephemeral = false;
};

// The znodes of the registry Kafka brokers (before KRaft) maintain and legacy
// storm-kafka's ZkHosts reads, in creation order:
//   {root}/ids/{id}                              ephemeral, {"host","port",...}
//   {root}/topics/{topic}                        {"version":1,"partitions":{"0":[1,2]}}
//   {root}/topics/{topic}/partitions/{p}/state   {"leader":1,"isr":[1,2],...}
// `root` is usually "/brokers". Writing them is the caller's (ZooKeeper is
// not this module's); broker ids are meant to be ephemeral, so a dev
// cluster's registry disappears with the session that published it.
std::vector<RegistryNode> BrokerRegistryNodes(const std::string& root, const BrokerLayout& layout);

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_KAFKA_BROKER_REGISTRY_H_
