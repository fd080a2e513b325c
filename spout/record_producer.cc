#include "spout/record_producer.h"

#include <librdkafka/rdkafka.h>

#include "absl/strings/str_cat.h"

namespace tempest::spout {

absl::StatusOr<std::unique_ptr<RecordProducer>> RecordProducer::Create(
    const std::string& bootstrap_servers) {
  auto producer = std::unique_ptr<RecordProducer>(new RecordProducer());
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  const std::pair<const char*, std::string> settings[] = {
      {"bootstrap.servers", bootstrap_servers},
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"linger.ms", "2"},
      // Long enough to ride out a broker outage of a study scenario.
      {"message.timeout.ms", "120000"},
      // Connection errors during a broker outage are expected and retried;
      // a record that still fails is reported by Flush.
      {"log_level", "2"},
  };
  for (const auto& [key, value] : settings) {
    if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return absl::InvalidArgumentError(absl::StrCat("producer setting ", key, ": ", err));
    }
  }
  rd_kafka_conf_set_dr_msg_cb(conf, &RecordProducer::OnDelivery);
  rd_kafka_conf_set_opaque(conf, producer.get());
  producer->rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  if (producer->rk_ == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create a Kafka producer: ", err));
  }
  return producer;
}

RecordProducer::~RecordProducer() {
  if (rk_ != nullptr) {
    rd_kafka_flush(rk_, 2000);
    rd_kafka_destroy(rk_);
  }
}

void RecordProducer::OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* self = static_cast<RecordProducer*>(opaque);
  if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++self->delivered_;
    ++self->delivered_by_partition_[{rd_kafka_topic_name(msg->rkt), msg->partition}];
  } else {
    ++self->failed_;
    if (self->first_error_.empty()) self->first_error_ = rd_kafka_err2str(msg->err);
  }
}

absl::Status RecordProducer::Send(const std::string& topic, int partition, std::string_view key,
                                  std::string_view value, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    rd_kafka_resp_err_t rc = rd_kafka_producev(
        rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_KEY(key.empty() ? nullptr : const_cast<char*>(key.data()), key.size()),
        RD_KAFKA_V_END);
    if (rc == RD_KAFKA_RESP_ERR_NO_ERROR) return absl::OkStatus();
    if (rc != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return absl::UnavailableError(absl::StrCat("produce to ", topic, ": ", rd_kafka_err2str(rc)));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("produce to ", topic, ": the local queue stayed full for ",
                       timeout.count(), " ms"));
    }
    rd_kafka_poll(rk_, 10);  // delivery reports make room
  }
}

void RecordProducer::Poll() { rd_kafka_poll(rk_, 0); }

absl::Status RecordProducer::Flush(std::chrono::milliseconds timeout) {
  const rd_kafka_resp_err_t rc = rd_kafka_flush(rk_, static_cast<int>(timeout.count()));
  if (rc != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return absl::DeadlineExceededError(absl::StrCat(
        rd_kafka_outq_len(rk_), " records still undelivered after ", timeout.count(), " ms"));
  }
  if (failed_ > 0) {
    return absl::UnavailableError(
        absl::StrCat(failed_, " records failed delivery; first error: ", first_error_));
  }
  return absl::OkStatus();
}

int64_t RecordProducer::DeliveredTo(const std::string& topic, int partition) const {
  auto it = delivered_by_partition_.find({topic, partition});
  return it == delivered_by_partition_.end() ? 0 : it->second;
}

}  // namespace tempest::spout
