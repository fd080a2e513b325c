#include "spout/kafka/offsets/offset_admin.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/coord/zk_paths.h"
#include "common/core/status_macros.h"
#include "common/kafka/kafka_reader.h"
#include "spout/kafka/offsets/offset_journal.h"
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

// A KafkaSpout's owner record: {"session":"<hex>","owner":"topology:component:task[@host]"}.
bool ParseSpoutOwner(const std::string& data, StoredPartitionOffset& out) {
  nlohmann::json j = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("owner") || !j["owner"].is_string()) return false;
  std::string owner = j["owner"].get<std::string>();
  if (const size_t at = owner.rfind('@'); at != std::string::npos) {
    out.owner_host = owner.substr(at + 1);
    owner.resize(at);
  }
  // topology ids contain no ':'; the component may not either.
  const size_t first = owner.find(':');
  if (first == std::string::npos) {
    out.owner_topology = owner;
  } else {
    out.owner_topology = owner.substr(0, first);
    out.owner_task = owner.substr(first + 1);
  }
  out.owner = absl::StrCat(out.owner_host.empty() ? "?" : out.owner_host, "/",
                           out.owner_topology, "/", out.owner_task.empty() ? "?" : out.owner_task);
  return true;
}

std::string Printable(const std::string& data) {
  std::string out;
  for (char c : data.substr(0, 60)) out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
  return out;
}

// NotFound naming the first of `topics` Kafka does not have. Asked with one
// request for all topics, so no name is ever sent to a broker that would
// create it.
absl::Status CheckTopicsExist(kafka::KafkaReader& reader, const std::vector<std::string>& topics,
                              std::chrono::milliseconds timeout) {
  if (topics.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const std::vector<std::string> existing, reader.ListTopics(timeout));
  for (const std::string& topic : topics) {
    if (!std::binary_search(existing.begin(), existing.end(), topic)) {
      return absl::NotFoundError(absl::StrCat("Kafka has no topic ", absl::CHexEscape(topic)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

// Who holds the ownership node at `path`, if anyone.
void ReadOwner(coord::ZkSession& session, const std::string& path, StoredPartitionOffset& out) {
  auto node = session.Get(path);
  if (!node.ok()) return;
  out.owner_session = node->stat.ephemeral_owner;
  tempest::v1::OwnerRecord record;
  if (ParseSpoutOwner(node->data, out)) return;
  if (record.ParseFromString(node->data) && !record.owner_id().empty()) {
    out.owner_host = record.host();
    out.owner = absl::StrCat(record.host(), "/", record.owner_id(), "/pid ", record.pid());
  } else {
    out.owner = node->data.empty() ? "(unnamed)" : Printable(node->data);
  }
}

namespace {

absl::Status ReadPartitionNode(coord::ZkSession& session, const std::string& path,
                               const std::string& topic_level, int partition,
                               StoredPartitionOffset& out) {
  ASSIGN_OR_RETURN(const coord::ZkNode node, session.Get(path));
  out.path = path;
  out.partition = partition;
  out.topic = topic_level;
  out.version = node.stat.version;
  auto state = DecodeStormKafkaOffset(node.data);
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
  ASSIGN_OR_RETURN(const std::vector<std::string> children, session.Children(base));
  std::vector<StoredPartitionOffset> out;
  for (const auto& child : children) {
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

int64_t LagFromStart(int64_t start, int64_t low, int64_t high) {
  return high - std::clamp(start, low, std::max(low, high));
}

std::string StartPolicyName(int64_t start_offset_time) {
  if (start_offset_time == kStartEarliest) return "earliest";
  if (start_offset_time == kStartLatest) return "latest";
  return absl::StrCat("time ", start_offset_time);
}

LagTotals SumLag(const std::vector<StoredPartitionOffset>& offsets) {
  LagTotals t;
  for (const StoredPartitionOffset& e : offsets) {
    if (e.lag && !e.out_of_range) {
      t.total += *e.lag;
    } else {
      ++t.unknown;
    }
  }
  return t;
}

namespace {

// The log range and lag of one row (see AddKafkaLag).
void FillLag(kafka::KafkaReader& reader, StoredPartitionOffset& entry, int64_t start_offset_time,
             std::chrono::milliseconds timeout) {
  auto marks = reader.Watermarks({entry.topic, entry.partition}, timeout);
  if (!marks.ok()) {
    entry.kafka_error = std::string(marks.status().message());
    return;
  }
  const auto [low, high] = *marks;
  entry.log_start_offset = low;
  entry.log_end_offset = high;
  if (!entry.stored) {
    int64_t start = low;
    if (start_offset_time == kStartLatest) {
      start = high;
    } else if (start_offset_time != kStartEarliest) {
      auto at = reader.OffsetForTime({entry.topic, entry.partition}, start_offset_time, timeout);
      if (!at.ok()) {
        entry.kafka_error = std::string(at.status().message());
        return;
      }
      start = *at;
    }
    entry.lag = LagFromStart(start, low, high);
    entry.lag_basis = StartPolicyName(start_offset_time);
    return;
  }
  if (!entry.state) return;  // unreadable node: no lag
  const int64_t committed = entry.state->offset;
  entry.out_of_range = committed > high || committed < low;
  if (committed <= high) {
    entry.lag = high - committed;
    entry.lag_basis = "committed";
  }
}

}  // namespace

absl::Status AddKafkaLag(const std::string& bootstrap_servers,
                         std::vector<StoredPartitionOffset>& offsets,
                         std::chrono::milliseconds timeout,
                         const std::vector<std::string>& extra_topics, const std::string& zk_root,
                         const std::string& spout_id, int64_t start_offset_time) {
  ASSIGN_OR_RETURN(const std::unique_ptr<kafka::KafkaReader> reader,
                   OffsetsToolReader(bootstrap_servers));
  std::vector<std::string> topics = extra_topics;
  for (const auto& e : offsets) {
    if (!e.topic.empty()) topics.push_back(e.topic);
  }
  std::sort(topics.begin(), topics.end());
  topics.erase(std::unique(topics.begin(), topics.end()), topics.end());
  RETURN_IF_ERROR(CheckTopicsExist(*reader, topics, timeout));
  if (!topics.empty()) {
    ASSIGN_OR_RETURN(const std::vector<kafka::TopicPartition> all,
                     reader->Partitions(topics, timeout));
    const bool topic_level = topics.size() > 1;
    for (const auto& tp : all) {
      const bool known = std::any_of(offsets.begin(), offsets.end(), [&](const auto& e) {
        return e.topic == tp.topic && e.partition == tp.partition;
      });
      if (known) continue;
      StoredPartitionOffset row;
      row.topic = tp.topic;
      row.partition = tp.partition;
      row.stored = false;
      if (!spout_id.empty()) {
        // An owner may hold it before its first commit.
        row.path = OffsetNodePath(zk_root, spout_id, tp.topic, tp.partition, topic_level);
      }
      offsets.push_back(std::move(row));
    }
  }
  for (auto& entry : offsets) {
    if (!entry.topic.empty()) FillLag(*reader, entry, start_offset_time, timeout);
  }
  std::sort(offsets.begin(), offsets.end(), [](const auto& a, const auto& b) {
    return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
  });
  return absl::OkStatus();
}

namespace {

// Whether the partition's offset node is in the topic-level layout: as the
// request says, else whichever layout already holds this partition.
absl::StatusOr<bool> ChooseTopicLevel(coord::ZkSession& session, const SetOffsetRequest& request) {
  if (request.topic_level) return *request.topic_level;
  auto flat = session.Exists(
      OffsetNodePath(request.zk_root, request.spout_id, request.topic, request.partition, false));
  auto nested = session.Exists(
      OffsetNodePath(request.zk_root, request.spout_id, request.topic, request.partition, true));
  RETURN_IF_ERROR(flat.status());
  RETURN_IF_ERROR(nested.status());
  return !flat->has_value() && nested->has_value();
}

// The offset node as it is before the write.
struct CurrentOffset {
  StormKafkaOffset state;
  int version = -1;  // -1: no node yet
};

absl::StatusOr<CurrentOffset> ReadCurrentOffset(coord::ZkSession& session, const std::string& path,
                                                const SetOffsetRequest& request) {
  CurrentOffset current;
  current.state.topology_id = "tempest-offsets-tool";
  auto existing = session.Get(path);
  if (existing.ok()) {
    current.version = existing->stat.version;
    if (auto parsed = DecodeStormKafkaOffset(existing->data); parsed.ok()) current.state = *parsed;
    // A one-topic spout's partition_N is one topic's: never relabelled.
    if (!current.state.topic.empty() && current.state.topic != request.topic) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " holds the offset of topic ", absl::CHexEscape(current.state.topic),
                       ", not ", absl::CHexEscape(request.topic), "; nothing changed"));
    }
  } else if (existing.status().code() != absl::StatusCode::kNotFound) {
    return existing.status();
  }
  return current;
}

JournalEntry ManualSetEntry(const SetOffsetRequest& request, int64_t from,
                            const std::string& topology_id, bool forced) {
  JournalEntry entry;
  entry.type = JournalEntryType::kManualSet;
  entry.time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  entry.from = from;
  entry.to = request.offset;
  entry.owner = request.actor.empty() ? "tempest offsets set" : request.actor;
  entry.topology = topology_id;
  entry.reason = forced ? "forced while an owner node existed" : "no live owner";
  return entry;
}

// The offset write and its journal entry in one multi; Aborted when a spout
// changed the node meanwhile.
absl::Status WriteOffsetAndEntry(coord::ZkSession& session, const std::string& path,
                                 const std::string& json, int version,
                                 const std::string& journal, const JournalEntry& entry) {
  std::vector<coord::ZkOp> ops;
  ops.push_back(version >= 0 ? coord::ZkOp::Set(path, json, version) : coord::ZkOp::Create(path, json));
  ops.push_back(JournalAppendOp(journal, entry));
  auto written = session.Multi(ops);
  if (absl::IsAborted(written.status()) || absl::IsAlreadyExists(written.status())) {
    return absl::AbortedError(
        absl::StrCat(path, " changed while writing (a spout committed?); try again"));
  }
  return written.status();
}

}  // namespace

absl::StatusOr<StoredPartitionOffset> SetStoredOffset(coord::ZkSession& session,
                                                      const SetOffsetRequest& request) {
  if (request.offset < 0) return absl::InvalidArgumentError("offset must be >= 0");
  ASSIGN_OR_RETURN(const bool topic_level, ChooseTopicLevel(session, request));
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
  ASSIGN_OR_RETURN(const CurrentOffset stored, ReadCurrentOffset(session, path, request));
  const int64_t from = stored.version >= 0 ? stored.state.offset : -1;
  StormKafkaOffset state = stored.state;
  state.offset = request.offset;
  state.partition = request.partition;
  state.topic = request.topic;
  if (stored.version < 0) RETURN_IF_ERROR(session.EnsurePath(path.substr(0, path.rfind('/'))));
  const std::string journal = JournalDirPath(request.zk_root, request.spout_id, request.topic,
                                             request.partition, topic_level);
  RETURN_IF_ERROR(EnsureJournalDir(session, journal));
  RETURN_IF_ERROR(WriteOffsetAndEntry(
      session, path, EncodeStormKafkaOffset(state), stored.version, journal,
      ManualSetEntry(request, from, state.topology_id, current.owner_session != 0)));
  StoredPartitionOffset result = current;
  RETURN_IF_ERROR(ReadPartitionNode(session, path, request.topic, request.partition, result));
  return result;
}

absl::StatusOr<std::pair<int64_t, int64_t>> KafkaWatermarks(const std::string& bootstrap_servers,
                                                            const std::string& topic, int partition,
                                                            std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(const std::unique_ptr<kafka::KafkaReader> reader,
                   OffsetsToolReader(bootstrap_servers));
  TEMPEST_RETURN_IF_ERROR(CheckTopicsExist(*reader, {topic}, timeout));
  return reader->Watermarks({topic, partition}, timeout);
}

struct OffsetsKafka::Impl {
  std::unique_ptr<kafka::KafkaReader> reader;
  std::set<std::string> known_topics;  // checked with CheckTopicsExist
};

absl::StatusOr<std::unique_ptr<OffsetsKafka>> OffsetsKafka::Connect(
    const std::string& bootstrap, std::chrono::milliseconds timeout) {
  std::unique_ptr<OffsetsKafka> out(new OffsetsKafka());
  out->impl_ = std::make_unique<Impl>();
  ASSIGN_OR_RETURN(out->impl_->reader, OffsetsToolReader(bootstrap));
  out->timeout_ = timeout;
  return out;
}

OffsetsKafka::~OffsetsKafka() = default;

absl::Status OffsetsKafka::CheckTopic(const std::string& topic) {
  if (impl_->known_topics.contains(topic)) return absl::OkStatus();
  TEMPEST_RETURN_IF_ERROR(CheckTopicsExist(*impl_->reader, {topic}, timeout_));
  impl_->known_topics.insert(topic);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int>> OffsetsKafka::Partitions(const std::string& topic) {
  TEMPEST_RETURN_IF_ERROR(CheckTopic(topic));
  ASSIGN_OR_RETURN(const std::vector<kafka::TopicPartition> all,
                   impl_->reader->Partitions({topic}, timeout_));
  std::vector<int> out;
  for (const auto& tp : all) out.push_back(tp.partition);
  if (out.empty()) return absl::NotFoundError(absl::StrCat("Kafka has no topic ", topic));
  return out;
}

absl::StatusOr<std::pair<int64_t, int64_t>> OffsetsKafka::Watermarks(const std::string& topic,
                                                                     int partition) {
  TEMPEST_RETURN_IF_ERROR(CheckTopic(topic));
  return impl_->reader->Watermarks({topic, partition}, timeout_);
}

absl::StatusOr<int64_t> OffsetsKafka::OffsetForTime(const std::string& topic, int partition,
                                                    int64_t time_ms) {
  TEMPEST_RETURN_IF_ERROR(CheckTopic(topic));
  return impl_->reader->OffsetForTime({topic, partition}, time_ms, timeout_);
}

}  // namespace tempest::spout
