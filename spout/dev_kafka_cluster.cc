#include "spout/dev_kafka_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tempest::spout {

absl::StatusOr<DevKafkaTopic> ParseDevKafkaTopic(const std::string& spec) {
  DevKafkaTopic topic;
  auto colon = spec.rfind(':');
  topic.name = spec.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string count = spec.substr(colon + 1);
    auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), topic.partitions);
    if (ec != std::errc() || ptr != count.data() + count.size() || topic.partitions < 1 ||
        topic.partitions > 10000) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad topic '", spec, "': expected NAME:PARTITIONS with 1..10000 partitions"));
    }
  }
  if (topic.name.empty() || topic.name.size() > 249 ||
      topic.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                   "0123456789._-") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad topic name '", topic.name, "': use 1..249 of [a-zA-Z0-9._-]"));
  }
  return topic;
}

absl::StatusOr<std::unique_ptr<DevKafkaCluster>> DevKafkaCluster::Create(
    int brokers, const std::vector<DevKafkaTopic>& topics) {
  if (brokers < 1 || brokers > 64) {
    return absl::InvalidArgumentError(absl::StrCat("brokers must be 1..64, got ", brokers));
  }
  auto cluster = std::unique_ptr<DevKafkaCluster>(new DevKafkaCluster());
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // The host handle only carries the mock; keep its own logging quiet.
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
  cluster->host_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (cluster->host_ == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create librdkafka handle: ", err));
  }
  cluster->mock_ = rd_kafka_mock_cluster_new(cluster->host_, brokers);
  if (cluster->mock_ == nullptr) {
    return absl::InternalError("cannot create the librdkafka mock cluster");
  }
  cluster->brokers_ = brokers;
  cluster->bootstrap_servers_ = rd_kafka_mock_cluster_bootstraps(cluster->mock_);
  for (const auto& topic : topics) {
    if (auto s = cluster->CreateTopic(topic); !s.ok()) return s;
  }
  return cluster;
}

DevKafkaCluster::~DevKafkaCluster() {
  if (mock_ != nullptr) rd_kafka_mock_cluster_destroy(mock_);
  if (host_ != nullptr) rd_kafka_destroy(host_);
}

std::vector<std::pair<std::string, int>> DevKafkaCluster::BrokerAddresses() const {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& entry : absl::StrSplit(bootstrap_servers_, ',')) {
    std::pair<std::string, std::string> host_port = absl::StrSplit(entry, ':');
    int port = 0;
    std::from_chars(host_port.second.data(), host_port.second.data() + host_port.second.size(),
                    port);
    out.emplace_back(host_port.first, port);
  }
  return out;
}

absl::Status DevKafkaCluster::CreateTopic(const DevKafkaTopic& topic) {
  // Replication is capped by the broker count so a 1-broker cluster works.
  const int replication = std::min(brokers_, 3);
  rd_kafka_resp_err_t rc =
      rd_kafka_mock_topic_create(mock_, topic.name.c_str(), topic.partitions, replication);
  if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::InternalError(
        absl::StrCat("cannot create topic ", topic.name, ": ", rd_kafka_err2str(rc)));
  }
  return absl::OkStatus();
}

absl::Status DevKafkaCluster::SetPartitionLeader(const std::string& topic, int partition,
                                                 int broker_id) {
  rd_kafka_resp_err_t rc =
      rd_kafka_mock_partition_set_leader(mock_, topic.c_str(), partition, broker_id);
  if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::InternalError(absl::StrCat("set leader: ", rd_kafka_err2str(rc)));
  }
  return absl::OkStatus();
}

absl::Status DevKafkaCluster::SetBrokerDown(int broker_id) {
  rd_kafka_resp_err_t rc = rd_kafka_mock_broker_set_down(mock_, broker_id);
  if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::InternalError(absl::StrCat("broker down: ", rd_kafka_err2str(rc)));
  }
  return absl::OkStatus();
}

absl::Status DevKafkaCluster::SetBrokerUp(int broker_id) {
  rd_kafka_resp_err_t rc = rd_kafka_mock_broker_set_up(mock_, broker_id);
  if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::InternalError(absl::StrCat("broker up: ", rd_kafka_err2str(rc)));
  }
  return absl::OkStatus();
}

absl::Status DevKafkaCluster::SetBrokerRtt(int broker_id, int rtt_ms) {
  rd_kafka_resp_err_t rc = rd_kafka_mock_broker_set_rtt(mock_, broker_id, rtt_ms);
  if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::InternalError(absl::StrCat("broker rtt: ", rd_kafka_err2str(rc)));
  }
  return absl::OkStatus();
}

void DevKafkaCluster::PushRequestErrors(int api_key, int error, int count) {
  std::vector<rd_kafka_resp_err_t> errors(static_cast<size_t>(count),
                                          static_cast<rd_kafka_resp_err_t>(error));
  rd_kafka_mock_push_request_errors_array(mock_, static_cast<int16_t>(api_key), errors.size(),
                                          errors.data());
}

}  // namespace tempest::spout
