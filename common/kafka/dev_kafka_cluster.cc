#include "common/kafka/dev_kafka_cluster.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <charconv>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/core/status_macros.h"
#include "common/kafka/conf.h"

namespace tempest::kafka {
namespace {

// A mock API result as a status; `what` names the operation.
absl::Status MockResult(absl::string_view what, rd_kafka_resp_err_t rc) {
  if (rc == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, ": ", rd_kafka_err2str(rc)));
}

}  // namespace

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
  // The host handle only carries the mock; keep its own logging quiet.
  ASSIGN_OR_RETURN(ConfHandle conf, BuildConf({{"log_level", "3"}}));
  absl::StatusOr<ClientHandle> host = NewClient(ClientType::kProducer, std::move(conf));
  if (!host.ok()) {
    return absl::InternalError(
        absl::StrCat("cannot create librdkafka handle: ", host.status().message()));
  }
  cluster->host_ = *std::move(host);
  cluster->mock_.reset(rd_kafka_mock_cluster_new(cluster->host_.get(), brokers));
  if (cluster->mock_ == nullptr) {
    return absl::InternalError("cannot create the librdkafka mock cluster");
  }
  cluster->brokers_ = brokers;
  cluster->bootstrap_servers_ = rd_kafka_mock_cluster_bootstraps(cluster->mock_.get());
  for (const auto& topic : topics) {
    RETURN_IF_ERROR(cluster->CreateTopic(topic));
  }
  return cluster;
}

DevKafkaCluster::~DevKafkaCluster() = default;

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
  return MockResult(absl::StrCat("cannot create topic ", topic.name),
                    rd_kafka_mock_topic_create(mock_.get(), topic.name.c_str(), topic.partitions,
                                               replication));
}

absl::Status DevKafkaCluster::SetPartitionLeader(const std::string& topic, int partition,
                                                 int broker_id) {
  return MockResult("set leader", rd_kafka_mock_partition_set_leader(mock_.get(), topic.c_str(),
                                                                    partition, broker_id));
}

absl::Status DevKafkaCluster::SetBrokerDown(int broker_id) {
  return MockResult("broker down", rd_kafka_mock_broker_set_down(mock_.get(), broker_id));
}

absl::Status DevKafkaCluster::SetBrokerUp(int broker_id) {
  return MockResult("broker up", rd_kafka_mock_broker_set_up(mock_.get(), broker_id));
}

absl::Status DevKafkaCluster::SetBrokerRtt(int broker_id, int rtt_ms) {
  return MockResult("broker rtt", rd_kafka_mock_broker_set_rtt(mock_.get(), broker_id, rtt_ms));
}

void DevKafkaCluster::PushRequestErrors(int api_key, int error, int count) {
  std::vector<rd_kafka_resp_err_t> errors(static_cast<size_t>(count),
                                          static_cast<rd_kafka_resp_err_t>(error));
  rd_kafka_mock_push_request_errors_array(mock_.get(), static_cast<int16_t>(api_key),
                                          errors.size(), errors.data());
}

}  // namespace tempest::kafka
