#ifndef TEMPEST_COMMON_KAFKA_DEV_KAFKA_CLUSTER_H_
#define TEMPEST_COMMON_KAFKA_DEV_KAFKA_CLUSTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/handles.h"

namespace tempest::kafka {

struct DevKafkaTopic {
  std::string name;
  int partitions = 1;
};

// Parses "NAME:PARTITIONS" (or "NAME", one partition), as `tempest dev-kafka
// --topic` takes it.
absl::StatusOr<DevKafkaTopic> ParseDevKafkaTopic(const std::string& spec);

// A Kafka-protocol cluster for development and tests: librdkafka's mock
// cluster, serving the real wire protocol on 127.0.0.1 TCP ports. Any Kafka
// client (librdkafka, kcat, kafka-python) can produce to and consume from it.
//
// It keeps at most about 5 MiB or 100,000 messages per partition and drops the
// oldest beyond that, so it behaves like a broker with a small retention:
// spread data over partitions rather than piling it into one.
//
// Owns the mock cluster and the librdkafka handle hosting it; the mock runs on
// librdkafka's own threads. Methods are thread-safe (they only forward to the
// mock API).
class DevKafkaCluster {
 public:
  static absl::StatusOr<std::unique_ptr<DevKafkaCluster>> Create(
      int brokers, const std::vector<DevKafkaTopic>& topics);
  ~DevKafkaCluster();
  DevKafkaCluster(const DevKafkaCluster&) = delete;
  DevKafkaCluster& operator=(const DevKafkaCluster&) = delete;

  // "127.0.0.1:P1,127.0.0.1:P2,..."
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }
  int broker_count() const { return brokers_; }
  // Broker ids run 1..broker_count().
  std::vector<std::pair<std::string, int>> BrokerAddresses() const;

  absl::Status CreateTopic(const DevKafkaTopic& topic);
  // The leader of a partition, as the mock assigned it at creation.
  absl::Status SetPartitionLeader(const std::string& topic, int partition, int broker_id);

  // Fault injection.
  absl::Status SetBrokerDown(int broker_id);
  absl::Status SetBrokerUp(int broker_id);
  absl::Status SetBrokerRtt(int broker_id, int rtt_ms);
  // The next `count` requests of Kafka API `api_key` (e.g. 1 = Fetch, 0 =
  // Produce) fail with librdkafka error code `error` (e.g. 6 =
  // NOT_LEADER_FOR_PARTITION).
  void PushRequestErrors(int api_key, int error, int count);

 private:
  DevKafkaCluster() = default;

  ClientHandle host_;
  MockClusterHandle mock_;  // destroyed before host_, which runs it
  int brokers_ = 0;
  std::string bootstrap_servers_;
};

}  // namespace tempest::kafka

#endif  // TEMPEST_COMMON_KAFKA_DEV_KAFKA_CLUSTER_H_
