#include "common/kafka/kafka_reader.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/kafka/conf.h"

namespace tempest::kafka {
namespace {

absl::Status KafkaError(const std::string& what, rd_kafka_resp_err_t err) {
  std::string message = absl::StrCat(what, ": ", rd_kafka_err2str(err));
  switch (err) {
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
      return absl::DeadlineExceededError(message);
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return absl::NotFoundError(message);
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
      return absl::InvalidArgumentError(message);
    default:
      return absl::UnavailableError(message);
  }
}

// The record view of a fetched message (valid while the message lives).
KafkaRecord RecordOf(const rd_kafka_message_t& m) {
  KafkaRecord r;
  r.topic = rd_kafka_topic_name(m.rkt);
  r.partition = m.partition;
  r.offset = m.offset;
  r.has_key = m.key != nullptr;
  if (m.key != nullptr) r.key = {static_cast<const char*>(m.key), m.key_len};
  r.has_value = m.payload != nullptr;
  if (m.payload != nullptr) r.value = {static_cast<const char*>(m.payload), m.len};
  r.timestamp_ms = rd_kafka_message_timestamp(&m, nullptr);
  return r;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KafkaReader>> KafkaReader::Create(
    const KafkaReaderOptions& options) {
  auto reader = std::unique_ptr<KafkaReader>(new KafkaReader());
  Settings props = {
      {"bootstrap.servers", options.bootstrap_servers},
      {"client.id", options.client_id},
      // Report the log end so finite readers know when they are done.
      {"enable.partition.eof", "true"},
      // Keep the prefetch modest: the spout, not librdkafka, bounds memory.
      {"queued.max.messages.kbytes", "65536"},
      // Every partition feeds the one queue, and librdkafka compares that
      // queue's total with queued.min.messages (default 100000) for each
      // partition: once a few partitions' fetches are queued, all of them
      // stop fetching, and draining the queue does not restart them before
      // librdkafka's next periodic check (up to a second later), so the
      // reader sat idle most of the time. A higher count leaves the byte
      // bound above to limit the prefetch.
      {"queued.min.messages", "1000000"},
      {"fetch.wait.max.ms", "100"},
      // A misspelt topic is an error, not a new empty topic.
      {"allow.auto.create.topics", "false"},
      {"log_level", "3"},
  };
  for (const auto& [k, v] : options.properties) props[k] = v;
  ASSIGN_OR_RETURN(ConfHandle conf, BuildConf(props, "Kafka property $0: $1"));
  absl::StatusOr<ClientHandle> client = NewClient(ClientType::kConsumer, std::move(conf));
  if (!client.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create Kafka consumer: ", client.status().message()));
  }
  reader->rk_ = *std::move(client);
  reader->queue_.reset(rd_kafka_queue_new(reader->rk_.get()));
  return reader;
}

KafkaReader::~KafkaReader() {
  for (const auto& [tp, started] : started_) {
    if (started) rd_kafka_consume_stop(topics_.at(tp.topic).get(), tp.partition);
  }
  // The members then go in reverse order: topics, queue, client.
}

absl::StatusOr<rd_kafka_topic_t*> KafkaReader::OpenTopic(const std::string& topic) {
  auto it = topics_.find(topic);
  if (it != topics_.end()) return it->second.get();
  char err[512];
  rd_kafka_topic_conf_t* tconf = rd_kafka_topic_conf_new();
  // Never jump on our own: an out-of-range offset becomes an event and the
  // spout applies its explicit policy.
  rd_kafka_topic_conf_set(tconf, "auto.offset.reset", "error", err, sizeof(err));
  TopicHandle rkt(rd_kafka_topic_new(rk_.get(), topic.c_str(), tconf));
  if (rkt == nullptr) return KafkaError("topic " + topic, rd_kafka_last_error());
  return (topics_[topic] = std::move(rkt)).get();
}

absl::Status KafkaReader::Start(const TopicPartition& partition, int64_t offset) {
  if (offset < 0) return absl::InvalidArgumentError("start offset must be >= 0");
  if (IsStarted(partition)) {
    RETURN_IF_ERROR(Stop(partition));
  }
  ASSIGN_OR_RETURN(rd_kafka_topic_t* rkt, OpenTopic(partition.topic));
  if (rd_kafka_consume_start_queue(rkt, partition.partition, offset, queue_.get()) == -1) {
    return KafkaError(absl::StrCat("start ", partition.topic, "/", partition.partition),
                      rd_kafka_last_error());
  }
  started_[partition] = true;
  return absl::OkStatus();
}

absl::Status KafkaReader::Stop(const TopicPartition& partition) {
  auto it = started_.find(partition);
  if (it == started_.end() || !it->second) return absl::OkStatus();
  it->second = false;
  if (rd_kafka_consume_stop(topics_.at(partition.topic).get(), partition.partition) == -1) {
    return KafkaError(absl::StrCat("stop ", partition.topic, "/", partition.partition),
                      rd_kafka_last_error());
  }
  return absl::OkStatus();
}

bool KafkaReader::IsStarted(const TopicPartition& partition) const {
  auto it = started_.find(partition);
  return it != started_.end() && it->second;
}

std::vector<PartitionEvent> KafkaReader::Poll(size_t max_records, std::chrono::milliseconds timeout,
                                              const std::function<void(const KafkaRecord&)>& sink) {
  std::vector<PartitionEvent> events;
  constexpr size_t kBatch = 512;
  rd_kafka_message_t* batch[kBatch];
  size_t delivered = 0;
  int wait_ms = static_cast<int>(timeout.count());
  while (delivered < max_records) {
    const size_t want = std::min(kBatch, max_records - delivered);
    ssize_t n = rd_kafka_consume_batch_queue(queue_.get(), wait_ms, batch, want);
    wait_ms = 0;  // only the first call waits
    if (n <= 0) break;
    // Records arrive in runs per partition: look the partition up once per run.
    rd_kafka_topic_t* run_rkt = nullptr;
    int32_t run_partition = -1;
    bool run_started = false;
    for (ssize_t i = 0; i < n; ++i) {
      rd_kafka_message_t* m = batch[i];
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && m->rkt == run_rkt &&
          m->partition == run_partition) {
        if (run_started) {
          sink(RecordOf(*m));
          ++delivered;
        }
        rd_kafka_message_destroy(m);
        continue;
      }
      TopicPartition tp{m->rkt != nullptr ? rd_kafka_topic_name(m->rkt) : "", m->partition};
      if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        run_rkt = m->rkt;
        run_partition = m->partition;
        run_started = IsStarted(tp);
        if (run_started) {
          sink(RecordOf(*m));
          ++delivered;
        }
      } else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        events.push_back({PartitionEvent::Kind::kEndOfPartition, tp, m->offset, ""});
      } else if (m->err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE ||
                 m->err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET) {
        events.push_back(
            {PartitionEvent::Kind::kOutOfRange, tp, m->offset, rd_kafka_message_errstr(m)});
      } else {
        events.push_back(
            {PartitionEvent::Kind::kError, tp, m->offset,
             absl::StrCat(rd_kafka_err2str(m->err), ": ", rd_kafka_message_errstr(m))});
      }
      rd_kafka_message_destroy(m);
    }
    if (static_cast<size_t>(n) < want) break;  // queue drained
  }
  return events;
}

absl::StatusOr<std::pair<int64_t, int64_t>> KafkaReader::Watermarks(
    const TopicPartition& partition, std::chrono::milliseconds timeout) {
  int64_t low = 0, high = 0;
  rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(rk_.get(), partition.topic.c_str(), partition.partition, &low,
                                       &high, static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError(absl::StrCat("watermarks of ", partition.topic, "/", partition.partition),
                      err);
  }
  return std::make_pair(low, high);
}

absl::StatusOr<std::pair<int64_t, int64_t>> KafkaReader::CachedWatermarks(
    const TopicPartition& partition) {
  int64_t low = -1, high = -1;
  rd_kafka_resp_err_t err = rd_kafka_get_watermark_offsets(
      rk_.get(), partition.topic.c_str(), partition.partition, &low, &high);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR || high < 0) {
    return absl::NotFoundError("no cached watermarks yet");
  }
  return std::make_pair(low, high);
}

absl::StatusOr<int64_t> KafkaReader::OffsetForTime(const TopicPartition& partition, int64_t time,
                                                   std::chrono::milliseconds timeout) {
  if (time == -2 || time == -1) {
    ASSIGN_OR_RETURN(auto marks, Watermarks(partition, timeout));
    return time == -2 ? marks.first : marks.second;
  }
  PartitionListHandle list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), partition.topic.c_str(), partition.partition)
      ->offset = time;
  rd_kafka_resp_err_t err =
      rd_kafka_offsets_for_times(rk_.get(), list.get(), static_cast<int>(timeout.count()));
  int64_t offset = list->elems[0].offset;
  rd_kafka_resp_err_t part_err = list->elems[0].err;
  list.reset();
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("offsets for times", err);
  if (part_err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("offsets for times", part_err);
  if (offset < 0) {  // no record that late: the log end
    ASSIGN_OR_RETURN(auto marks, Watermarks(partition, timeout));
    return marks.second;
  }
  return offset;
}

absl::StatusOr<std::vector<TopicPartition>> KafkaReader::Partitions(
    const std::vector<std::string>& topics, std::chrono::milliseconds timeout) {
  std::vector<TopicPartition> out;
  for (const auto& topic : topics) {
    ASSIGN_OR_RETURN(rd_kafka_topic_t* rkt, OpenTopic(topic));
    const rd_kafka_metadata_t* raw = nullptr;
    rd_kafka_resp_err_t err =
        rd_kafka_metadata(rk_.get(), 0, rkt, &raw, static_cast<int>(timeout.count()));
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("metadata for " + topic, err);
    const MetadataHandle md(raw);
    absl::Status status = absl::OkStatus();
    for (int t = 0; t < md->topic_cnt; ++t) {
      const auto& mt = md->topics[t];
      if (mt.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        status = KafkaError("topic " + topic, mt.err);
        break;
      }
      for (int p = 0; p < mt.partition_cnt; ++p) out.push_back({mt.topic, mt.partitions[p].id});
    }
    RETURN_IF_ERROR(status);
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<std::vector<std::string>> KafkaReader::ListTopics(
    std::chrono::milliseconds timeout) {
  const rd_kafka_metadata_t* raw = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk_.get(), /*all_topics=*/1, nullptr, &raw,
                                              static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return KafkaError("metadata of all topics", err);
  const MetadataHandle md(raw);
  std::vector<std::string> out;
  for (int t = 0; t < md->topic_cnt; ++t) {
    if (md->topics[t].err == RD_KAFKA_RESP_ERR_NO_ERROR) out.push_back(md->topics[t].topic);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::pair<std::string, int> KafkaReader::Leader(const TopicPartition& partition,
                                                std::chrono::milliseconds timeout) {
  std::map<int, std::pair<std::string, int>> all = Leaders(partition.topic, timeout);
  auto it = all.find(partition.partition);
  return it == all.end() ? std::pair<std::string, int>{"", 0} : it->second;
}

std::map<int, std::pair<std::string, int>> KafkaReader::Leaders(const std::string& topic,
                                                                std::chrono::milliseconds timeout) {
  std::map<int, std::pair<std::string, int>> out;
  auto rkt = OpenTopic(topic);
  if (!rkt.ok()) return out;
  const rd_kafka_metadata_t* raw = nullptr;
  if (rd_kafka_metadata(rk_.get(), 0, *rkt, &raw, static_cast<int>(timeout.count())) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    return out;
  }
  const MetadataHandle md(raw);
  std::map<int32_t, std::pair<std::string, int>> brokers;
  for (int b = 0; b < md->broker_cnt; ++b) {
    brokers[md->brokers[b].id] = {md->brokers[b].host, md->brokers[b].port};
  }
  for (int t = 0; t < md->topic_cnt; ++t) {
    for (int p = 0; p < md->topics[t].partition_cnt; ++p) {
      auto b = brokers.find(md->topics[t].partitions[p].leader);
      if (b != brokers.end()) out[md->topics[t].partitions[p].id] = b->second;
    }
  }
  return out;
}

}  // namespace tempest::kafka
