#include "common/kafka/producer.h"

#include <librdkafka/rdkafka.h>

#include "absl/container/inlined_vector.h"
#include "common/core/status_macros.h"
#include "common/kafka/conf.h"

namespace tempest::kafka {
namespace {

absl::Status ProduceError(rd_kafka_resp_err_t err) {
  const char* text = rd_kafka_err2str(err);
  switch (err) {
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
      return absl::ResourceExhaustedError(text);
    case RD_KAFKA_RESP_ERR__FATAL:
      return absl::FailedPreconditionError(text);
    default:
      return absl::UnavailableError(text);
  }
}

}  // namespace

Producer::Producer(DeliveryCallback on_delivery) : on_delivery_(std::move(on_delivery)) {}

Producer::~Producer() {
  topics_.clear();  // before the client they belong to
  client_.reset();
}

absl::StatusOr<std::unique_ptr<Producer>> Producer::Create(ConfHandle conf,
                                                           DeliveryCallback on_delivery) {
  auto producer = std::unique_ptr<Producer>(new Producer(std::move(on_delivery)));
  rd_kafka_conf_set_dr_msg_cb(conf.get(), &Producer::OnDeliveryReport);
  rd_kafka_conf_set_opaque(conf.get(), producer.get());
  ASSIGN_OR_RETURN(producer->client_, NewClient(ClientType::kProducer, std::move(conf)));
  return producer;
}

void Producer::OnDeliveryReport(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* self = static_cast<Producer*>(opaque);
  if (self == nullptr || message == nullptr || !self->on_delivery_) return;
  Delivery delivery;
  delivery.ok = message->err == RD_KAFKA_RESP_ERR_NO_ERROR;
  if (!delivery.ok) delivery.error = rd_kafka_err2str(message->err);
  if (message->rkt != nullptr) delivery.topic = rd_kafka_topic_name(message->rkt);
  delivery.partition = message->partition;
  delivery.offset = message->offset;
  delivery.opaque = message->_private;
  self->on_delivery_(delivery);
}

absl::StatusOr<rd_kafka_topic_t*> Producer::Topic(std::string_view topic) {
  auto it = topics_.find(absl::string_view(topic.data(), topic.size()));
  if (it != topics_.end()) return it->second.get();
  const std::string name(topic);
  TopicHandle handle(rd_kafka_topic_new(client_.get(), name.c_str(), nullptr));
  if (handle == nullptr) return ProduceError(rd_kafka_last_error());
  rd_kafka_topic_t* raw = handle.get();
  topics_.emplace(name, std::move(handle));
  return raw;
}

absl::Status Producer::OpenTopic(const std::string& topic) { return Topic(topic).status(); }

absl::Status Producer::Produce(const OutgoingRecord& record) {
  ASSIGN_OR_RETURN(rd_kafka_topic_t* topic, Topic(record.topic));
  // At most topic, partition, flags, key, value, opaque and the headers.
  absl::InlinedVector<rd_kafka_vu_t, 10> fields(6 + record.headers.size());
  size_t n = 0;
  fields[n].vtype = RD_KAFKA_VTYPE_RKT;
  fields[n++].u.rkt = topic;
  fields[n].vtype = RD_KAFKA_VTYPE_PARTITION;
  fields[n++].u.i32 = record.partition;
  fields[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
  fields[n++].u.i = RD_KAFKA_MSG_F_COPY;
  if (record.key) {
    fields[n].vtype = RD_KAFKA_VTYPE_KEY;
    fields[n].u.mem.ptr = const_cast<char*>(record.key->data());
    fields[n++].u.mem.size = record.key->size();
  }
  if (record.value) {
    fields[n].vtype = RD_KAFKA_VTYPE_VALUE;
    fields[n].u.mem.ptr = const_cast<char*>(record.value->data());
    fields[n++].u.mem.size = record.value->size();
  }
  fields[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
  fields[n++].u.ptr = record.opaque;
  for (const auto& [name, value] : record.headers) {
    fields[n].vtype = RD_KAFKA_VTYPE_HEADER;
    fields[n].u.header.name = name;
    fields[n].u.header.val = value.data();
    fields[n++].u.header.size = static_cast<ssize_t>(value.size());
  }
  rd_kafka_error_t* error = rd_kafka_produceva(client_.get(), fields.data(), n);
  if (error != nullptr) {
    const rd_kafka_resp_err_t err = rd_kafka_error_code(error);
    rd_kafka_error_destroy(error);
    return ProduceError(err);
  }
  return absl::OkStatus();
}

int Producer::Poll(std::chrono::milliseconds timeout) {
  return rd_kafka_poll(client_.get(), static_cast<int>(timeout.count()));
}

bool Producer::Flush(std::chrono::milliseconds timeout) {
  return rd_kafka_flush(client_.get(), static_cast<int>(timeout.count())) ==
         RD_KAFKA_RESP_ERR_NO_ERROR;
}

void Producer::Purge() {
  rd_kafka_purge(client_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
}

int Producer::OutstandingRecords() const { return rd_kafka_outq_len(client_.get()); }

std::string Producer::FatalError() const {
  char err[512] = "";
  if (rd_kafka_fatal_error(client_.get(), err, sizeof(err)) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    return "";
  }
  return err;
}

}  // namespace tempest::kafka
