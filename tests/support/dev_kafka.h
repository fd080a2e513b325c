#ifndef TEMPEST_TESTS_SUPPORT_DEV_KAFKA_H_
#define TEMPEST_TESTS_SUPPORT_DEV_KAFKA_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/kafka/dev_kafka_cluster.h"

namespace tempest::testing {

// A Kafka-protocol cluster inside the test process (librdkafka's mock cluster
// over real TCP on 127.0.0.1), with a real librdkafka producer for seeding
// records and the mock's fault injection. Mind the mock's retention: about
// 5 MiB or 100k messages per partition; spread larger data sets over more
// partitions. Thread-safe like DevKafkaCluster; Produce may be called from
// any one thread at a time.
class DevKafka {
 public:
  struct Record {
    std::string key;  // empty: no key
    std::string value;
  };

  static absl::StatusOr<std::unique_ptr<DevKafka>> Start(
      int brokers, const std::vector<kafka::DevKafkaTopic>& topics);
  ~DevKafka();

  const std::string& bootstrap_servers() const { return cluster_->bootstrap_servers(); }
  kafka::DevKafkaCluster& cluster() { return *cluster_; }

  absl::Status CreateTopic(const std::string& name, int partitions) {
    return cluster_->CreateTopic({name, partitions});
  }
  // Produces every record to topic/partition (partition -1: by the default
  // partitioner) and waits until each is acknowledged by the cluster.
  absl::Status Produce(const std::string& topic, int partition,
                       const std::vector<Record>& records,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60));
  // (low, high) watermarks of a partition: high is the log-end offset.
  absl::StatusOr<std::pair<int64_t, int64_t>> Watermarks(
      const std::string& topic, int partition,
      std::chrono::milliseconds timeout = std::chrono::seconds(10));

  absl::Status SetBrokerDown(int broker_id) { return cluster_->SetBrokerDown(broker_id); }
  absl::Status SetBrokerUp(int broker_id) { return cluster_->SetBrokerUp(broker_id); }
  absl::Status SetRtt(int broker_id, int rtt_ms) { return cluster_->SetBrokerRtt(broker_id, rtt_ms); }
  void PushRequestErrors(int api_key, int error, int count) {
    cluster_->PushRequestErrors(api_key, error, count);
  }

 private:
  DevKafka() = default;
  std::unique_ptr<kafka::DevKafkaCluster> cluster_;
  struct Producer;
  std::unique_ptr<Producer> producer_;
};

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_DEV_KAFKA_H_
