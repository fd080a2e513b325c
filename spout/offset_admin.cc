#include "spout/offset_admin.h"

#include <algorithm>
#include <charconv>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/coord/zk_paths.h"
#include "common/kafka/kafka_reader.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::spout {
namespace {

// A reader for `tempest offsets`' lookups.
absl::StatusOr<std::unique_ptr<kafka::KafkaReader>> OffsetsToolReader(
    const std::string& bootstrap_servers) {
  kafka::KafkaReaderOptions options;
  options.bootstrap_servers = bootstrap_servers;
  options.client_id = "tempest-offsets";
  return kafka::KafkaReader::Create(options);
}

std::optional<int> PartitionNumber(const std::string& name) {
  constexpr std::string_view kPrefix = "partition_";
  if (name.rfind(kPrefix, 0) != 0) return std::nullopt;
  int n = 0;
  const char* begin = name.data() + kPrefix.size();
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || ptr != end || n < 0) return std::nullopt;
  return n;
}

std::string Root(const std::string& zk_root) {
  std::string root = zk_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root == "/" ? "" : root;
}

// Who holds the ownership node at `path`, if anyone.
void ReadOwner(coord::ZkSession& session, const std::string& path, StoredPartitionOffset& out) {
  auto node = session.Get(path);
  if (!node.ok()) return;
  out.owner_session = node->stat.ephemeral_owner;
  tempest::v1::OwnerRecord record;
  if (record.ParseFromString(node->data) && !record.owner_id().empty()) {
    out.owner = absl::StrCat(record.owner_id(), "@", record.host(), " pid ", record.pid());
  } else {
    out.owner = node->data.empty() ? "(unnamed)" : node->data.substr(0, 120);
  }
  if (out.owner_session != 0) {
    absl::StrAppend(&out.owner, " session 0x", absl::Hex(out.owner_session));
  }
}

absl::Status ReadPartitionNode(coord::ZkSession& session, const std::string& path,
                               const std::string& topic_level, int partition,
                               StoredPartitionOffset& out) {
  auto node = session.Get(path);
  if (!node.ok()) return node.status();
  out.path = path;
  out.partition = partition;
  out.topic = topic_level;
  out.version = node->stat.version;
  auto state = DecodeStormKafkaOffset(node->data);
  if (state.ok()) {
    out.state = *state;
    if (!state->topic.empty()) out.topic = state->topic;
  } else {
    out.parse_error = std::string(state.status().message());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<StoredPartitionOffset>> ListStoredOffsets(coord::ZkSession& session,
                                                                     const std::string& zk_root,
                                                                     const std::string& spout_id) {
  const std::string base = absl::StrCat(Root(zk_root), "/", spout_id);
  auto children = session.Children(base);
  if (!children.ok()) return children.status();
  std::vector<StoredPartitionOffset> out;
  for (const auto& child : *children) {
    if (child.rfind('@', 0) == 0) continue;  // @owners, @journal: never a Kafka topic
    if (auto p = PartitionNumber(child)) {
      StoredPartitionOffset entry;
      if (auto s = ReadPartitionNode(session, base + "/" + child, "", *p, entry); !s.ok()) {
        if (s.code() == absl::StatusCode::kNotFound) continue;  // deleted meanwhile
        return s;
      }
      ReadOwner(session, OwnerNodePath(zk_root, spout_id, entry.topic, *p, false), entry);
      out.push_back(std::move(entry));
      continue;
    }
    // A {topic}/ level of a multi-topic spout.
    auto grandchildren = session.Children(base + "/" + child);
    if (!grandchildren.ok()) continue;
    for (const auto& g : *grandchildren) {
      auto p = PartitionNumber(g);
      if (!p) continue;
      StoredPartitionOffset entry;
      if (auto s = ReadPartitionNode(session, base + "/" + child + "/" + g, child, *p, entry);
          !s.ok()) {
        if (s.code() == absl::StatusCode::kNotFound) continue;
        return s;
      }
      ReadOwner(session, OwnerNodePath(zk_root, spout_id, child, *p, true), entry);
      out.push_back(std::move(entry));
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
  });
  return out;
}

absl::Status AddKafkaLag(const std::string& bootstrap_servers,
                         std::vector<StoredPartitionOffset>& offsets,
                         std::chrono::milliseconds timeout) {
  auto reader = OffsetsToolReader(bootstrap_servers);
  if (!reader.ok()) return reader.status();
  for (auto& entry : offsets) {
    if (entry.topic.empty()) continue;
    auto marks = (*reader)->Watermarks({entry.topic, entry.partition}, timeout);
    if (!marks.ok()) continue;  // shown as unknown
    entry.log_end_offset = marks->second;
    if (entry.state) entry.lag = std::max<int64_t>(0, marks->second - entry.state->offset);
  }
  return absl::OkStatus();
}

absl::StatusOr<StoredPartitionOffset> SetStoredOffset(coord::ZkSession& session,
                                                      const SetOffsetRequest& request) {
  if (request.offset < 0) return absl::InvalidArgumentError("offset must be >= 0");
  bool topic_level = request.topic_level.value_or(false);
  if (!request.topic_level) {
    // Prefer whichever layout already holds this partition.
    auto flat = session.Exists(
        OffsetNodePath(request.zk_root, request.spout_id, request.topic, request.partition, false));
    auto nested = session.Exists(
        OffsetNodePath(request.zk_root, request.spout_id, request.topic, request.partition, true));
    if (!flat.ok()) return flat.status();
    if (!nested.ok()) return nested.status();
    topic_level = !flat->has_value() && nested->has_value();
  }
  const std::string path = OffsetNodePath(request.zk_root, request.spout_id, request.topic,
                                          request.partition, topic_level);
  const std::string owner_path = OwnerNodePath(request.zk_root, request.spout_id, request.topic,
                                               request.partition, topic_level);
  StoredPartitionOffset current;
  current.topic = request.topic;
  current.partition = request.partition;
  ReadOwner(session, owner_path, current);
  if (current.owner_session != 0 && !request.force) {
    return absl::FailedPreconditionError(absl::StrCat(
        "partition ", request.topic, "/", request.partition, " is owned by a running spout (",
        current.owner, "); stop or deactivate the topology first, or pass --force"));
  }

  StormKafkaOffset state;
  state.topology_id = "tempest-offsets-tool";
  int version = -1;
  auto existing = session.Get(path);
  if (existing.ok()) {
    version = existing->stat.version;
    if (auto parsed = DecodeStormKafkaOffset(existing->data); parsed.ok()) state = *parsed;
  } else if (existing.status().code() != absl::StatusCode::kNotFound) {
    return existing.status();
  }
  state.offset = request.offset;
  state.partition = request.partition;
  state.topic = request.topic;
  const std::string json = EncodeStormKafkaOffset(state);
  if (version >= 0) {
    auto set = session.Set(path, json, version);
    if (!set.ok()) {
      if (set.status().code() == absl::StatusCode::kFailedPrecondition ||
          set.status().code() == absl::StatusCode::kAborted) {
        return absl::AbortedError(
            absl::StrCat(path, " changed while writing (a spout committed?); try again"));
      }
      return set.status();
    }
  } else {
    coord::ZkCreateOptions options;
    options.create_parents = true;
    auto created = session.Create(path, json, options);
    if (!created.ok()) return created.status();
  }
  StoredPartitionOffset result = current;
  if (auto s = ReadPartitionNode(session, path, request.topic, request.partition, result);
      !s.ok()) {
    return s;
  }
  return result;
}

absl::StatusOr<std::pair<int64_t, int64_t>> KafkaWatermarks(const std::string& bootstrap_servers,
                                                            const std::string& topic, int partition,
                                                            std::chrono::milliseconds timeout) {
  auto reader = OffsetsToolReader(bootstrap_servers);
  if (!reader.ok()) return reader.status();
  return (*reader)->Watermarks({topic, partition}, timeout);
}

}  // namespace tempest::spout
