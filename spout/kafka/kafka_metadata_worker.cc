#include "spout/kafka/kafka_metadata_worker.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/status_macros.h"
#include "nlohmann/json.hpp"

namespace tempest::spout {

StartDecision DecideStart(const std::optional<StormKafkaOffset>& stored,
                          const std::string& topology_id, bool ignore_zk_offsets,
                          int64_t max_offset_behind, int64_t current) {
  StartDecision d;
  if (!stored.has_value()) {
    d.start = d.committed = current;
    d.reason = "no stored offset: startOffsetTime";
    return d;
  }
  d.committed = stored->offset;
  if (ignore_zk_offsets && stored->topology_id != topology_id) {
    d.start = current;
    d.reason = absl::StrCat("ignoreZkOffsets and the stored offset belongs to topology '",
                            stored->topology_id, "': startOffsetTime");
    return d;
  }
  d.start = stored->offset;
  d.reason = "stored offset";
  if (current > stored->offset && current - stored->offset > max_offset_behind) {
    d.start = current;
    d.reason = absl::StrCat("stored offset ", stored->offset, " is more than maxOffsetBehind (",
                            max_offset_behind, ") behind ", current, ": startOffsetTime");
  }
  return d;
}

KafkaMetadataWorker::KafkaMetadataWorker(Options options)
    : options_(std::move(options)), bootstrap_(options_.config.bootstrap_servers) {}

KafkaMetadataWorker::~KafkaMetadataWorker() { Stop(); }

void KafkaMetadataWorker::Stop() {
  executor_.Stop();
  if (registry_) registry_->Close();
}

void KafkaMetadataWorker::Push(MetadataResult r) {
  absl::MutexLock lock(&mu_);
  results_.push_back(std::move(r));
  has_results_.store(true, std::memory_order_release);
}

std::vector<MetadataResult> KafkaMetadataWorker::Take() {
  absl::MutexLock lock(&mu_);
  std::vector<MetadataResult> out;
  out.swap(results_);
  has_results_.store(false, std::memory_order_relaxed);
  return out;
}

bool KafkaMetadataWorker::HasResults() const {
  return has_results_.load(std::memory_order_acquire);
}

absl::Status KafkaMetadataWorker::EnsureRegistrySession() {
  if (registry_) return absl::OkStatus();
  coord::ZkSession::Options zo;
  zo.connect_string = options_.config.broker_zk->connect;
  zo.create_chroot = false;
  zo.config = options_.zk_config;
  zo.operation_timeout = options_.timeout;
  ASSIGN_OR_RETURN(registry_, coord::ZkSession::Create(zo));
  return absl::OkStatus();
}

absl::StatusOr<std::string> KafkaMetadataWorker::RegistryBootstrap() {
  RETURN_IF_ERROR(EnsureRegistrySession());
  const std::string ids = options_.config.broker_zk->path + "/ids";
  ASSIGN_OR_RETURN(const std::vector<std::string> children, registry_->Children(ids));
  std::vector<std::string> hosts;
  for (const std::string& id : children) {
    absl::StatusOr<coord::ZkNode> node = registry_->Get(ids + "/" + id);
    if (!node.ok()) continue;  // a broker that just left (STORM-1682): skip it
    nlohmann::json doc = nlohmann::json::parse(node->data, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_object() || !doc.contains("host") || !doc["host"].is_string() ||
        !doc.contains("port") || !doc["port"].is_number_integer()) {
      continue;
    }
    hosts.push_back(absl::StrCat(doc["host"].get<std::string>(), ":", doc["port"].get<int>()));
  }
  if (hosts.empty()) {
    return absl::UnavailableError(absl::StrCat("no Kafka brokers registered under ", ids));
  }
  std::sort(hosts.begin(), hosts.end());
  return absl::StrJoin(hosts, ",");
}

absl::StatusOr<std::vector<TopicPartition>> KafkaMetadataWorker::RegistryPartitions() {
  std::vector<TopicPartition> out;
  for (const std::string& topic : options_.config.topics) {
    const std::string path =
        absl::StrCat(options_.config.broker_zk->path, "/topics/", topic, "/partitions");
    ASSIGN_OR_RETURN(const std::vector<std::string> children, registry_->Children(path));
    for (const std::string& c : children) {
      int p = 0;
      if (absl::SimpleAtoi(c, &p) && p >= 0) out.push_back({topic, p});
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status KafkaMetadataWorker::EnsureReader() {
  if (reader_) return absl::OkStatus();
  if (bootstrap_.empty()) {
    ASSIGN_OR_RETURN(bootstrap_, RegistryBootstrap());
  }
  kafka::KafkaReaderOptions ro;
  ro.bootstrap_servers = bootstrap_;
  ro.client_id = "tempest-kafka-spout-metadata";
  for (const auto& [k, v] : options_.config.kafka_properties) ro.properties[k] = v;
  ASSIGN_OR_RETURN(reader_, kafka::KafkaReader::Create(ro));
  return absl::OkStatus();
}

void KafkaMetadataWorker::Discover() {
  executor_.Post([this] {
    leaders_.clear();  // refreshed with the partition list
    MetadataResult r;
    r.kind = MetadataResult::Kind::kDiscovered;
    if (options_.config.broker_zk.has_value() && options_.config.bootstrap_servers.empty()) {
      // Legacy ZkHosts: brokers and partitions come from Kafka's registry.
      absl::StatusOr<std::string> b = RegistryBootstrap();
      if (!b.ok()) {
        r.status = b.status();
        Push(std::move(r));
        return;
      }
      if (*b != bootstrap_) {
        bootstrap_ = *b;
        reader_.reset();
      }
      r.bootstrap_servers = *b;
      absl::StatusOr<std::vector<TopicPartition>> parts = RegistryPartitions();
      if (!parts.ok()) {
        r.status = parts.status();
      } else {
        r.partitions = std::move(*parts);
      }
      Push(std::move(r));
      return;
    }
    if (absl::Status s = EnsureReader(); !s.ok()) {
      r.status = s;
      Push(std::move(r));
      return;
    }
    absl::StatusOr<std::vector<TopicPartition>> parts =
        reader_->Partitions(options_.config.topics, options_.timeout);
    if (!parts.ok()) {
      r.status = parts.status();
    } else {
      r.partitions = std::move(*parts);
    }
    Push(std::move(r));
  });
}

void KafkaMetadataWorker::Resolve(const TopicPartition& tp, uint64_t tag,
                                  std::optional<StormKafkaOffset> stored,
                                  std::chrono::milliseconds delay) {
  executor_.PostAfter(delay, [this, tp, tag, stored = std::move(stored)] {
    MetadataResult r;
    r.kind = MetadataResult::Kind::kResolved;
    r.partition = tp;
    r.tag = tag;
    if (absl::Status s = FillWatermarks(tp, r); !s.ok()) {
      r.status = s;
      Push(std::move(r));
      return;
    }
    // Earliest/latest come with the watermarks; only a timestamp needs
    // another round trip.
    const int64_t time = options_.config.start_offset_time;
    absl::StatusOr<int64_t> current = time == -2 ? absl::StatusOr<int64_t>(r.low)
                                      : time == -1
                                          ? absl::StatusOr<int64_t>(r.high)
                                          : reader_->OffsetForTime(tp, time, options_.timeout);
    if (!current.ok()) {
      r.status = current.status();
      Push(std::move(r));
      return;
    }
    r.decision = DecideStart(stored, options_.topology_id, options_.config.ignore_zk_offsets,
                             options_.config.max_offset_behind, *current);
    // The leader only feeds the informational "broker" field: one metadata
    // request per topic and refresh, not per partition.
    auto leader = leaders_.find(tp);
    if (leader == leaders_.end()) {
      for (const auto& [p, l] : reader_->Leaders(tp.topic, options_.timeout)) {
        leaders_[TopicPartition{tp.topic, p}] = l;
      }
      leader = leaders_.find(tp);
    }
    if (leader != leaders_.end()) r.leader = leader->second;
    Push(std::move(r));
  });
}

void KafkaMetadataWorker::Watermarks(const TopicPartition& tp, uint64_t tag, int64_t requested,
                                     std::chrono::milliseconds delay) {
  executor_.PostAfter(delay, [this, tp, tag, requested] {
    MetadataResult r;
    r.kind = MetadataResult::Kind::kWatermarks;
    r.partition = tp;
    r.tag = tag;
    r.requested = requested;
    r.status = FillWatermarks(tp, r);
    Push(std::move(r));
  });
}

absl::Status KafkaMetadataWorker::FillWatermarks(const TopicPartition& tp, MetadataResult& r) {
  RETURN_IF_ERROR(EnsureReader());
  ASSIGN_OR_RETURN(const auto marks, reader_->Watermarks(tp, options_.timeout));
  r.low = marks.first;
  r.high = marks.second;
  return absl::OkStatus();
}

}  // namespace tempest::spout
