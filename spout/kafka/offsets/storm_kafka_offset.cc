#include "spout/kafka/offsets/storm_kafka_offset.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace tempest::spout {

std::string EncodeStormKafkaOffset(const StormKafkaOffset& s) {
  nlohmann::ordered_json doc;
  doc["topology"] = {{"id", s.topology_id}, {"name", s.topology_name}};
  doc["offset"] = s.offset;
  doc["partition"] = s.partition;
  doc["broker"] = {{"host", s.broker_host}, {"port", s.broker_port}};
  doc["topic"] = s.topic;
  return doc.dump();
}

absl::StatusOr<StormKafkaOffset> DecodeStormKafkaOffset(const std::string& json) {
  // No exceptions: parse with allow_exceptions=false and inspect types.
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError("offset node is not valid JSON");
  }
  if (!doc.is_object()) {
    return absl::InvalidArgumentError("offset node is not a JSON object");
  }
  StormKafkaOffset out;
  auto offset = doc.find("offset");
  if (offset == doc.end()) return absl::InvalidArgumentError("offset node has no \"offset\"");
  if (!offset->is_number_integer()) {
    return absl::InvalidArgumentError("\"offset\" is not an integer");
  }
  out.offset = offset->get<int64_t>();
  if (offset->is_number_unsigned() && offset->get<uint64_t>() > INT64_MAX) {
    return absl::InvalidArgumentError("\"offset\" is out of range");
  }
  if (out.offset < 0) return absl::InvalidArgumentError("\"offset\" is negative");

  auto topology = doc.find("topology");
  if (topology == doc.end() || !topology->is_object()) {
    return absl::InvalidArgumentError("offset node has no \"topology\" object");
  }
  auto id = topology->find("id");
  if (id == topology->end() || !id->is_string()) {
    return absl::InvalidArgumentError("\"topology.id\" is missing or not a string");
  }
  out.topology_id = id->get<std::string>();
  if (auto name = topology->find("name"); name != topology->end() && name->is_string()) {
    out.topology_name = name->get<std::string>();
  }
  if (auto p = doc.find("partition"); p != doc.end() && p->is_number_integer()) {
    out.partition = p->get<int32_t>();
  }
  if (auto t = doc.find("topic"); t != doc.end() && t->is_string()) {
    out.topic = t->get<std::string>();
  }
  if (auto b = doc.find("broker"); b != doc.end() && b->is_object()) {
    if (auto h = b->find("host"); h != b->end() && h->is_string()) {
      out.broker_host = h->get<std::string>();
    }
    if (auto port = b->find("port"); port != b->end() && port->is_number_integer()) {
      out.broker_port = port->get<int32_t>();
    }
  }
  return out;
}

namespace {
std::string Join(const std::string& zk_root, const std::string& spout_id, const char* middle,
                 const std::string& topic, int partition, bool topic_level) {
  std::string root = zk_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root == "/") root.clear();
  std::string path = absl::StrCat(root, "/", spout_id, middle);
  if (topic_level) absl::StrAppend(&path, "/", topic);
  absl::StrAppend(&path, "/partition_", partition);
  return path;
}
}  // namespace

std::string OffsetNodePath(const std::string& zk_root, const std::string& spout_id,
                           const std::string& topic, int partition, bool topic_level) {
  return Join(zk_root, spout_id, "", topic, partition, topic_level);
}

std::string OwnerNodePath(const std::string& zk_root, const std::string& spout_id,
                          const std::string& topic, int partition, bool topic_level) {
  return Join(zk_root, spout_id, "/@owners", topic, partition, topic_level);
}

}  // namespace tempest::spout
