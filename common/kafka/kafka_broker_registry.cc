#include "common/kafka/kafka_broker_registry.h"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/kafka/conf.h"
#include "common/kafka/handles.h"

namespace tempest::kafka {
namespace {

RegistryTopic TopicOf(const rd_kafka_metadata_topic_t& mt) {
  RegistryTopic topic{mt.topic, {}};
  for (int p = 0; p < mt.partition_cnt; ++p) {
    RegistryPartition part{mt.partitions[p].id, mt.partitions[p].leader, {}};
    part.replicas.push_back(part.leader);
    for (int r = 0; r < mt.partitions[p].replica_cnt; ++r) {
      if (mt.partitions[p].replicas[r] != part.leader) {
        part.replicas.push_back(mt.partitions[p].replicas[r]);
      }
    }
    topic.partitions.push_back(part);
  }
  return topic;
}

}  // namespace

absl::StatusOr<BrokerLayout> ReadBrokerLayout(const std::string& bootstrap_servers,
                                              const std::vector<std::string>& topics) {
  ASSIGN_OR_RETURN(ConfHandle conf,
                   BuildConf({{"bootstrap.servers", bootstrap_servers}, {"log_level", "3"}}));
  absl::StatusOr<ClientHandle> client = NewClient(ClientType::kProducer, std::move(conf));
  if (!client.ok()) {
    return absl::InternalError(absl::StrCat("Kafka client: ", client.status().message()));
  }
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t rc = rd_kafka_metadata(client->get(), 1, nullptr, &raw, 10000);
  if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat("Kafka metadata: ", rd_kafka_err2str(rc)));
  }
  const MetadataHandle md(raw);
  BrokerLayout layout;
  for (int i = 0; i < md->broker_cnt; ++i) {
    layout.brokers.push_back({md->brokers[i].id, md->brokers[i].host, md->brokers[i].port});
  }
  std::map<std::string, RegistryTopic> by_name;
  for (int t = 0; t < md->topic_cnt; ++t) {
    RegistryTopic topic = TopicOf(md->topics[t]);
    by_name[topic.name] = std::move(topic);
  }
  if (topics.empty()) {
    // Every topic, the ones auto-created by producers too; internal topics
    // ("__consumer_offsets") are no legacy consumer's business.
    for (auto& [name, topic] : by_name) {
      if (name.rfind("__", 0) != 0) layout.topics.push_back(std::move(topic));
    }
    return layout;
  }
  for (const auto& name : topics) {
    auto it = by_name.find(name);
    if (it == by_name.end()) return absl::NotFoundError(absl::StrCat("no topic ", name));
    layout.topics.push_back(it->second);
  }
  return layout;
}

std::vector<RegistryNode> BrokerRegistryNodes(const std::string& root,
                                              const BrokerLayout& layout) {
  std::vector<RegistryNode> nodes;
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (const auto& b : layout.brokers) {
    nlohmann::json doc = {
        {"listener_security_protocol_map", {{"PLAINTEXT", "PLAINTEXT"}}},
        {"endpoints", {absl::StrCat("PLAINTEXT://", b.host, ":", b.port)}},
        {"jmx_port", -1},
        {"host", b.host},
        {"timestamp", std::to_string(now_ms)},
        {"port", b.port},
        {"version", 4},
    };
    nodes.push_back({absl::StrCat(root, "/ids/", b.id), doc.dump(), /*ephemeral=*/true});
  }
  for (const auto& t : layout.topics) {
    nlohmann::json assignment = nlohmann::json::object();
    for (const auto& p : t.partitions) assignment[std::to_string(p.partition)] = p.replicas;
    nlohmann::json topic_doc = {{"version", 1}, {"partitions", assignment}};
    const std::string topic_path = absl::StrCat(root, "/topics/", t.name);
    nodes.push_back({topic_path, topic_doc.dump(), /*ephemeral=*/false});
    for (const auto& p : t.partitions) {
      nlohmann::json state = {{"controller_epoch", 1},
                              {"leader", p.leader},
                              {"version", 1},
                              {"leader_epoch", 0},
                              {"isr", p.replicas}};
      nodes.push_back({absl::StrCat(topic_path, "/partitions/", p.partition, "/state"),
                       state.dump(), /*ephemeral=*/false});
    }
  }
  return nodes;
}

}  // namespace tempest::kafka
