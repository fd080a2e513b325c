#include "spout/kafka_broker_registry.h"

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace tempest::spout {
namespace {

// Create-or-overwrite of one node, creating parents.
absl::Status Put(coord::ZkSession& session, const std::string& path, const std::string& data,
                 coord::ZkCreateMode mode) {
  coord::ZkCreateOptions options;
  options.mode = mode;
  options.create_parents = true;
  auto created = session.Create(path, data, options);
  if (created.ok()) return absl::OkStatus();
  if (created.status().code() != absl::StatusCode::kAlreadyExists) return created.status();
  auto set = session.Set(path, data);
  return set.ok() ? absl::OkStatus() : set.status();
}

}  // namespace

absl::Status PublishBrokerRegistry(coord::ZkSession& session, const std::string& root,
                                   const std::vector<RegistryBroker>& brokers,
                                   const std::vector<RegistryTopic>& topics) {
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (const auto& b : brokers) {
    nlohmann::json doc = {
        {"listener_security_protocol_map", {{"PLAINTEXT", "PLAINTEXT"}}},
        {"endpoints", {absl::StrCat("PLAINTEXT://", b.host, ":", b.port)}},
        {"jmx_port", -1},
        {"host", b.host},
        {"timestamp", std::to_string(now_ms)},
        {"port", b.port},
        {"version", 4},
    };
    if (auto s = Put(session, absl::StrCat(root, "/ids/", b.id), doc.dump(),
                     coord::ZkCreateMode::kEphemeral);
        !s.ok()) {
      return s;
    }
  }
  for (const auto& t : topics) {
    nlohmann::json assignment = nlohmann::json::object();
    for (const auto& p : t.partitions) assignment[std::to_string(p.partition)] = p.replicas;
    nlohmann::json topic_doc = {{"version", 1}, {"partitions", assignment}};
    const std::string topic_path = absl::StrCat(root, "/topics/", t.name);
    if (auto s = Put(session, topic_path, topic_doc.dump(), coord::ZkCreateMode::kPersistent);
        !s.ok()) {
      return s;
    }
    for (const auto& p : t.partitions) {
      nlohmann::json state = {{"controller_epoch", 1},
                              {"leader", p.leader},
                              {"version", 1},
                              {"leader_epoch", 0},
                              {"isr", p.replicas}};
      if (auto s = Put(session, absl::StrCat(topic_path, "/partitions/", p.partition, "/state"),
                       state.dump(), coord::ZkCreateMode::kPersistent);
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status PublishRegistryOf(coord::ZkSession& session, const std::string& root,
                               const std::string& bootstrap_servers,
                               const std::vector<std::string>& topics) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap_servers.c_str(), err, sizeof(err));
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (rk == nullptr) return absl::InternalError(absl::StrCat("Kafka client: ", err));
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t rc = rd_kafka_metadata(rk, 1, nullptr, &md, 10000);
  if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_destroy(rk);
    return absl::UnavailableError(absl::StrCat("Kafka metadata: ", rd_kafka_err2str(rc)));
  }
  std::vector<RegistryBroker> brokers;
  for (int i = 0; i < md->broker_cnt; ++i) {
    brokers.push_back({md->brokers[i].id, md->brokers[i].host, md->brokers[i].port});
  }
  std::map<std::string, RegistryTopic> by_name;
  for (int t = 0; t < md->topic_cnt; ++t) {
    const auto& mt = md->topics[t];
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
    by_name[topic.name] = std::move(topic);
  }
  rd_kafka_metadata_destroy(md);
  rd_kafka_destroy(rk);
  std::vector<RegistryTopic> selected;
  for (const auto& name : topics) {
    auto it = by_name.find(name);
    if (it == by_name.end()) return absl::NotFoundError(absl::StrCat("no topic ", name));
    selected.push_back(it->second);
  }
  return PublishBrokerRegistry(session, root, brokers, selected);
}

}  // namespace tempest::spout
