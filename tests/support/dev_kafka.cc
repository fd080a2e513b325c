#include "tests/support/dev_kafka.h"

#include <librdkafka/rdkafka.h>

#include <atomic>

#include "absl/strings/str_cat.h"

namespace tempest::testing {

struct DevKafka::Producer {
  rd_kafka_t* rk = nullptr;
  ~Producer() {
    if (rk != nullptr) rd_kafka_destroy(rk);
  }
};

namespace {
struct DeliveryTally {
  std::atomic<int64_t> ok{0};
  std::atomic<int64_t> failed{0};
  std::atomic<int> first_error{0};
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* tally = static_cast<DeliveryTally*>(opaque);
  if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    tally->ok.fetch_add(1);
  } else {
    int expected = 0;
    tally->first_error.compare_exchange_strong(expected, msg->err);
    tally->failed.fetch_add(1);
  }
}
}  // namespace

absl::StatusOr<std::unique_ptr<DevKafka>> DevKafka::Start(
    int brokers, const std::vector<kafka::DevKafkaTopic>& topics) {
  auto kafka = std::unique_ptr<DevKafka>(new DevKafka());
  auto cluster = kafka::DevKafkaCluster::Create(brokers, topics);
  if (!cluster.ok()) return cluster.status();
  kafka->cluster_ = std::move(*cluster);
  kafka->producer_ = std::make_unique<Producer>();
  return kafka;
}

DevKafka::~DevKafka() = default;

absl::Status DevKafka::Produce(const std::string& topic, int partition,
                               const std::vector<Record>& records,
                               std::chrono::milliseconds timeout) {
  DeliveryTally tally;
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto set = [&](const char* k, const char* v) { rd_kafka_conf_set(conf, k, v, err, sizeof(err)); };
  set("bootstrap.servers", bootstrap_servers().c_str());
  set("linger.ms", "5");
  set("acks", "all");
  set("enable.idempotence", "true");
  set("log_level", "3");
  rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery);
  rd_kafka_conf_set_opaque(conf, &tally);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (rk == nullptr) return absl::InternalError(absl::StrCat("producer: ", err));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  absl::Status status = absl::OkStatus();
  for (const auto& r : records) {
    for (;;) {
      rd_kafka_resp_err_t rc = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_VALUE(const_cast<char*>(r.value.data()), r.value.size()),
          RD_KAFKA_V_KEY(r.key.empty() ? nullptr : const_cast<char*>(r.key.data()), r.key.size()),
          RD_KAFKA_V_END);
      if (rc == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (rc != RD_KAFKA_RESP_ERR__QUEUE_FULL || std::chrono::steady_clock::now() > deadline) {
        status = absl::UnavailableError(absl::StrCat("produce: ", rd_kafka_err2str(rc)));
        break;
      }
      rd_kafka_poll(rk, 10);  // make room by serving delivery reports
    }
    if (!status.ok()) break;
    rd_kafka_poll(rk, 0);
  }
  while (status.ok() && rd_kafka_outq_len(rk) > 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      status = absl::DeadlineExceededError("produce: delivery not confirmed in time");
      break;
    }
    rd_kafka_poll(rk, 50);
  }
  rd_kafka_destroy(rk);
  if (status.ok() && tally.failed.load() > 0) {
    status = absl::UnavailableError(absl::StrCat(
        tally.failed.load(), " records failed: ",
        rd_kafka_err2str(static_cast<rd_kafka_resp_err_t>(tally.first_error.load()))));
  }
  return status;
}

absl::StatusOr<std::pair<int64_t, int64_t>> DevKafka::Watermarks(
    const std::string& topic, int partition, std::chrono::milliseconds timeout) {
  char err[512];
  if (producer_->rk == nullptr) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap_servers().c_str(), err, sizeof(err));
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
    producer_->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (producer_->rk == nullptr) return absl::InternalError(absl::StrCat("client: ", err));
  }
  int64_t low = 0, high = 0;
  rd_kafka_resp_err_t rc = rd_kafka_query_watermark_offsets(
      producer_->rk, topic.c_str(), partition, &low, &high, static_cast<int>(timeout.count()));
  if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::UnavailableError(absl::StrCat("watermarks: ", rd_kafka_err2str(rc)));
  }
  return std::make_pair(low, high);
}

}  // namespace tempest::testing
